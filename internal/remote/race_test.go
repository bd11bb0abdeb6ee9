package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/testgit"
)

// TestSharedRefRivalIsNoFailure: a remote whose pre-receive hook lets a
// rival's snapshot land on the shared ref first on every push. The sync
// gets through in one try: its own ref takes its snapshot, the shared ref
// keeps the rival's, and the rival's next sync merges ours from our ref.
func TestSharedRefRivalIsNoFailure(t *testing.T) {
	cs := clones(t, 2)
	a, rival := cs[0], cs[1]
	bare := filepath.Join(filepath.Dir(a.Repo.WorkTree), "remote.git")
	add(t, rival, "rival 0")
	if _, err := Sync(context.Background(), rival, "origin", Options{}); err != nil {
		t.Fatal(err)
	}
	add(t, rival, "rival 1")
	if _, err := rival.Take(context.Background(), "", history.Provenance{}); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, rival.Repo.WorkTree, "push", "-q", "origin", history.Ref+":refs/rivals/1")
	hook := `#!/bin/sh
unset GIT_QUARANTINE_PATH
git update-ref ` + history.Ref + ` refs/rivals/1
`
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	add(t, a, "from a")
	res, err := Sync(context.Background(), a, "origin", Options{})
	if err != nil || !res.Pushed || res.Tries != 1 {
		t.Fatalf("tries %d, pushed %v: %v", res.Tries, res.Pushed, err)
	}
	head := strings.TrimSpace(testgit.Git(t, a.Repo.WorkTree, "rev-parse", history.Ref))
	if got := strings.TrimSpace(testgit.Git(t, bare, "rev-parse", ClonesPrefix+cloneID(t, a))); got != head {
		t.Fatalf("a's ref on the remote is %s, a's snapshot %s", got, head)
	}
	if shared, rivals := testgit.Git(t, bare, "rev-parse", history.Ref), testgit.Git(t, bare, "rev-parse", "refs/rivals/1"); shared != rivals {
		t.Fatalf("the shared ref is %s, not the rival's %s", shared, rivals)
	}
	if err := os.Remove(filepath.Join(bare, "hooks", "pre-receive")); err != nil {
		t.Fatal(err)
	}
	if _, err := Sync(context.Background(), rival, "origin", Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := rival.Store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != 3 {
		t.Fatalf("the rival holds %d entries, want 3", len(f.Entries))
	}
}

// TestCopiedRepositoryGetsNewCloneID: two repositories with one clone ID
// (one is a copy of the other) race for one ref. The one that finds its
// ref moved by the other draws a new ID, says so, and pushes there; after
// quiet syncs both hold every entry and their IDs differ.
func TestCopiedRepositoryGetsNewCloneID(t *testing.T) {
	cs := clones(t, 2)
	a, b := cs[0], cs[1]
	id := cloneID(t, a)
	if err := os.MkdirAll(filepath.Join(b.Repo.CommonDir, "memsync"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.Repo.CommonDir, "memsync", cloneFile), []byte(id+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	add(t, a, "from a")
	if _, err := Sync(context.Background(), a, "origin", Options{}); err != nil {
		t.Fatal(err)
	}
	// b fetched a's ref as its own; a moves it before b pushes.
	add(t, a, "from a, later")
	hook := "#!/bin/sh\nunset GIT_QUARANTINE_PATH\nif [ ! -e moved ]; then touch moved; git update-ref " + ClonesPrefix + id + " refs/rivals/later; fi\n"
	if _, err := a.Take(context.Background(), "", history.Provenance{}); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(filepath.Dir(a.Repo.WorkTree), "remote.git")
	testgit.Git(t, a.Repo.WorkTree, "push", "-q", "origin", history.Ref+":refs/rivals/later")
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	add(t, b, "from b")
	res, err := Sync(context.Background(), b, "origin", Options{})
	if err != nil || !res.Pushed || res.Tries != 2 || res.Clone == id {
		t.Fatalf("%+v: %v", res, err)
	}
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[len(res.Notes)-1], "is "+res.Clone+" from now on") {
		t.Fatalf("notes %q", res.Notes)
	}
	if got := cloneID(t, b); got != res.Clone {
		t.Fatalf("b's clone ID is %s, the sync said %s", got, res.Clone)
	}
	for range 2 {
		for _, h := range cs {
			if _, err := Sync(context.Background(), h, "origin", Options{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, h := range cs {
		f, _ := h.Store.Load()
		if len(f.Entries) != 3 {
			t.Fatalf("%s holds %d entries, want 3", h.Repo.WorkTree, len(f.Entries))
		}
	}
}

// TestSyncMergesEveryClone: five clones add and push; a sixth that syncs
// once gets every entry, in one merge per snapshot it lacked, and a clone
// ref the remote dropped is dropped here too.
func TestSyncMergesEveryClone(t *testing.T) {
	cs := clones(t, 6)
	for i, h := range cs[:5] {
		add(t, h, fmt.Sprintf("from clone %d", i))
		if _, err := Sync(context.Background(), h, "origin", Options{}); err != nil {
			t.Fatal(err)
		}
	}
	last := cs[5]
	add(t, last, "from the last clone")
	res, err := Sync(context.Background(), last, "origin", Options{})
	if err != nil || !res.Pushed {
		t.Fatalf("%+v %v", res, err)
	}
	// Clone 4's snapshot holds all of the others' (each synced after the
	// one before): one merge.
	if len(res.Merged) != 1 || res.Merged[0] != ClonesPrefix+cloneID(t, cs[4]) {
		t.Fatalf("merged %q", res.Merged)
	}
	f, _ := last.Store.Load()
	if len(f.Entries) != 6 {
		t.Fatalf("the last clone holds %d entries", len(f.Entries))
	}
	gone := ClonesPrefix + cloneID(t, cs[0])
	testgit.Git(t, last.Repo.WorkTree, "push", "-q", "origin", ":"+gone)
	if _, err := Sync(context.Background(), last, "origin", Options{}); err != nil {
		t.Fatal(err)
	}
	if refs, _ := last.RefsUnder(trackingPrefix("origin") + "clones/" + cloneID(t, cs[0])); len(refs) != 0 {
		t.Fatalf("the tracking ref of a dropped clone ref is still here: %v", refs)
	}
}

// TestIndependentHeadsMergedInTurn: three clones that each add without
// seeing the others; a fourth merges all three snapshots, one merge each,
// and reports every change once.
func TestIndependentHeadsMergedInTurn(t *testing.T) {
	cs := clones(t, 4)
	for i, h := range cs[:3] {
		add(t, h, fmt.Sprintf("independent %d", i))
		if _, err := h.Take(context.Background(), "", history.Provenance{}); err != nil {
			t.Fatal(err)
		}
		id := cloneID(t, h)
		testgit.Git(t, h.Repo.WorkTree, "push", "-q", "origin", history.Ref+":"+ClonesPrefix+id)
	}
	res, err := Sync(context.Background(), cs[3], "origin", Options{})
	if err != nil || len(res.Merged) != 3 || len(res.Changes) != 3 {
		t.Fatalf("merged %q, %d changes: %v", res.Merged, len(res.Changes), err)
	}
	for _, c := range res.Changes {
		if c.Kind != history.Added {
			t.Fatalf("change %+v", c)
		}
	}
}
