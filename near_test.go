package memsync

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// TestAddNamesNearDuplicates: an add nearly the same as an active entry is
// stored, and Similar names that entry; the exact duplicate keeps today's
// answer, and a different fact (another number) names nothing.
func TestAddNamesNearDuplicates(t *testing.T) {
	_, m := citeRepo(t)
	ctx := context.Background()
	first, err := m.Add(ctx, Entry{Content: "Always use try-catch blocks for async operations"})
	if err != nil {
		t.Fatal(err)
	}
	pool, _ := m.Add(ctx, Entry{Content: "The pool size is 10"})
	e, err := m.Add(ctx, Entry{Content: "Async operations should always be wrapped in try-catch blocks"})
	if err != nil || e.Duplicate != "" || !slices.Equal(e.Similar, []string{first.ID}) {
		t.Fatalf("near-duplicate add: %+v, %v", e, err)
	}
	if d, _ := m.Add(ctx, Entry{Content: "always use TRY-CATCH blocks for async operations"}); d.Duplicate != "active" || d.Similar != nil {
		t.Fatalf("exact duplicate: %+v", d)
	}
	if o, _ := m.Add(ctx, Entry{Content: "The pool size is 20"}); o.Similar != nil {
		t.Fatalf("another number named %v (pool %s)", o.Similar, pool.ID)
	}
	// The entry a supersede replaces is not named as similar.
	s, err := m.AddWith(ctx, Entry{Content: "The pool size is 10 per worker"}, AddOptions{Supersedes: pool.ID})
	if err != nil || slices.Contains(s.Similar, pool.ID) {
		t.Fatalf("supersede: %+v, %v", s, err)
	}
}

// nearMemory is the memory of a repository holding about n entries
// (memfile.GenerateFile).
func nearMemory(b *testing.B, n int) string {
	dir := testgit.Isolate(b)
	b.Setenv("MEMSYNC_GLOBAL_DIR", b.TempDir())
	testgit.Git(b, dir, "init", "-q")
	m, err := Open(dir, Options{NoAccessLog: true})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Add(context.Background(), Entry{Content: "first"}); err != nil {
		b.Fatal(err)
	}
	data := memfile.GenerateFile(n*300, 1)
	if err := os.WriteFile(m.Path(), data, 0o644); err != nil {
		b.Fatal(err)
	}
	f, _ := m.load(context.Background(), View{})
	b.Logf("%d entries", len(f.Entries))
	return dir
}

// BenchmarkNearDuplicates1000 is what the door's near-duplicate check adds
// to an add, on a memory of about 1,000 entries: in a fresh process (the
// file parsed, every entry's terms made; the CLI) and in a long-lived one
// (the MCP server, a Go program: the file unchanged since the last call).
func BenchmarkNearDuplicates1000(b *testing.B) {
	dir := nearMemory(b, 1000)
	ctx := context.Background()
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			m, err := Open(dir, Options{NoAccessLog: true})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.similarTo(ctx, "", "retry the upstream call with jittered backoff"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open", func(b *testing.B) { // the part of "fresh" that is not the check
		for b.Loop() {
			m, err := Open(dir, Options{NoAccessLog: true})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.load(ctx, View{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		m, err := Open(dir, Options{NoAccessLog: true})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			if _, err := m.similarTo(ctx, "", fmt.Sprintf("retry the upstream call %d times with jittered backoff", i)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
