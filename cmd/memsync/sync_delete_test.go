package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSyncDeleteReachesEveryClone: three clones share a memory through a
// bare remote; one deletes an entry the others left unchanged, while another
// adds one and syncs first. After each
// clone syncs (the deleter first, then the others, then once more round),
// the entry is gone from every clone's memory (active file and archive) and
// from the remote's snapshot, and the other entries are all there.
func TestSyncDeleteReachesEveryClone(t *testing.T) {
	env, root, remote := bareRemote(t)
	var clones []string
	for c := range 3 {
		dir := filepath.Join(root, fmt.Sprintf("clone%d", c))
		gitRun(t, env, root, "clone", "-q", remote, dir)
		memsyncIn(t, env, dir, "init")
		clones = append(clones, dir)
	}
	var ids []string
	for i := range 4 {
		ids = append(ids, strings.TrimSpace(memsyncIn(t, env, clones[0], "add", fmt.Sprintf("shared fact %d", i))))
	}
	for _, d := range append(clones, clones[0]) {
		memsyncIn(t, env, d, "sync")
	}
	for c, d := range clones {
		if have := memoryIDs(t, d); len(have) != len(ids) {
			t.Fatalf("clone %d before the delete holds %d entries, want %d", c, len(have), len(ids))
		}
	}

	// Meanwhile another clone adds and pushes, so the deleter's sync is a
	// real three-way merge: deleted on ours, unchanged on theirs.
	gone := ids[1]
	memsyncIn(t, env, clones[2], "delete", gone)
	ids = append(ids, strings.TrimSpace(memsyncIn(t, env, clones[0], "add", "a later fact")))
	memsyncIn(t, env, clones[0], "sync")
	for _, d := range []string{clones[2], clones[0], clones[1], clones[2], clones[0], clones[1]} {
		memsyncIn(t, env, d, "sync")
	}
	for c, d := range clones {
		have := memoryIDs(t, d)
		if have[gone] {
			t.Fatalf("clone %d still holds the deleted entry %s", c, gone)
		}
		if len(have) != len(ids)-1 {
			t.Fatalf("clone %d holds %d entries, want %d", c, len(have), len(ids)-1)
		}
	}
	if have := snapshotIDs(t, env, remote); have[gone] || len(have) != len(ids)-1 {
		t.Fatalf("the remote's snapshot: %v (deleted: %s)", have, gone)
	}
}

// TestSyncDeliberateMassRemovalReachesOthers: a clone deletes most of the
// memory with memsync delete (or accepts a removal it did not make with
// --accept-removal) and syncs; the other clones' syncs take the removal
// without --force, since the snapshots say it was deliberate. A mass
// removal whose snapshots say nothing (an older memsync, a hand-made
// commit) still stops the other clones (exit 5).
func TestSyncDeliberateMassRemovalReachesOthers(t *testing.T) {
	env, root, remote := bareRemote(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		gitRun(t, env, root, "clone", "-q", remote, d)
		memsyncIn(t, env, d, "init")
	}
	var ids []string
	for i := range 5 {
		ids = append(ids, strings.TrimSpace(memsyncIn(t, env, a, "add", fmt.Sprintf("fact %d", i))))
	}
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")

	memsyncIn(t, env, a, append([]string{"delete"}, ids[:4]...)...)
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	if have := memoryIDs(t, b); len(have) != 1 || !have[ids[4]] {
		t.Fatalf("b after a's deliberate deletion: %v", have)
	}

	// Accepted by a person in a: the same.
	for i := range 4 {
		memsyncIn(t, env, a, "add", fmt.Sprintf("second fact %d", i))
	}
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	if err := os.WriteFile(filepath.Join(a, ".agent", "memories.md"), []byte("# Memories\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	memsyncIn(t, env, a, "sync", "--accept-removal")
	memsyncIn(t, env, b, "sync")
	if have := memoryIDs(t, b); len(have) != 0 {
		t.Fatalf("b after a's accepted removal: %v", have)
	}

	// A mass removal no snapshot vouches for: b refuses it.
	for i := range 4 {
		memsyncIn(t, env, b, "add", fmt.Sprintf("third fact %d", i))
	}
	memsyncIn(t, env, b, "sync")
	tip := strings.TrimSpace(gitRun(t, env, b, "rev-parse", "refs/memsync/snapshots"))
	empty := strings.TrimSpace(gitRunIn(t, env, b, "", "mktree"))
	bare := strings.TrimSpace(gitRunIn(t, env, b, "", "commit-tree", empty, "-p", tip, "-m", "emptied by hand"))
	gitRun(t, env, b, "push", "-q", "origin", bare+":refs/memsync/snapshots")
	gitRun(t, env, b, "update-ref", "refs/memsync/snapshots", tip)
	memsyncIn(t, env, a, "sync", "--force") // a takes it, deliberately
	memsyncIn(t, env, b, "add", "one more")
	_, stderr := memsyncFails(t, env, b, 5, "sync")
	if !strings.Contains(stderr, "--force") {
		t.Fatalf("b's refusal: %s", stderr)
	}
	if have := memoryIDs(t, b); len(have) != 5 {
		t.Fatalf("b after the refusal holds %d entries, want 5", len(have))
	}
}
