package memsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/lock"
)

// TestMain keeps the tests and examples of this package off the user's
// global layer (Inject reads it): MEMSYNC_GLOBAL_DIR names a folder of the
// run's own, not made until a test makes it.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "memsync-global-")
	if err != nil {
		panic(err)
	}
	_ = os.Setenv("MEMSYNC_GLOBAL_DIR", filepath.Join(dir, "global"))
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func TestGlobalDir(t *testing.T) {
	t.Setenv("MEMSYNC_GLOBAL_DIR", "")
	t.Setenv("XDG_DATA_HOME", "/x/data")
	if d, _ := globalDir(); d != filepath.FromSlash("/x/data/memsync") {
		t.Fatalf("XDG: %s", d)
	}
	t.Setenv("MEMSYNC_GLOBAL_DIR", "/g")
	if d, _ := globalDir(); d != "/g" {
		t.Fatalf("override: %s", d)
	}
}

// The global layer's files are private, whichever front door opens it.
func TestGlobalFilesPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "g")
	t.Setenv("MEMSYNC_GLOBAL_DIR", dir)
	m, err := Open("", Options{Global: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(context.Background(), Entry{Content: "private"}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, m.Path(): 0o600} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v %v, want %v", path, fi.Mode().Perm(), err, want)
		}
	}
}

// Options, then the environment, then the configuration file, then the
// defaults; an explicit zero is a value, not "unset".
func TestOptionsOrder(t *testing.T) {
	testgit.Isolate(t)
	dir := t.TempDir()
	testgit.Git(t, dir, "init", "-q")
	if err := os.MkdirAll(filepath.Join(dir, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".agent", "memsync.yml"), []byte("role: worker\nmax_entries: 7\nttl_days: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"MEMSYNC_ROLE", "MCP_MEMORY_MAX_ENTRIES", "MCP_MEMORY_TTL_DAYS"} {
		t.Setenv(k, "")
	}
	m, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.role != policy.Worker || m.limits().MaxEntries != 7 || m.limits().TTL != 3*24*time.Hour {
		t.Fatalf("configuration: role %s, limits %+v", m.role, m.limits())
	}
	if _, err := m.Delete(context.Background(), "1"); !errors.Is(err, policy.ErrRefused) {
		t.Fatalf("worker delete: %v", err)
	}
	t.Setenv("MCP_MEMORY_TTL_DAYS", "0")
	t.Setenv("MEMSYNC_ROLE", "admin")
	if m, err = Open(dir, Options{MaxEntries: new(0)}); err != nil {
		t.Fatal(err)
	}
	if m.role != policy.Admin || m.limits().MaxEntries != 0 || m.limits().TTL != 0 {
		t.Fatalf("environment and options: role %s, limits %+v", m.role, m.limits())
	}
	t.Setenv("MCP_MEMORY_TTL_DAYS", "soon")
	var ce *ConfigError
	if _, err = Open(dir, Options{}); !errors.As(err, &ce) {
		t.Fatalf("bad environment value: %v", err)
	}
}

// A caller's context ends a lock wait: a deadline shorter than the lock
// timeout returns the context's error, not a lock timeout.
func TestContextEndsLockWait(t *testing.T) {
	testgit.Isolate(t)
	dir := t.TempDir()
	testgit.Git(t, dir, "init", "-q")
	m, err := Open(dir, Options{LockTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(context.Background(), Entry{Content: "first"}); err != nil {
		t.Fatal(err)
	}
	lp, err := m.store.LockPath()
	if err != nil {
		t.Fatal(err)
	}
	held, err := lock.Exclusive(context.Background(), lp, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Release() }()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = m.Add(ctx, Entry{Content: "second"})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, lock.ErrTimeout) {
		t.Fatalf("add while the lock is held past the caller's deadline: %v", err)
	}
	if _, err := m.List(ctx, View{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("list with a done context: %v", err)
	}
}

// TestAddReturnsWhatIsStored: the entry Add returns is the entry a read
// gives back, whatever spaces and empty tags the caller sent (MCP and the Go
// API pass tags as they come), in both dialects.
func TestAddReturnsWhatIsStored(t *testing.T) {
	ctx := context.Background()
	for _, ralph := range []bool{false, true} {
		testgit.Isolate(t)
		dir := t.TempDir()
		testgit.Git(t, dir, "init", "-q")
		if ralph {
			if err := os.MkdirAll(filepath.Join(dir, ".agent"), 0o755); err != nil {
				t.Fatal(err)
			}
			data := "# Memories\n\n## Patterns\n\n### mem-1700000000-abcd\n> x\n<!-- tags: a | created: 2026-01-01 -->\n"
			if err := os.WriteFile(filepath.Join(dir, ".agent", "memories.md"), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		m, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		e, err := m.Add(ctx, Entry{Content: "Retry the upload\r\nwith backoff\r\r\n", Title: " Upload\f", Type: " fix ", Tags: []string{" net ", "", "\fio", "\u00a0"}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Get(ctx, View{}, e.ID)
		if err != nil || len(got) != 1 {
			t.Fatalf("ralph %v: get %s: %v %v", ralph, e.ID, got, err)
		}
		g := got[0]
		if g.Title != e.Title || g.Type != e.Type || !slices.Equal(g.Tags, e.Tags) || g.Content != e.Content {
			t.Fatalf("ralph %v: Add returned %q %q %q %q, a read gives %q %q %q %q", ralph, e.Title, e.Type, e.Tags, e.Content, g.Title, g.Type, g.Tags, g.Content)
		}
		if !slices.Equal(e.Tags, []string{"net", "io"}) {
			t.Fatalf("ralph %v: tags %q, want [net io]", ralph, e.Tags)
		}
		// Edit too returns the entry as a read gives it back: "\r\n" read as "\n".
		text := "Retry twice\r\nthen give up"
		ed, err := m.Edit(ctx, e.ID, EditOptions{Content: &text})
		if err != nil {
			t.Fatal(err)
		}
		got, err = m.Get(ctx, View{}, ed.Entry.ID)
		if err != nil || len(got) != 1 || got[0].Content != ed.Entry.Content || got[0].Title != ed.Entry.Title {
			t.Fatalf("ralph %v: Edit returned %q %q, a read gives %v %v", ralph, ed.Entry.Content, ed.Entry.Title, got, err)
		}
	}
}

// TestAllowByName: Allow names operations as the command line does, and
// refuses a worker what the role may not do, and a name it does not know.
func TestAllowByName(t *testing.T) {
	m, _ := openRepo(t, Options{Role: "worker"})
	if err := m.Allow("add"); err != nil {
		t.Errorf("worker add: %v", err)
	}
	for _, op := range []string{"edit", "resolve", "sync --force"} {
		if err := m.Allow(op); !errors.Is(err, policy.ErrRefused) {
			t.Errorf("worker %s: %v, want a refusal", op, err)
		}
	}
	if err := m.Allow("fly"); err == nil || errors.Is(err, policy.ErrRefused) {
		t.Errorf("unknown operation: %v", err)
	}
	if _, err := Open(t.TempDir(), Options{Role: "root"}); !errors.Is(err, ErrUnknownRole) {
		t.Errorf("Open outside a repository with role root: %v, want ErrUnknownRole first", err)
	}
}
