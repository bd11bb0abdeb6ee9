//go:build linux || darwin || freebsd || netbsd

package fsutil

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestChangeTimeIsNotModTime checks that ChangeTime reads the change time:
// setting the mtime back a day moves the ctime to now.
func TestChangeTimeIsNotModTime(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Minute)
	old := start.Add(-24 * time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	ct, ok := ChangeTime(fi)
	if !ok {
		t.Fatal("no change time")
	}
	if !fi.ModTime().Equal(old) {
		t.Fatalf("mtime %v, want %v", fi.ModTime(), old)
	}
	if got := time.Unix(0, ct); got.Before(start) {
		t.Fatalf("change time %v, want after %v (the mtime is %v)", got, start, fi.ModTime())
	}
}
