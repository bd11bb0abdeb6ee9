package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// TestTakeRemovalGuard: a memory cut to one of four entries by hand is not
// snapshotted (a *RemovalError naming the counts, the ref unmoved); the same
// removal through the store's own rewrite (recorded in the removal log)
// passes, and the snapshot empties the log; AcceptRemoval passes too.
func TestTakeRemovalGuard(t *testing.T) {
	h, dir := testRepo(t)
	h.Store.StateDir = filepath.Join(t.TempDir(), "state")
	h.Store.RemovalLog = filepath.Join(h.Store.StateDir, "removed")
	full := memText("a=1", "b=2", "c=3", "d=4")
	write(t, h.Store.Path(), full)
	first := take(t, h, "").Snapshot.Commit

	write(t, h.Store.Path(), memText("a=1"))
	_, err := h.Take(context.Background(), "", Provenance{})
	var re *RemovalError
	if !errors.As(err, &re) || re.Removed != 3 || re.Total != 4 || !errors.Is(err, ErrMassRemoval) {
		t.Fatalf("a hand-cut memory: %v", err)
	}
	if got := strings.TrimSpace(testgit.Git(t, dir, "rev-parse", Ref)); got != first {
		t.Fatalf("the ref moved to %s", got)
	}

	write(t, h.Store.Path(), full)
	if err := h.Store.Update(func(f *memfile.File) error {
		f.Entries = f.Entries[:1]
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if res := take(t, h, ""); !res.Created {
		t.Fatal("memsync's own removal was not snapshotted")
	}
	if _, err := os.Stat(h.Store.RemovalLog); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the removal log after the snapshot: %v", err)
	}

	write(t, h.Store.Path(), full)
	take(t, h, "")
	write(t, h.Store.Path(), memfile.Header+"\n")
	h.AcceptRemoval = true
	if res := take(t, h, ""); !res.Created {
		t.Fatal("AcceptRemoval did not snapshot")
	}
}
