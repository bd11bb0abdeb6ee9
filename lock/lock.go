// Package lock is memsync's one lock protocol.
//
// Every memory home has one lock file: "<resolved memory file>.lock", i.e.
// the path of the real memories.md (symlinks resolved) with ".lock" appended.
// Writers take an exclusive flock(2) on it and record their pid over its
// first bytes (never truncating it); readers take a shared flock. Waits are
// bounded: a waiter blocks in flock(2), so it wakes as soon as the lock is
// let go, in the order the waiters came (the kernel queues them), and gives
// up at its deadline. The lock file is never deleted, so two processes can never lock
// two different inodes of one name. The path given must be resolved: a
// symlink at it is refused (O_NOFOLLOW), never written through; the caller
// (store.Store.LockPath) follows a lock symlink that stays in the memory
// home and refuses one that leaves it.
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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/memsync/memsync/internal/fsutil"
)

// DefaultTimeout bounds how long a command waits for the lock.
const DefaultTimeout = 10 * time.Second

// ErrTimeout is wrapped by every TimeoutError.
var ErrTimeout = errors.New("lock wait timed out")

// TimeoutError says which lock could not be had, for how long we waited and
// which process held it, when that is known (see holder).
type TimeoutError struct {
	Path   string
	Waited time.Duration
	PID    int // 0 when unknown
}

func (e *TimeoutError) Error() string {
	holder := "another process"
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
// (DefaultTimeout if timeout <= 0) and no longer than ctx lives, and records
// this process's pid in it.
func Exclusive(ctx context.Context, path string, timeout time.Duration) (*Lock, error) {
	l, err := acquire(ctx, path, timeout, false)
	if err != nil {
		return nil, err
	}
	// Record the holder for the timeout message of whoever waits next: over
	// the file's first bytes, padded to a fixed width, so the file is never
	// truncated (it may be another tool's lock file too).
	if f, err := os.OpenFile(path, os.O_WRONLY|fsutil.NoFollow, 0); err == nil {
		if fi, err := f.Stat(); err == nil {
			if held, err := l.fl.Stat(); err == nil && os.SameFile(fi, held) {
				_, _ = f.WriteAt([]byte(fmt.Sprintf("%-*d\n", pidWidth, os.Getpid())), 0)
			}
		}
		_ = f.Close()
	}
	return l, nil
}

// pidWidth is the width the pid is padded to in the lock file.
const pidWidth = 10

// TryExclusive takes the writers' lock on path when it is free at once,
// without recording the pid; nil (and no error) when another process
// holds it.
func TryExclusive(path string) (*Lock, error) {
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR|fsutil.NoFollow), flock.SetPermissions(0o644))
	if ok, err := fl.TryLock(); !ok || err != nil {
		_ = fl.Close()
		return nil, err
	}
	return &Lock{fl: fl, path: path}, nil
}

// Shared takes the readers' lock on path, as Exclusive waits. Readers
// exclude writers, not each other.
func Shared(ctx context.Context, path string, timeout time.Duration) (*Lock, error) {
	return acquire(ctx, path, timeout, true)
}

func acquire(parent context.Context, path string, timeout time.Duration, shared bool) (*Lock, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if err := parent.Err(); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	start := time.Now()
	var err error
	for {
		var fl *flock.Flock
		if fl, err = take(ctx, path, shared); err != nil {
			break
		}
		// The lock file may have been replaced while this process waited
		// (memsync moves a lock into the git dir, keeping its inode): a lock
		// on a file no longer at path excludes nobody, so take the new one.
		held, herr := fl.Stat()
		now, nerr := os.Lstat(path)
		if herr != nil || nerr != nil || os.SameFile(held, now) {
			return &Lock{fl: fl, path: path}, nil
		}
		_ = fl.Unlock()
	}
	if perr := parent.Err(); perr != nil { // the caller gave up, not the timeout
		return nil, fmt.Errorf("lock %s: %w", path, perr)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return nil, &TimeoutError{Path: path, Waited: time.Since(start), PID: holder(path)}
}

// take locks path: at once when the lock is free, else by a wait that
// blocks in flock(2) until the lock is had or ctx is done (ctx.Err()).
func take(ctx context.Context, path string, shared bool) (*flock.Flock, error) {
	key := waitKey{path, shared}
	waitsMu.Lock()
	w := orphans[key]
	if w != nil {
		delete(orphans, key)
		w.owned = true
	}
	waitsMu.Unlock()
	if w == nil {
		fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR|fsutil.NoFollow), flock.SetPermissions(0o644))
		try := fl.TryLock
		if shared {
			try = fl.TryRLock
		}
		if ok, err := try(); ok || err != nil {
			return fl, err
		}
		w = &wait{key: key, fl: fl, owned: true, done: make(chan struct{})}
		go w.block()
	}
	select {
	case <-w.done:
		return w.fl, w.err
	case <-ctx.Done():
	}
	waitsMu.Lock()
	defer waitsMu.Unlock()
	select {
	case <-w.done: // had just as the caller gave up: it is the caller's
		return w.fl, w.err
	default:
	}
	w.owned = false
	if orphans[key] == nil {
		orphans[key] = w
	}
	return nil, ctx.Err()
}

// A wait is one blocking flock(2) on a file of its own. flock cannot be
// interrupted, so it runs on a goroutine while its caller waits for it or
// for the caller's context, whichever ends first. A wait whose caller gave
// up stays as an orphan, which the next caller for the same path and mode
// takes over: waits that time out leave at most one blocked goroutine and
// one open file per lock behind, however many there are. An orphan that gets
// the lock lets it go at once and closes its file.
type wait struct {
	key   waitKey
	fl    *flock.Flock
	done  chan struct{} // closed once flock returned, with err set
	err   error
	owned bool // a caller waits for it; guarded by waitsMu
}

// waitKey names the lock a wait is for.
type waitKey struct {
	path   string
	shared bool
}

var (
	waitsMu sync.Mutex
	orphans = map[waitKey]*wait{} // at most one per lock; guarded by waitsMu
)

// block takes the lock, waiting as long as it takes, and hands it to the
// caller waiting for it, if any; else lets it go at once.
func (w *wait) block() {
	lock := w.fl.Lock
	if w.key.shared {
		lock = w.fl.RLock
	}
	err := lock()
	waitsMu.Lock()
	defer waitsMu.Unlock()
	w.err = err
	close(w.done)
	if !w.owned {
		if orphans[w.key] == w {
			delete(orphans, w.key)
		}
		_ = w.fl.Unlock() // closes the file too, also after an error
	}
}

// holder names the process that holds the lock on path, 0 when that is not
// known. The pid the lock file records is only a hint (the lock may since have
// passed to flock(1) or another tool that records nothing): where the system
// lists its locks (/proc/locks), a pid is named only when it is alive and
// holds a lock on this file, the recorded one first; elsewhere the recorded
// pid is named when that process is alive.
func holder(path string) int {
	recorded := recordedPID(path)
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	holders, ok := lockHolders(fi)
	if !ok {
		if fsutil.ProcessAlive(recorded) {
			return recorded
		}
		return 0
	}
	if slices.Contains(holders, recorded) && fsutil.ProcessAlive(recorded) {
		return recorded
	}
	for _, pid := range holders {
		if fsutil.ProcessAlive(pid) {
			return pid
		}
	}
	return 0
}

// recordedPID reads the pid on the lock file's first line, 0 if none.
func recordedPID(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	b := make([]byte, 64)
	n, _ := f.Read(b)
	first, _, _ := strings.Cut(string(b[:n]), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
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
