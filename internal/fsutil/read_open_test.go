package fsutil

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadOpen: what was opened is checked, not what a path named before:
// a pipe (opened without waiting for a writer) and a device are errors
// naming the path, a regular file over the limit is a TooLargeError, and
// one within it is read whole.
func TestReadOpen(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("twelve bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero"} {
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadOpen(f, p, 1<<20); err == nil || !strings.Contains(err.Error(), p+" is not a regular file") {
			t.Fatalf("%s: %v", p, err)
		}
		_ = f.Close()
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := ReadOpen(f, file, 11); err == nil {
		t.Fatal("a file over the limit was read")
	}
	if b, err := ReadOpen(f, file, 12); err != nil || string(b) != "twelve bytes" {
		t.Fatalf("%q, %v", b, err)
	}
}
