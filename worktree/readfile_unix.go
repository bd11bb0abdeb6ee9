//go:build unix

package worktree

import (
	"io/fs"
	"syscall"
)

// readSmallFile reads a whole (small) file like os.ReadFile, with fewer
// system calls: os.File sets up non-blocking I/O and the poller for every
// file, which costs more than the read itself for the few dozen bytes of a
// .git file, commondir or config. Discovery runs on every command.
func readSmallFile(path string) ([]byte, error) {
	var (
		fd  int
		err error
	)
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}
