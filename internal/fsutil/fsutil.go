// Package fsutil holds the one atomic file write of memsync: write a temp file
// in the target's folder, fsync it, rename it onto the target, fsync the folder.
//
// A temp file is named ".<target name>.tmp-<pid>-<random>" after the process
// writing it, so that one left by a killed write can be told from one being
// written (StaleTemps). It also holds the one bounded read (ReadFile) of
// files anything may have put in memsync's way.
package fsutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The steps of a write whose effect a test cannot see from outside; tests
// replace them to simulate a crash between the temp file and the rename, and
// to check that every fsync is made and its error returned.
var (
	rename   = os.Rename
	syncFile = (*os.File).Sync
	// An append's write and the truncate that undoes a failed one: tests
	// replace them to fail an append part-way (a short write, a full disk)
	// and its undo.
	writeAppend  = (*os.File).Write
	truncateFile = (*os.File).Truncate
)

// WriteFile atomically replaces path with data, durably: the data and the
// rename are on disk when it returns. path must already be resolved (not a
// symlink): the rename replaces whatever name it is given. perm is used
// when the file is new; an existing file keeps its mode.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return writeFile(path, data, perm, true)
}

// WriteCache is WriteFile for a file that is only a cache, one that is
// checked when read and rebuilt when wrong: the replacement is atomic (a
// reader sees the old file or the new one) but not synced, so a crash may
// lose it or leave it short, never torn into another file's bytes.
func WriteCache(path string, data []byte, perm os.FileMode) error {
	return writeFile(path, data, perm, false)
}

func writeFile(path string, data []byte, perm os.FileMode, durable bool) error {
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+tempMark+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if durable {
		if err := syncFile(tmp); err != nil {
			return fmt.Errorf("fsync %s: %w", name, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := rename(name, path); err != nil {
		return err
	}
	ok = true
	if !durable {
		return nil
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a folder so a rename or a new file in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	if err := syncFile(d); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// tempMark is what every temp file name holds, after the target's name.
const tempMark = ".tmp-"

// OldTempAge is how old a temp file without a pid in its name (written by an
// older memsync) must be before StaleTemps counts it as left behind.
const OldTempAge = time.Hour

// StaleTemps lists the temp files WriteFile left in dir when a write was
// killed before its rename: those whose writer (the pid in the name) is no
// longer alive, and those without a pid older than OldTempAge. A temp file
// of a live writer is never listed. A pid taken over by an unrelated process
// only keeps a stale file a while longer.
func StaleTemps(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		i := strings.LastIndex(name, tempMark)
		if !strings.HasPrefix(name, ".") || i < 0 || !e.Type().IsRegular() {
			continue
		}
		pidText, _, withPid := strings.Cut(name[i+len(tempMark):], "-")
		pid, err := strconv.Atoi(pidText)
		switch {
		case withPid && err == nil:
			if ProcessAlive(pid) {
				continue
			}
		default:
			fi, err := e.Info()
			if err != nil || time.Since(fi.ModTime()) < OldTempAge {
				continue
			}
		}
		out = append(out, filepath.Join(dir, name))
	}
	return out, nil
}

// ProcessAlive tells whether a process with this pid exists.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return processAlive(pid)
}

// OpenAppend opens path for Append: read-write, created with exactly perm
// when missing (see OpenFile), in O_APPEND mode, so that every write lands at
// the end of the file even when another process (one that takes no lock)
// wrote since. path must be resolved: a symlink there is refused
// (O_NOFOLLOW), never written through.
func OpenAppend(path string, perm os.FileMode) (*os.File, error) {
	return OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, perm)
}

// Append adds data at the end of f, opened by OpenAppend, in one write, and
// fsyncs f. It is all or nothing: when the write fails part-way (a full disk,
// an I/O error, a short write) or the fsync fails, f is truncated back to the
// size it had before, so no cut-off entry stays and a retry adds one copy.
// The error is then an *AppendError. The caller holds the file's lock: a
// writer that takes none and appends meanwhile is never cut off (the undo is
// refused, and the error says where the torn bytes are).
func Append(f *os.File, data []byte) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("append to %s: %w", f.Name(), err)
	}
	start := fi.Size()
	n, err := writeAppend(f, data)
	if err == nil && n < len(data) {
		err = io.ErrShortWrite
	}
	if err == nil {
		if err = syncFile(f); err != nil {
			err = fmt.Errorf("fsync: %w", err)
		}
	}
	if err == nil {
		return nil
	}
	return &AppendError{Path: f.Name(), Size: start, Err: err, Undo: undoAppend(f, start, int64(n))}
}

// undoAppend cuts off the n bytes a failed append wrote at the end of f,
// whose size was start before it, and fsyncs f.
func undoAppend(f *os.File, start, n int64) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	switch {
	case fi.Size() == start:
		return nil // nothing landed
	case fi.Size() != start+n:
		return fmt.Errorf("the file is %d bytes, not the %d this append left: another writer appended meanwhile, and its bytes are kept", fi.Size(), start+n)
	}
	if err := truncateFile(f, start); err != nil {
		return err
	}
	// Readers see the old size from here on; the fsync makes a crash keep
	// it too, where it can (when fsync fails, the append's own error says
	// enough).
	_ = syncFile(f)
	return nil
}

// AppendError is Append's error when the append failed: what failed, and
// whether the file is back to its size before the append (Undo is nil) or
// holds the cut-off bytes from Size on.
type AppendError struct {
	Path string // the file appended to
	Size int64  // its size before the append, where it is cut back to
	Err  error  // what failed: the write (io.ErrShortWrite for a short one) or the fsync
	Undo error  // nil when the file is back to Size, else why it is not
}

func (e *AppendError) Error() string {
	what := e.Err.Error()
	if DiskFull(e.Err) {
		what = "disk full (" + what + ")"
	}
	if e.Undo == nil {
		return fmt.Sprintf("append to %s failed: %s; nothing was written (the file is back to its %d bytes)", e.Path, what, e.Size)
	}
	return fmt.Sprintf("append to %s failed: %s, and cutting off what it wrote failed too (%v): the file holds a torn entry from byte %d on; 'memsync doctor --fix' removes it, or: truncate -s %d %s",
		e.Path, what, e.Undo, e.Size, e.Size, e.Path)
}

// Unwrap returns what failed, so errors.Is(err, syscall.ENOSPC) works.
func (e *AppendError) Unwrap() error { return e.Err }

// DiskFull tells whether err is a full disk or an exhausted quota.
func DiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
