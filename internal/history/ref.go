package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/lock"
)

// updateRef moves Ref from old (zero: the ref must not exist yet) to commit;
// the caller holds the writers' lock. It follows git's own protocol for a
// loose ref, as `git update-ref REF NEW OLD` does, without the cost of a git
// process on every commit: create REF.lock exclusively (git and memsync
// exclude each other through it), check that the ref still holds old, write
// the new value into the lock file and rename it over the ref. A reader
// sees the old value or the new one, never a missing or partial ref. A
// repository whose refs are not files (the reftable format) is left to git
// itself. It does not look at a context: once begun, an update runs to its
// end (a few small writes), so that it never leaves the lock file behind;
// callers check their context before.
func (h *History) updateRef(commit, old plumbing.Hash) error {
	common := h.Repo.CommonDir
	if _, err := os.Stat(filepath.Join(common, "reftable")); err == nil {
		return h.gitUpdateRef(commit, old)
	}
	path := filepath.Join(common, filepath.FromSlash(Ref))
	if err := fsutil.MkdirAll(filepath.Dir(path), h.Repo.Shared.Dir(0o777)); err != nil {
		return fmt.Errorf("update %s: %w", Ref, err)
	}
	lockPath := path + ".lock"
	f, err := createRefLock(lockPath, h.Repo.Shared.File(0o666))
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("update %s: %s exists: another git process is updating the ref (if none is running, a killed one left it: 'memsync doctor --fix' removes it)", Ref, lockPath)
	}
	if err != nil {
		return fmt.Errorf("update %s: %w", Ref, err)
	}
	done := false
	defer func() {
		if !done {
			_ = f.Close()
			_ = os.Remove(lockPath)
		}
	}()
	cur, err := h.head()
	if err != nil {
		return err
	}
	if cur != old {
		return fmt.Errorf("update %s: it moved to %s while memsync expected %s", Ref, cur, old)
	}
	if _, err := f.WriteString(commit.String() + "\n"); err != nil {
		return fmt.Errorf("update %s: %w", Ref, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("update %s: %w", Ref, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("update %s: %w", Ref, err)
	}
	if err := os.Rename(lockPath, path); err != nil {
		return fmt.Errorf("update %s: %w", Ref, err)
	}
	done = true
	return nil
}

// StaleRefLockAge is the age past which the ref's lock file, found while
// memsync's writers' lock is held, is one a killed process left: memsync
// updates the ref only under that lock, and git holds a ref's lock for the
// moment of one update (git itself waits at most 100 ms for one,
// core.filesRefLockTimeout).
const StaleRefLockAge = 2 * time.Second

// refLockWait bounds how long updateRef waits for a fresh lock file of the
// ref to go (a variable only as a seam for tests).
var refLockWait = StaleRefLockAge + time.Second

// createRefLock creates the ref's lock file exclusively; the caller holds
// the writers' lock. A lock file another process holds is waited for; one
// older than StaleRefLockAge was left by a killed snapshot, sync or git and
// is removed, so a killed writer never blocks the next snapshot. It returns
// an error satisfying fs.ErrExist when the lock stays held.
func createRefLock(lockPath string, perm os.FileMode) (*os.File, error) {
	deadline := time.Now().Add(refLockWait)
	for {
		f, err := fsutil.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
		if refLockStale(lockPath) {
			if rerr := os.Remove(lockPath); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				return nil, rerr
			}
			continue
		}
		if time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// refLockStale tells whether the ref's lock file at path is older than
// StaleRefLockAge, so a killed process left it (see StaleRefLockAge).
func refLockStale(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && time.Since(fi.ModTime()) >= StaleRefLockAge
}

// StaleRefLock returns the path of the ref's lock file when a killed process
// left it ("" when there is none, or it may be in use), and removes it when
// remove is set. It takes the writers' lock (waiting at most the store's
// LockTimeout; a busy memory is reported as no stale lock) and creates
// nothing when there is no lock file.
func (h *History) StaleRefLock(remove bool) (string, error) {
	path := filepath.Join(h.Repo.CommonDir, filepath.FromSlash(Ref)) + ".lock"
	if _, err := os.Lstat(path); err != nil {
		return "", nil
	}
	if _, err := os.Stat(h.Store.Home); err != nil {
		return "", nil // no memory here, so no memsync snapshot is under way
	}
	stale := ""
	err := h.Store.WithLock(func() error {
		if !refLockStale(path) {
			return nil
		}
		stale = path
		if remove {
			return os.Remove(path)
		}
		return nil
	})
	if errors.Is(err, lock.ErrTimeout) {
		return "", nil // a writer is at work; its snapshot may hold the lock
	}
	return stale, err
}

// gitUpdateRef is updateRef done by `git update-ref REF NEW OLD`.
func (h *History) gitUpdateRef(commit, old plumbing.Hash) error {
	oldArg := old.String()
	if old.IsZero() {
		oldArg = strings.Repeat("0", len(oldArg))
	}
	if _, err := gitcmd.Output(h.Repo.CommonDir, "--git-dir="+h.Repo.CommonDir, "update-ref", Ref, commit.String(), oldArg); err != nil {
		return fmt.Errorf("update %s: %w", Ref, err)
	}
	return nil
}
