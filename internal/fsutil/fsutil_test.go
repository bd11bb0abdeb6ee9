package fsutil

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestWriteFileReplacesAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "new" {
		t.Fatalf("content %q", b)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600 kept", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temp files left behind: %v", ents)
	}
}

func TestWriteFileCrashBeforeRenameKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	rename = func(string, string) error { return errors.New("crash") }
	defer func() { rename = os.Rename }()
	if err := WriteFile(p, []byte("new"), 0o644); err == nil {
		t.Fatal("want error")
	}
	b, _ := os.ReadFile(p)
	if string(b) != "old" {
		t.Fatalf("content %q, want old", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temp files left behind: %v", ents)
	}
}

// TestStaleTemps: a temp file left by a killed write is listed, one being
// written (a live pid in its name) is not, and nothing else in the folder is.
func TestStaleTemps(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "memories.md")
	var named string
	rename = func(from, _ string) error { named = filepath.Base(from); return errors.New("crash") }
	defer func() { rename = os.Rename }()
	_ = WriteFile(p, []byte("x"), 0o644)
	if want := ".memories.md.tmp-" + strconv.Itoa(os.Getpid()) + "-"; !strings.HasPrefix(named, want) {
		t.Fatalf("temp name %q does not start with %q", named, want)
	}

	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	write := func(name string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	dead := write(".memories.md.tmp-" + strconv.Itoa(done.Process.Pid) + "-42")
	write(".memories.md.tmp-" + strconv.Itoa(os.Getpid()) + "-43") // being written
	write(".memories.md.tmp-1234567")                              // no pid, fresh
	old := write(".memories.md.tmp-7654321")                       // no pid, old
	past := time.Now().Add(-2 * OldTempAge)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	write("memories.md.bak-20260101T000000.000000000")
	write("notes.tmp-1-2")
	got, err := StaleTemps(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{old, dead}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("stale temps %v, want %v", got, want)
	}
}
