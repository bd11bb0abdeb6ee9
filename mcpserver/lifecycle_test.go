package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/memfile"
)

// save_to_memory past the max count: the cleanup it triggers archives other
// entries, never the one it saved, so retrieve finds what save returned
// (issue 10, defect 1).
func TestSaveIsNotArchivedByItsOwnCleanup(t *testing.T) {
	m := openRepo(t, memsync.Options{Role: "owner", MaxEntries: new(5), TTLDays: new(90)})
	if err := os.MkdirAll(filepath.Dir(m.Path()), 0o755); err != nil {
		t.Fatal(err)
	}
	text := memfile.Header + "\n"
	for i := range 6 {
		text += fmt.Sprintf("\n## Note: n%d\n- Content: written by another tool %d\n", i, i)
	}
	if err := os.WriteFile(m.Path(), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, Options{Project: m})
	var saved SaveOutput
	if msg := callTool(t, cs, "save_to_memory", map[string]any{"content": "fresh lesson about kiwi"}, &saved); msg != "" {
		t.Fatal(msg)
	}
	var got Entries
	if msg := callTool(t, cs, "retrieve_from_memory", map[string]any{"query": "kiwi"}, &got); msg != "" {
		t.Fatal(msg)
	}
	if got.Total != 1 || got.Entries[0].ID != saved.Entry.ID {
		t.Fatalf("retrieve after save %s: %+v", saved.Entry.ID, got)
	}
	arc, err := m.List(context.Background(), memsync.View{Archive: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(arc) != 2 {
		t.Fatalf("archive holds %d entries, want the 2 oldest", len(arc))
	}
	for _, e := range arc {
		if e.ID == saved.Entry.ID {
			t.Fatal("the saved entry was archived")
		}
	}
}
