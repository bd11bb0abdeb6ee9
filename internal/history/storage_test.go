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

// TestStaleSnapshotKeep: the .keep a snapshot killed before its ref moved
// left is removed once old (its pack becomes an ordinary one, which
// Maintain rolls up), with its pack kept; a young one (a snapshot under
// way) and the .keep files of git or a person are never touched.
func TestStaleSnapshotKeep(t *testing.T) {
	h, _ := testRepo(t)
	write(t, h.Store.Path(), entry(idA, "first", "one"))
	take(t, h, "first")
	packDir := filepath.Join(h.Repo.CommonDir, "objects", "pack")
	old := time.Now().Add(-2 * orphanPackAge)
	keeps := map[string]string{
		"pack-2222222222222222222222222222222222222222": snapshotKeep + "4242)\n",      // killed long ago
		"pack-3333333333333333333333333333333333333333": snapshotKeep + "4343)\n",      // under way
		"pack-4444444444444444444444444444444444444444": "fetch-pack 77 on host\n",     // git's
		"pack-5555555555555555555555555555555555555555": "kept by hand, do not pack\n", // a person's
	}
	for base, text := range keeps {
		for ext, data := range map[string]string{".keep": text, ".pack": "PACK", ".idx": "IDX"} {
			if err := os.WriteFile(filepath.Join(packDir, base+ext), []byte(data), 0o444); err != nil {
				t.Fatal(err)
			}
		}
		if base != "pack-3333333333333333333333333333333333333333" {
			if err := os.Chtimes(filepath.Join(packDir, base+".keep"), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := h.removeOrphanPacks(); err != nil {
		t.Fatal(err)
	}
	for base := range keeps {
		_, err := os.Stat(filepath.Join(packDir, base+".keep"))
		if gone := os.IsNotExist(err); gone != (base == "pack-2222222222222222222222222222222222222222") {
			t.Errorf("%s.keep: removed %v", base, gone)
		}
		if _, err := os.Stat(filepath.Join(packDir, base+".pack")); err != nil {
			t.Errorf("%s.pack: %v", base, err)
		}
	}
	// The snapshot's own pack is released: no .keep of memsync's is left.
	if m, _ := filepath.Glob(filepath.Join(packDir, "*.keep")); len(m) != 3 {
		t.Errorf("keep files left: %v", m)
	}
}
