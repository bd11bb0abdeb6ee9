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

// TestGlobalDirRelative: the global layer never depends on the working
// directory: a relative MEMSYNC_GLOBAL_DIR is refused (a ConfigError, a
// usage error) and nothing is made under the working directory; it used to
// name a folder of whatever directory the process was in, so a program
// that changed it wrote to another global memory than the one it opened.
func TestGlobalDirRelative(t *testing.T) {
	root := testgit.Isolate(t)
	t.Chdir(root)
	t.Setenv("MEMSYNC_GLOBAL_DIR", filepath.Join("rel", "global"))
	_, err := Open("", Options{Global: true})
	if k, _ := Classify(err); !errors.As(err, new(*ConfigError)) || k != KindUsage {
		t.Errorf("Open with a relative MEMSYNC_GLOBAL_DIR: %v (kind %v), want a ConfigError", err, k)
	}
	if _, err := os.Stat(filepath.Join(root, "rel")); err == nil {
		t.Errorf("Open made a global memory under the working directory")
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
