//go:build unix

package fsutil

import (
	"errors"
	"os"
	"syscall"
)

// The system calls of this package that differ between systems, on Unix;
// sys_windows.go has the other side.

// NoFollow is the open flag that refuses a symlink as the last element of a
// path (O_NOFOLLOW: the open fails with ELOOP).
const NoFollow = syscall.O_NOFOLLOW

// processAlive tells whether a process with this pid exists (signal 0).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// readUmask reads the process's umask (the only way to read it sets it).
func readUmask() int {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return m
}

// LockExclusive waits for an exclusive flock(2) on f; closing f lets it go.
func LockExclusive(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
}

// FileID is the device and inode of fi; false when fi has no stat.
func FileID(fi os.FileInfo) (dev, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), st.Ino, true //nolint:unconvert // Dev is not uint64 on every system
}

// Owner is the user ID owning fi; false when fi has no stat.
func Owner(fi os.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
