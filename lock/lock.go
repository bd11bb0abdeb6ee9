// Package lock is memsync's one lock protocol.
//
// Every memory home has one lock file: "<resolved memory file>.lock", i.e.
// the path of the real memories.md (symlinks resolved) with ".lock" appended.
// Writers take an exclusive flock(2) on it and record their pid in it;
// readers take a shared flock. Waits are bounded. The lock file is never
// deleted, so two processes can never lock two different inodes of one name.
//
// Another tool can take part with flock(1):
//
//	flock -w 10 .agent/memories.md.lock sh -c 'printf ... >> .agent/memories.md'
package lock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// DefaultTimeout bounds how long a command waits for the lock.
const DefaultTimeout = 10 * time.Second

// retryDelay is the polling interval while the lock is held by someone else.
const retryDelay = 2 * time.Millisecond

// ErrTimeout is wrapped by every TimeoutError.
var ErrTimeout = errors.New("lock wait timed out")

// TimeoutError says which lock could not be had, for how long we waited and
// which process (as recorded in the lock file) held it.
type TimeoutError struct {
	Path   string
	Waited time.Duration
	PID    int // 0 when unknown
}

func (e *TimeoutError) Error() string {
	holder := "an unknown process"
	if e.PID > 0 {
		holder = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("timed out after %s waiting for lock %s (held by %s)", e.Waited.Round(time.Millisecond), e.Path, holder)
}

// Unwrap makes errors.Is(err, ErrTimeout) work.
func (e *TimeoutError) Unwrap() error { return ErrTimeout }

// Lock is a held lock; Release it when done.
type Lock struct {
	fl   *flock.Flock
	path string
}

// PathFor returns the lock file of a resolved memory file.
func PathFor(resolvedTarget string) string { return resolvedTarget + ".lock" }

// Exclusive takes the writers' lock on path, waiting at most timeout
// (DefaultTimeout if timeout <= 0), and records this process's pid in it.
func Exclusive(path string, timeout time.Duration) (*Lock, error) {
	l, err := acquire(path, timeout, false)
	if err != nil {
		return nil, err
	}
	// Record the holder for the timeout message of whoever waits next.
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0); err == nil {
		_, _ = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
		_ = f.Close()
	}
	return l, nil
}

// Shared takes the readers' lock on path. Readers exclude writers, not each
// other.
func Shared(path string, timeout time.Duration) (*Lock, error) {
	return acquire(path, timeout, true)
}

func acquire(path string, timeout time.Duration, shared bool) (*Lock, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o644))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	var ok bool
	var err error
	if shared {
		ok, err = fl.TryRLockContext(ctx, retryDelay)
	} else {
		ok, err = fl.TryLockContext(ctx, retryDelay)
	}
	if ok {
		return &Lock{fl: fl, path: path}, nil
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return nil, &TimeoutError{Path: path, Waited: time.Since(start), PID: holder(path)}
}

// holder reads the pid recorded in the lock file, 0 if none.
func holder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}

// Path is the lock file's path.
func (l *Lock) Path() string { return l.path }

// Release lets the lock go. It is safe to call more than once.
func (l *Lock) Release() error {
	if l == nil || l.fl == nil {
		return nil
	}
	err := l.fl.Unlock()
	_ = l.fl.Close()
	l.fl = nil
	return err
}
