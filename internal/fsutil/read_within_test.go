package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// ReadWithin reads a file inside its root, also through a link that stays
// inside, and refuses a link that leads out (to a private file, to
// /dev/zero) or a file over the limit, naming the path.
func TestReadWithin(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	in := filepath.Join(root, "notes.md")
	private := filepath.Join(outside, "private.md")
	for _, f := range []string{in, private} {
		if err := os.WriteFile(f, []byte("# Memories\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{"inside": in, "private": private, "zero": "/dev/zero"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{in, filepath.Join(root, "inside")} {
		if b, err := ReadWithin(p, root, 1<<20); err != nil || string(b) != "# Memories\n" {
			t.Errorf("ReadWithin(%s) = %q, %v", p, b, err)
		}
	}
	for _, name := range []string{"private", "zero"} {
		p := filepath.Join(root, name)
		_, err := ReadWithin(p, root, 1<<20)
		var oe *OutsideError
		if !errors.As(err, &oe) || oe.Path != p {
			t.Errorf("ReadWithin(%s) = %v, want an *OutsideError naming it", name, err)
		}
	}
	if _, err := ReadWithin(in, root, 4); !errors.As(err, new(*TooLargeError)) {
		t.Errorf("over the limit: %v", err)
	}
}
