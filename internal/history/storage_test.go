package history

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPackWithoutIndexIsIgnored: a pack file whose index is not there (a
// process killed between removing a rolled-up pack's index and its pack,
// or git between renaming a new pack and its index) is not a pack yet, as
// git sees it: every snapshot still reads, and the next snapshot is taken.
// Maintain removes such a leftover once it is old.
func TestPackWithoutIndexIsIgnored(t *testing.T) {
	h, _ := testRepo(t)
	write(t, h.Store.Path(), entry(idA, "first", "one"))
	first := take(t, h, "first")
	packDir := filepath.Join(h.Repo.CommonDir, "objects", "pack")
	orphan := filepath.Join(packDir, "pack-1111111111111111111111111111111111111111.pack")
	if err := os.WriteFile(orphan, []byte("PACK half written"), 0o444); err != nil {
		t.Fatal(err)
	}
	h = Open(h.Repo, h.Store) // a new process
	if _, err := h.Files(first.Snapshot.Commit); err != nil {
		t.Fatalf("read a snapshot beside a pack without its index: %v", err)
	}
	write(t, h.Store.Path(), entry(idA, "first", "one")+"\n"+entry(idB, "second", "two"))
	if res := take(t, h, "second"); !res.Created {
		t.Fatal("no snapshot taken")
	}
	// A young leftover may be a pack git is still moving into place.
	if err := h.removeOrphanPacks(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); err != nil {
		t.Fatalf("a young pack without index was removed: %v", err)
	}
	old := time.Now().Add(-2 * orphanPackAge)
	if err := os.Chtimes(orphan, old, old); err != nil {
		t.Fatal(err)
	}
	if err := h.removeOrphanPacks(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("an old pack without index is still there: %v", err)
	}
}
