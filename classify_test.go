package memsync

import (
	"context"
	"errors"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
)

// TestClassifyUnknownRole: a role that is not owner, admin or worker, from
// Options.Role or MEMSYNC_ROLE, is a usage error (exit 2) as Classify tells
// it, for every front door, not only for the command line's own check.
func TestClassifyUnknownRole(t *testing.T) {
	_, dir := openRepo(t, Options{})
	_, err := Open(dir, Options{Role: "root"})
	if !errors.Is(err, ErrUnknownRole) {
		t.Fatalf("Options.Role root: %v", err)
	}
	if k, _ := Classify(err); k != KindUsage {
		t.Errorf("Options.Role root: kind %v, want KindUsage", k)
	}
	t.Setenv("MEMSYNC_ROLE", "superuser")
	_, err = Open(dir, Options{})
	if k, _ := Classify(err); !errors.Is(err, ErrUnknownRole) || k != KindUsage {
		t.Errorf("MEMSYNC_ROLE superuser: %v, kind %v, want ErrUnknownRole, KindUsage", err, k)
	}
}

// TestClassifyGlobalLayer: an operation the global layer does not have
// (history, hooks, worktrees, citations, init) is a usage error, as the
// command line's own check makes `memsync --global log`; `memsync --global
// worktree list`, which only the library refused, was exit 1.
func TestClassifyGlobalLayer(t *testing.T) {
	testgit.Isolate(t)
	t.Setenv("MEMSYNC_GLOBAL_DIR", t.TempDir())
	m, err := Open("", Options{Global: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls := map[string]func() error{
		"Snapshot":     func() error { _, err := m.Snapshot(ctx, SnapshotOptions{}); return err },
		"Log":          func() error { _, err := m.Log(ctx, LogOptions{}); return err },
		"Check":        func() error { _, err := m.Check(ctx, CheckOptions{}); return err },
		"Worktrees":    func() error { _, err := m.Worktrees(ctx); return err },
		"InstallHooks": func() error { _, err := m.InstallHooks(ctx, InstallHooksOptions{}); return err },
	}
	for name, call := range calls {
		err := call()
		if k, _ := Classify(err); k != KindUsage {
			t.Errorf("%s on the global layer: %v, kind %v, want KindUsage", name, err, k)
		}
	}
}

// TestClassifyOptionRevision: a revision that looks like an option ("-p",
// "--output=FILE") names no snapshot, as any other revision that names
// none: KindNotFound (exit 3), not KindError.
func TestClassifyOptionRevision(t *testing.T) {
	m, _ := openRepo(t, Options{})
	ctx := context.Background()
	add(t, m, "alpha")
	if _, err := m.Snapshot(ctx, SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, rev := range []string{"-p", "--output=x"} {
		_, err := m.Rollback(ctx, rev)
		if k, _ := Classify(err); k != KindNotFound {
			t.Errorf("rollback %q: %v (kind %v), want KindNotFound", rev, err, k)
		}
		_, err = m.Diff(ctx, rev, LiveRev, DiffOptions{})
		if k, _ := Classify(err); k != KindNotFound {
			t.Errorf("diff %q: %v (kind %v), want KindNotFound", rev, err, k)
		}
	}
}
