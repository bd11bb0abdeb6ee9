package inject

import (
	"strings"
	"testing"

	"github.com/memsync/memsync/memfile"
)

// TestStaleRanksLast: an entry that may be stale ranks below every fresh
// one, however relevant and recent, and the block says why; its citations
// show as places, without commits and fingerprints.
func TestStaleRanksLast(t *testing.T) {
	stale := entry("fix", "", "pool size is set in db/pool.go", "2026-05-01", "db")
	stale.SetField(memfile.CitesField, "db/pool.go:10-12 @3f2a1c4e5d6f #0123456789abcdef")
	f := &memfile.File{Entries: []memfile.Entry{
		entry("note", "", "unrelated old note", "2020-01-01"),
		stale,
		entry("note", "", "pool size for tests", "2021-01-01"),
	}}
	why := "db/pool.go lines 10-12 changed since 3f2a1c4"
	res := Select(f, Options{Query: "pool size", Stale: func(e *memfile.Entry) string {
		if e.ID == stale.ID {
			return why
		}
		return ""
	}})
	if len(res.Chosen) != 3 || res.Chosen[2] != 1 {
		t.Fatalf("chosen %v: the stale entry (1) is not last", res.Chosen)
	}
	if !strings.Contains(res.Block, "    may be stale: "+why+"\n") {
		t.Errorf("the block does not mark the stale entry:\n%s", res.Block)
	}
	if !strings.Contains(res.Block, "    cites: db/pool.go:10-12\n") || strings.Contains(res.Block, "0123456789abcdef") {
		t.Errorf("the block shows the citation wrongly:\n%s", res.Block)
	}
	if strings.Count(res.Block, "may be stale") != 1 {
		t.Errorf("a fresh entry is marked:\n%s", res.Block)
	}
}
