//go:build unix

package fsutil

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// failWrites replaces the append's write for the test: it writes the first
// n bytes for real, then returns err (a short write when err is nil).
func failWrites(t *testing.T, n int, err error) {
	t.Helper()
	writeAppend = func(f *os.File, b []byte) (int, error) {
		k, werr := f.Write(b[:min(n, len(b))])
		if werr != nil {
			return k, werr
		}
		return k, err
	}
	t.Cleanup(func() { writeAppend = (*os.File).Write })
}

// An append that fails part-way — the disk fills after some bytes, an I/O
// error, a short write without an error, a failed fsync — leaves the file
// as it was before it, and its error says so: disk full, nothing written.
func TestAppendFailedPartWayIsUndone(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int
		err   error
		fsync bool
		want  string
	}{
		{"disk full", 7, syscall.ENOSPC, false, "disk full"},
		{"disk full before any byte", 0, syscall.ENOSPC, false, "disk full"},
		{"quota", 3, syscall.EDQUOT, false, "disk full"},
		{"I/O error", 5, syscall.EIO, false, "input/output error"},
		{"short write", 4, nil, false, "short write"},
		{"fsync fails", 1 << 20, nil, true, "injected fsync failure"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "memories.md")
			if err := os.WriteFile(p, []byte("# Memories\n\n## a\n- Content: x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := OpenAppend(p, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			failWrites(t, c.n, c.err)
			if c.fsync {
				watchSyncs(t, func(string) bool { return true })
			}
			err = Append(f, []byte("\n## b\n- Content: a longer entry\n"))
			var ae *AppendError
			if !errors.As(err, &ae) || ae.Undo != nil {
				t.Fatalf("want an undone *AppendError, got %v", err)
			}
			if c.err != nil && !errors.Is(err, c.err) {
				t.Fatalf("errors.Is(%v, %v) is false", err, c.err)
			}
			for _, w := range []string{p, c.want, "nothing was written"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if got, _ := os.ReadFile(p); string(got) != "# Memories\n\n## a\n- Content: x\n" {
				t.Fatalf("file after the failed append: %q", got)
			}
		})
	}
}

// When cutting the part written off fails too, the error says so loudly:
// the file, the byte offset where the torn entry starts, and the repair.
func TestAppendUndoFailsLoudly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "memories.md")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenAppend(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	failWrites(t, 3, syscall.ENOSPC)
	truncateFile = func(*os.File, int64) error { return syscall.EROFS }
	t.Cleanup(func() { truncateFile = (*os.File).Truncate })
	err = Append(f, []byte("abcdef"))
	var ae *AppendError
	if !errors.As(err, &ae) || !errors.Is(ae.Undo, syscall.EROFS) {
		t.Fatalf("want an *AppendError whose undo failed, got %v", err)
	}
	for _, w := range []string{p, "disk full", "from byte 10", "truncate -s 10 " + p, "memsync doctor --fix"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

// Another writer that appended after the failed write (one that takes no
// lock) is never cut off: the undo refuses and says where the bytes are.
func TestAppendUndoKeepsAnotherWritersBytes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "memories.md")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenAppend(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	writeAppend = func(f *os.File, b []byte) (int, error) {
		k, _ := f.Write(b[:2])
		other, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return k, err
		}
		_, _ = io.WriteString(other, "OTHER")
		_ = other.Close()
		return k, syscall.EIO
	}
	t.Cleanup(func() { writeAppend = (*os.File).Write })
	err = Append(f, []byte("abcdef"))
	var ae *AppendError
	if !errors.As(err, &ae) || ae.Undo == nil || !strings.Contains(err.Error(), "from byte 10") {
		t.Fatalf("want an *AppendError that could not be undone, got %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "0123456789abOTHER" {
		t.Fatalf("file %q: the other writer's bytes were cut", got)
	}
}
