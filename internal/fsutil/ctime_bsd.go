//go:build darwin || freebsd || netbsd

package fsutil

import (
	"os"
	"syscall"
)

// ChangeTime is the status change time (ctime) of fi in nanoseconds since
// the epoch; false when the system gives none (see ctime_linux.go).
func ChangeTime(fi os.FileInfo) (int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Ctimespec.Nano(), true
}
