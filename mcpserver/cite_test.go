package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/internal/testgit"
)

// TestSaveCitesSupersedesRetrieveStale: save_to_memory cites code and
// supersedes an entry; once the cited lines change and a check ran,
// retrieve_from_memory returns the entry with stale and its reason, and
// never the superseded one.
func TestSaveCitesSupersedesRetrieveStale(t *testing.T) {
	m := openRepo(t, memsync.Options{Role: "owner"})
	top := m.WorkTree()
	pool := filepath.Join(top, "pool.go")
	if err := os.WriteFile(pool, []byte("package db\n\nconst size = 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, top, "add", "-A")
	testgit.Git(t, top, "commit", "-qm", "pool")
	cs := connect(t, Options{Project: m})

	var old SaveOutput
	if msg := callTool(t, cs, "save_to_memory", map[string]any{"content": "the pool size is 10"}, &old); msg != "" {
		t.Fatal(msg)
	}
	var saved SaveOutput
	if msg := callTool(t, cs, "save_to_memory", map[string]any{"content": "the pool size is a constant", "cite": []string{"pool.go:3"},
		"supersedes": old.Entry.ID}, &saved); msg != "" {
		t.Fatal(msg)
	}
	if e := saved.Entry; len(e.Citations) != 1 || e.Citations[0].String() != "pool.go:3" || e.Supersedes != old.Entry.ID {
		t.Fatalf("saved %+v", e)
	}
	if msg := callTool(t, cs, "save_to_memory", map[string]any{"content": "x", "cite": []string{"../outside.go"}}, nil); msg == "" {
		t.Fatal("a citation outside the repository was saved")
	}

	if err := os.WriteFile(pool, []byte("package db\n\nconst size = 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Check(context.Background(), memsync.CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	var got Entries
	if msg := callTool(t, cs, "retrieve_from_memory", map[string]any{"query": "pool size"}, &got); msg != "" {
		t.Fatal(msg)
	}
	if len(got.Entries) != 1 || got.Entries[0].ID != saved.Entry.ID || !got.Entries[0].Stale || got.Entries[0].StaleReason == "" {
		t.Fatalf("retrieve: %+v", got.Entries)
	}
}

// TestSaveNamesSimilar: a save nearly the same as an active entry is
// stored, and similar names that entry.
func TestSaveNamesSimilar(t *testing.T) {
	cs := connect(t, Options{Project: openRepo(t, memsync.Options{Role: "owner"})})
	var first, second SaveOutput
	if msg := callTool(t, cs, "save_to_memory", map[string]any{"content": "Never log request bodies, they may hold personal data"}, &first); msg != "" {
		t.Fatal(msg)
	}
	if msg := callTool(t, cs, "save_to_memory", map[string]any{"content": "Request bodies may contain personal data, so never log them"}, &second); msg != "" {
		t.Fatal(msg)
	}
	if second.Entry.ID == first.Entry.ID || len(second.Similar) != 1 || second.Similar[0] != first.Entry.ID {
		t.Fatalf("second save: %+v", second)
	}
}

// TestReviewTool: review_memory returns the queue: the near-duplicates as
// one item, with the commands that settle it.
func TestReviewTool(t *testing.T) {
	cs := connect(t, Options{Project: openRepo(t, memsync.Options{Role: "owner"})})
	var a, b SaveOutput
	callTool(t, cs, "save_to_memory", map[string]any{"content": "Use pnpm, not npm, in this repository"}, &a)
	callTool(t, cs, "save_to_memory", map[string]any{"content": "This repository uses pnpm instead of npm"}, &b)
	var got memsync.ReviewResult
	if msg := callTool(t, cs, "review_memory", nil, &got); msg != "" {
		t.Fatal(msg)
	}
	if len(got.Items) != 1 || got.Items[0].Kind != "duplicate" || len(got.Items[0].Entries) != 2 ||
		got.Items[0].Entries[0].ID != a.Entry.ID || got.Items[0].Commands[0] != "memsync delete "+a.Entry.ID {
		t.Fatalf("review: %+v", got)
	}
}
