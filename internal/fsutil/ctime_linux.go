package fsutil

import (
	"os"
	"syscall"
)

// ChangeTime is the status change time (ctime) of fi in nanoseconds since
// the epoch; false when the system gives none. A change of mode, owner or
// links, or a write that keeps size and mtime, moves it.
func ChangeTime(fi os.FileInfo) (int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Ctim.Nano(), true
}
