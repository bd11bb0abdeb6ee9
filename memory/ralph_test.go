package memory

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/internal/testgit"
)

// TestRalphKeepsSource: in a memory in ralph-orchestrator's dialect, which
// keeps an entry's content, tags and date only, a recorded item's Source
// reads back as its Source (and so as its author agent); it read back as a
// plain tag "Source:…", and Retrieve returned no Source.
func TestRalphKeepsSource(t *testing.T) {
	testgit.Isolate(t)
	dir := t.TempDir()
	testgit.Git(t, dir, "init", "-q")
	if err := os.MkdirAll(filepath.Join(dir, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	ralph := "# Memories\n\n## Patterns\n\n### mem-1700000000-abcd\n> x\n<!-- tags: a | created: 2026-01-01 -->\n"
	if err := os.WriteFile(filepath.Join(dir, ".agent", "memories.md"), []byte(ralph), 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec, err := store.Record(ctx, []Item{{Output: "CI timeout is 300 s; use 600", Source: "loop-7"}})
	if err != nil || len(rec) != 1 || rec[0].Source != "loop-7" {
		t.Fatalf("record: %+v, %v", rec, err)
	}
	found, err := store.Retrieve(ctx, Query{Search: "CI timeout"})
	if err != nil || len(found) == 0 {
		t.Fatalf("retrieve: %v, %v", found, err)
	}
	if found[0].Source != "loop-7" || len(found[0].Tags) != 0 {
		t.Fatalf("retrieved source %q, tags %q; want loop-7 and no tags", found[0].Source, found[0].Tags)
	}
	got, err := store.Memory.Get(ctx, memsync.View{}, rec[0].ID)
	if err != nil || got[0].Provenance == nil || got[0].Provenance.Agent != "loop-7" {
		t.Fatalf("the entry's agent: %+v, %v", got, err)
	}
}
