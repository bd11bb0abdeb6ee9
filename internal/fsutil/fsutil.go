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
)

// WriteFile atomically replaces path with data. path must already be resolved
// (not a symlink): the rename replaces whatever name it is given. perm is used
// when the file is new; an existing file keeps its mode.
func WriteFile(path string, data []byte, perm os.FileMode) error {
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
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("fsync %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := rename(name, path); err != nil {
		return err
	}
	ok = true
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
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// OpenAppend opens path for Append: read-write, created with perm when
// missing, in O_APPEND mode, so that every write lands at the end of the file
// even when another process (one that takes no lock) wrote since. path must
// be resolved: a symlink there is refused (O_NOFOLLOW), never written through.
func OpenAppend(path string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, perm)
}

// Append adds data at the end of f, opened by OpenAppend, in one write, and
// fsyncs f.
func Append(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("append to %s: %w", f.Name(), err)
	}
	if err := syncFile(f); err != nil {
		return fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	return nil
}
