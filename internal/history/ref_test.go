package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/internal/testgit"
)

// The ref moves as git moves a loose ref: a packed ref is overridden, a held
// lock file stops the update without touching the ref, and a ref that moved
// behind memsync's back is not overwritten.
func TestUpdateRefFollowsGitsProtocol(t *testing.T) {
	h, dir := testRepo(t)
	mem := h.Store.Path()
	write(t, mem, "# Memories\n\n"+entry(idA, "a", "first"))
	first := take(t, h, "").Snapshot.Commit

	// Packed: the next snapshot still moves it, and git reads the new value.
	testgit.Git(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "memsync", "snapshots")); !os.IsNotExist(err) {
		t.Fatalf("pack-refs left the loose ref: %v", err)
	}
	write(t, mem, "# Memories\n\n"+entry(idA, "a", "first")+"\n"+entry(idB, "b", "second"))
	second := take(t, h, "").Snapshot.Commit
	if got := strings.TrimSpace(testgit.Git(t, dir, "rev-parse", Ref)); got != second || got == first {
		t.Fatalf("git reads %s, want %s", got, second)
	}
	if got := strings.TrimSpace(testgit.Git(t, dir, "rev-parse", Ref+"~1")); got != first {
		t.Fatalf("parent %s, want %s", got, first)
	}
	testgit.Git(t, dir, "fsck", "--strict")

	// A lock held by another git process (fresh, and still there when the
	// wait ends): an error naming it, the ref as it was.
	lockPath := filepath.Join(dir, ".git", "refs", "memsync", "snapshots.lock")
	write(t, lockPath, "")
	write(t, mem, "# Memories\n\n"+entry(idC, "c", "third"))
	defer func(w time.Duration) { refLockWait = w }(refLockWait)
	refLockWait = 0
	if _, err := h.Take(context.Background(), "", h.CurrentProvenance("post-commit")); err == nil || !strings.Contains(err.Error(), lockPath) {
		t.Fatalf("update with the lock held: %v", err)
	}
	if got := strings.TrimSpace(testgit.Git(t, dir, "rev-parse", Ref)); got != second {
		t.Fatalf("the ref moved to %s under a held lock", got)
	}
	if err := os.Remove(lockPath); err != nil {
		t.Fatal(err)
	}

	// Moved behind memsync's back between reading and updating: refused.
	if err := h.updateRef(plumbing.NewHash(first), plumbing.NewHash(first)); err == nil || !strings.Contains(err.Error(), "moved") {
		t.Fatalf("update from a stale value: %v", err)
	}
	if got := strings.TrimSpace(testgit.Git(t, dir, "rev-parse", Ref)); got != second {
		t.Fatalf("a stale update moved the ref to %s", got)
	}
	if _, err := os.Stat(lockPath); !os.IsNotExist(err) {
		t.Fatalf("a failed update left its lock file: %v", err)
	}
	third := take(t, h, "").Snapshot.Commit
	if third == second {
		t.Fatal("no snapshot after the lock was released")
	}

	// A lock left by a killed writer (older than StaleRefLockAge while the
	// writers' lock is free): the next snapshot removes it and moves the ref.
	write(t, lockPath, "")
	old := time.Now().Add(-StaleRefLockAge - time.Second)
	if err := os.Chtimes(lockPath, old, old); err != nil {
		t.Fatal(err)
	}
	write(t, mem, "# Memories\n\n"+entry(idA, "a", "fourth"))
	if fourth := take(t, h, "").Snapshot.Commit; fourth == third {
		t.Fatal("no snapshot over a stale lock file")
	}
	if _, err := os.Stat(lockPath); !os.IsNotExist(err) {
		t.Fatalf("the stale lock file is still there: %v", err)
	}
}

// A Take whose context is done (a hook out of time) stops before it moves
// the ref and leaves no lock file; nothing in the process is latched: the
// snapshots taken after it, in the same process, work.
func TestTakeAfterCancelledTake(t *testing.T) {
	h, dir := testRepo(t)
	mem := h.Store.Path()
	write(t, mem, "# Memories\n\n"+entry(idA, "a", "first"))
	first := take(t, h, "").Snapshot.Commit
	write(t, mem, "# Memories\n\n"+entry(idA, "a", "first")+"\n"+entry(idB, "b", "second"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Take(ctx, "", h.CurrentProvenance("post-commit")); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled Take: %v", err)
	}
	if got := strings.TrimSpace(testgit.Git(t, dir, "rev-parse", Ref)); got != first {
		t.Fatalf("a cancelled Take moved the ref to %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "memsync", "snapshots.lock")); !os.IsNotExist(err) {
		t.Fatalf("lock file after a cancelled Take: %v", err)
	}
	second := take(t, h, "").Snapshot.Commit
	write(t, mem, "# Memories\n\n"+entry(idC, "c", "third"))
	third := take(t, h, "").Snapshot.Commit
	if second == first || third == second {
		t.Fatalf("snapshots after a cancelled one: %s %s %s", first, second, third)
	}
}
