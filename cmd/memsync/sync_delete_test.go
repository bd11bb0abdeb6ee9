package main

import (
	"fmt"
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
