//go:build unix

package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// watchSyncs replaces syncFile for the test: every fsync is recorded (the
// file's name) and made for real, unless fail says to return an error
// instead. The steps slice also gets the renames, so their order shows.
func watchSyncs(t *testing.T, fail func(name string) bool) *[]string {
	t.Helper()
	var steps []string
	syncFile = func(f *os.File) error {
		steps = append(steps, "sync "+f.Name())
		if fail != nil && fail(f.Name()) {
			return errors.New("injected fsync failure")
		}
		return f.Sync()
	}
	rename = func(from, to string) error {
		steps = append(steps, "rename "+from)
		return os.Rename(from, to)
	}
	t.Cleanup(func() { syncFile, rename = (*os.File).Sync, os.Rename })
	return &steps
}

// WriteFile fsyncs the temp file before the rename and the folder after it.
func TestWriteFileSyncsFileThenFolder(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	steps := watchSyncs(t, nil)
	if err := WriteFile(p, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := *steps
	if len(s) != 3 || !strings.HasPrefix(s[0], "sync "+filepath.Join(dir, ".f.tmp-")) ||
		s[1] != "rename "+strings.TrimPrefix(s[0], "sync ") || s[2] != "sync "+dir {
		t.Fatalf("want fsync of the temp file, rename, fsync of the folder; got %q", s)
	}
}

// WriteCache replaces the file by a rename, as WriteFile does, keeping an
// existing file's mode, but syncs nothing: a cache is checked when read.
func TestWriteCacheRenamesWithoutSyncs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := watchSyncs(t, nil)
	if err := WriteCache(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := *steps; len(s) != 1 || !strings.HasPrefix(s[0], "rename "+filepath.Join(dir, ".c.tmp-")) {
		t.Fatalf("want one rename of a temp file and no fsync; got %q", s)
	}
	fi, err := os.Stat(p)
	if b, _ := os.ReadFile(p); err != nil || string(b) != "new" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("after WriteCache: %q, mode %v (%v); want new, 0600", b, fi.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temp files left behind: %v", ents)
	}
}

// A failed fsync of the temp file stops the write: the old content stays,
// no temp file is left. A failed fsync of the folder is returned.
func TestWriteFileReturnsSyncErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	watchSyncs(t, func(name string) bool { return name != dir })
	if err := WriteFile(p, []byte("new"), 0o644); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("fsync of the temp file failed, WriteFile returned %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("content %q after a failed fsync, want old", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temp files left behind: %v", ents)
	}

	watchSyncs(t, func(name string) bool { return name == dir })
	if err := WriteFile(p, []byte("new"), 0o644); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("fsync of the folder failed, WriteFile returned %v", err)
	}
	if err := SyncDir(dir); err == nil {
		t.Fatal("SyncDir hid a failed fsync")
	}
}

// OpenAppend opens in O_APPEND mode (so a writer that took no lock is never
// overwritten: a WriteAt at a size read earlier would be), and two handles
// opened at the same size both land at the end. Append fsyncs the file and
// returns a failed fsync.
func TestAppendIsOAppendAndSynced(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	a, err := OpenAppend(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Close() }()
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, a.Fd(), syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	if flags&syscall.O_APPEND == 0 {
		t.Fatalf("OpenAppend's file is not in O_APPEND mode (flags %#o)", flags)
	}
	b, err := OpenAppend(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()

	steps := watchSyncs(t, nil)
	if err := Append(a, []byte("first\n")); err != nil {
		t.Fatal(err)
	}
	if err := Append(b, []byte("second\n")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "first\nsecond\n" {
		t.Fatalf("content %q: an append overwrote the other", got)
	}
	if s := *steps; len(s) != 2 || s[0] != "sync "+p || s[1] != "sync "+p {
		t.Fatalf("want one fsync per append, got %q", s)
	}

	watchSyncs(t, func(string) bool { return true })
	if err := Append(a, []byte("third\n")); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("a failed fsync of an append was not returned: %v", err)
	}
}
