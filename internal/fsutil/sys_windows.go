package fsutil

import (
	"errors"
	"os"
)

// Native Windows is not supported (cmd/memsync says so and stops): these let
// the packages build there, nothing more. sys_unix.go has the real ones.

// NoFollow is no flag: Windows has no O_NOFOLLOW.
const NoFollow = 0

// processAlive tells whether a process with this pid exists.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}

// readUmask is 0: Windows has no umask.
func readUmask() int { return 0 }

// LockExclusive is not supported here.
func LockExclusive(*os.File) error { return errors.ErrUnsupported }

// FileID is not known here.
func FileID(os.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }

// Owner is not known here.
func Owner(os.FileInfo) (uid int, ok bool) { return 0, false }
