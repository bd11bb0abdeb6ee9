package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestArchiveFolderLinkedOutsideRefused: .agent/archive is a symlink to a
// folder outside the memory home. Archive refuses with ErrUnsafePath and
// writes nothing there; the entry stays in the active file.
func TestArchiveFolderLinkedOutsideRefused(t *testing.T) {
	s := newStore(t)
	e := mustAppend(t, s, "keep me home")
	outside := filepath.Join(filepath.Dir(s.Home), "elsewhere")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.Home, "archive")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive(e.ID); !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("archive into a folder linked outside the home: want ErrUnsafePath, got %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("written outside the home: %v", ents)
	}
	if _, err := s.LoadArchive(); !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("load of the linked archive: want ErrUnsafePath, got %v", err)
	}
	f, err := s.Load()
	if err != nil || len(f.Entries) != 1 || f.Entries[0].ID != e.ID {
		t.Fatalf("active file after the refused archive: %v %v", f, err)
	}
}
