//go:build unix

package fsutil

import (
	"os"
	"path/filepath"
	"testing"
)

// OpenFile and MkdirAll give what they create exactly the mode asked for,
// whatever the umask (setgid included), and leave what exists alone.
func TestCreateWithExactMode(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a", "b")
	if err := MkdirAll(sub, 0o770|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(dir, "a"), sub} {
		if fi, _ := os.Stat(d); fi.Mode()&^os.ModeDir != 0o770|os.ModeSetgid {
			t.Errorf("%s has mode %v", d, fi.Mode())
		}
	}
	p := filepath.Join(sub, "f")
	f, err := OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o664)
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if fi, _ := os.Stat(p); fi.Mode() != 0o664 {
		t.Errorf("new file has mode %v, want 0664", fi.Mode())
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err = OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o664); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if fi, _ := os.Stat(p); fi.Mode() != 0o600 {
		t.Errorf("an existing file's mode changed to %v", fi.Mode())
	}
	if err := os.Symlink(p, filepath.Join(sub, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(filepath.Join(sub, "link"), os.O_WRONLY|os.O_CREATE, 0o664); err == nil {
		t.Error("OpenFile wrote through a symlink")
	}
}
