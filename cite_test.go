package memsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// citeRepo is a repository with a committed file db/pool.go of 20 lines and
// its memory opened.
func citeRepo(t testing.TB) (string, *Memory) {
	t.Helper()
	testgit.Isolate(t)
	t.Setenv("MEMSYNC_GLOBAL_DIR", t.TempDir())
	dir := t.TempDir()
	testgit.Git(t, dir, "init", "-q")
	writeLines(t, filepath.Join(dir, "db", "pool.go"), 20, "")
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "pool")
	m, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// writeLines writes n lines "line 1".. to path, after head.
func writeLines(t testing.TB, path string, n int, head string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(head)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCiteCheckMark: a citation made at add is checked, the staleness is
// recorded, and List, Get, Search and Inject mark the entry; --update
// re-anchors it, and the mark goes.
func TestCiteCheckMark(t *testing.T) {
	dir, m := citeRepo(t)
	ctx := context.Background()
	e, err := m.AddWith(ctx, Entry{Content: "the pool size is set here"}, AddOptions{Cite: []string{"db/pool.go:10-12"}})
	if err != nil {
		t.Fatal(err)
	}
	head := testgit.Git(t, dir, "rev-parse", "HEAD")
	if len(e.Citations) != 1 || e.Citations[0].String() != "db/pool.go:10-12" || e.Citations[0].Commit != head || len(e.Citations[0].Fingerprint) != 16 {
		t.Fatalf("citations %+v", e.Citations)
	}
	other, err := m.Add(ctx, Entry{Content: "the pool is fine, see db/pool.go"}) // an automatic citation of the file
	if err != nil || len(other.Citations) != 1 || other.Citations[0].String() != "db/pool.go" {
		t.Fatalf("automatic citation: %+v, %v", other.Citations, err)
	}

	// Lines inserted above: moved, not stale; the file changed: the
	// whole-file citation is stale.
	writeLines(t, filepath.Join(dir, "db", "pool.go"), 20, "// a\n// b\n")
	res, err := m.Check(ctx, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, c := range res.Citations {
		states[c.Entry] = c.State
	}
	if states[e.ID] != "moved" || states[other.ID] != "stale" || len(res.Stale) != 1 || res.Stale[0].ID != other.ID {
		t.Fatalf("check after an insert: %+v", res)
	}

	// The cited lines change: both are stale, and every reader says so.
	writeLines(t, filepath.Join(dir, "db", "pool.go"), 9, "")
	if res, err = m.Check(ctx, CheckOptions{}); err != nil || len(res.Stale) != 2 {
		t.Fatalf("check after a change: %+v, %v", res, err)
	}
	want := "db/pool.go lines 10-12 is past the end of the file (9 lines) since " + head[:7]
	list, _ := m.List(ctx, View{})
	got, _ := m.Get(ctx, View{}, e.ID)
	hits, _ := m.Search(ctx, "pool size", SearchOptions{})
	inj, _ := m.Inject(ctx, "pool size", InjectOptions{Mode: "auto"})
	for what, es := range map[string][]Entry{"list": list, "get": got, "search": hits, "inject": inj.Entries} {
		found := false
		for _, x := range es {
			if x.ID == e.ID {
				found = true
				if !x.Stale || x.StaleReason != want {
					t.Errorf("%s: %s stale=%v %q, want %q", what, x.ID, x.Stale, x.StaleReason, want)
				}
			}
		}
		if !found {
			t.Errorf("%s does not return %s", what, e.ID)
		}
	}
	if !strings.Contains(inj.Memories, "may be stale: "+want) {
		t.Errorf("inject's block does not mark the entry:\n%s", inj.Memories)
	}

	// Re-anchored: the lines past the end become the whole file; fresh.
	up, found, err := m.UpdateCitations(ctx, e.ID)
	if err != nil || len(found) != 1 || found[0].State != "stale" || len(up.Citations) != 1 || up.Citations[0].String() != "db/pool.go" {
		t.Fatalf("update: %+v %+v %v", up, found, err)
	}
	got, _ = m.Get(ctx, View{}, e.ID)
	if got[0].Stale {
		t.Errorf("still marked after --update: %+v", got[0])
	}
	if res, _ = m.Check(ctx, CheckOptions{Refs: []string{e.ID}}); len(res.Stale) != 0 {
		t.Errorf("check after --update: %+v", res)
	}
	// A partial check kept the other entry's mark.
	if got, _ = m.Get(ctx, View{}, other.ID); !got[0].Stale {
		t.Errorf("the other entry lost its mark: %+v", got[0])
	}
}

// TestCiteRefused: a path outside the repository, a missing file, lines
// past the end: nothing is stored, and the errors classify.
func TestCiteRefused(t *testing.T) {
	dir, m := citeRepo(t)
	ctx := context.Background()
	outside := filepath.Join(t.TempDir(), "x.go")
	writeLines(t, outside, 3, "")
	for spec, kind := range map[string]Kind{
		outside:            KindRefused,
		"../x.go":          KindRefused,
		"db/pool.go:19-21": KindUsage,
		"db/nope.go":       KindUsage,
		"db/pool.go:x":     KindUsage,
	} {
		_, err := m.AddWith(ctx, Entry{Content: "cites " + spec}, AddOptions{Cite: []string{spec}, Dir: dir})
		if k, _ := Classify(err); err == nil || k != kind {
			t.Errorf("cite %q: %v (kind %d), want kind %d", spec, err, k, kind)
		}
	}
	if es, _ := m.List(ctx, View{}); len(es) != 0 {
		t.Fatalf("refused citations stored entries: %+v", es)
	}
}

// TestSupersede: the new entry records Supersedes, the old one is archived
// with Superseded-By, and search never returns it as active, even restored.
func TestSupersede(t *testing.T) {
	_, m := citeRepo(t)
	ctx := context.Background()
	old, err := m.Add(ctx, Entry{Content: "the pool size is 10"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := m.AddWith(ctx, Entry{Content: "the pool size is 20 since the load test"}, AddOptions{Supersedes: old.ID})
	if err != nil || e.Supersedes != old.ID {
		t.Fatalf("supersede: %+v, %v", e, err)
	}
	arch, err := m.Get(ctx, View{Archive: true}, old.ID)
	if err != nil || arch[0].SupersededBy != e.ID {
		t.Fatalf("archived: %+v, %v", arch, err)
	}
	if _, err := m.Restore(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	hits, _ := m.Search(ctx, "pool size", SearchOptions{})
	for _, h := range hits {
		if h.ID == old.ID {
			t.Fatalf("search returns the superseded entry as active: %+v", hits)
		}
	}
	if inj, _ := m.Inject(ctx, "pool size", InjectOptions{Mode: "auto"}); strings.Contains(inj.Memories, "["+old.ID+"]") {
		t.Fatalf("inject chose the superseded entry:\n%s", inj.Memories)
	}
	// Nothing to supersede, or a worker: nothing is stored.
	if _, err := m.AddWith(ctx, Entry{Content: "x"}, AddOptions{Supersedes: "nosuchentry"}); !errors.Is(err, memfile.ErrNotFound) {
		t.Errorf("supersede of nothing: %v", err)
	}
	w, _ := Open(m.WorkTree(), Options{Role: "worker"})
	if _, err := w.AddWith(ctx, Entry{Content: "y"}, AddOptions{Supersedes: e.ID}); err == nil {
		t.Error("a worker superseded an entry")
	}
	if es, _ := m.List(ctx, View{}); len(es) != 2 {
		t.Errorf("entries: %+v", es)
	}
}

// TestHookChecksChangedFiles: after a merge that changes cited lines, the
// post-merge hook's bounded check marks the entry, with no check run.
func TestHookChecksChangedFiles(t *testing.T) {
	dir, m := citeRepo(t)
	ctx := context.Background()
	e, err := m.AddWith(ctx, Entry{Content: "pool"}, AddOptions{Cite: []string{"db/pool.go:3"}})
	if err != nil {
		t.Fatal(err)
	}
	base := testgit.Git(t, dir, "branch", "--show-current")
	testgit.Git(t, dir, "checkout", "-qb", "other")
	writeLines(t, filepath.Join(dir, "db", "pool.go"), 2, "")
	testgit.Git(t, dir, "commit", "-qam", "shrink")
	testgit.Git(t, dir, "checkout", "-q", base)
	testgit.Git(t, dir, "merge", "-q", "other")
	RunHook(ctx, dir, "post-merge", []string{"0"}, HookOptions{Stderr: os.Stderr})
	got, _ := m.Get(ctx, View{}, e.ID)
	if !got[0].Stale || !strings.Contains(got[0].StaleReason, "db/pool.go line 3") {
		t.Fatalf("after the merge hook: %+v", got[0])
	}
}
