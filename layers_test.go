package memsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
)

// TestSearchLayersNone: a search of no memory finds nothing; it panicked
// (index out of range), as a variadic's caller passing an empty list
// (every layer the configuration enables, none enabled) would not expect.
func TestSearchLayersNone(t *testing.T) {
	for _, q := range []string{"pool", ""} {
		got, err := SearchLayers(context.Background(), q, SearchOptions{})
		if err != nil || len(got) != 0 {
			t.Errorf("SearchLayers(%q) of no layer: %v, %v", q, got, err)
		}
	}
}

// TestGlobalDirRelative: a relative MEMSYNC_GLOBAL_DIR names a folder of
// the working directory Open ran in, and the Memory stays that memory: it
// followed the process's working directory, so a program that changed it
// wrote to another global memory than the one it opened.
func TestGlobalDirRelative(t *testing.T) {
	root := testgit.Isolate(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(a)
	t.Setenv("MEMSYNC_GLOBAL_DIR", filepath.Join("rel", "global"))
	m, err := Open("", Options{Global: true})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(a, "rel", "global", "memories.md")
	if m.Path() != want {
		t.Errorf("Path() = %s, want %s", m.Path(), want)
	}
	if err := os.Chdir(b); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(context.Background(), Entry{Content: "in the global layer opened in a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(want); err != nil {
		t.Errorf("the entry is not in the memory Open found: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b, "rel")); err == nil {
		t.Errorf("the add wrote a global memory under the new working directory")
	}
}

// TestWriteAfterRepositoryGone: a Memory whose repository was moved or
// deleted since Open (a long-running MCP server, a program holding it)
// refuses writes with ErrNoRepository; Add acknowledged the entry and made
// a ghost .git (no HEAD, only memsync's files) and .agent at the old path,
// where nothing would ever read it.
func TestWriteAfterRepositoryGone(t *testing.T) {
	ctx := context.Background()
	for _, moved := range []bool{false, true} {
		m, dir := openRepo(t, Options{})
		add(t, m, "before")
		if moved {
			if err := os.Rename(dir, dir+"-moved"); err != nil {
				t.Fatal(err)
			}
		} else if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		_, err := m.Add(ctx, Entry{Content: "after the repository went"})
		if k, _ := Classify(err); !errors.Is(err, ErrNoRepository) || k != KindNoRepo {
			t.Errorf("moved %v: add: %v (kind %v), want ErrNoRepository", moved, err, k)
		}
		if _, err := os.Lstat(dir); err == nil {
			t.Errorf("moved %v: the add made %s again", moved, dir)
			_ = filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { t.Log(p); return nil })
		}
	}
}
