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
// --accept-removal) and syncs; the other clone's sync stops (exit 5, the
// memory untouched), naming the snapshot, how many entries it removes and
// --force, and takes the removal with sync --force. A mass removal whose
// snapshots say nothing (a hand-made commit) stops it the same way.
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
	refusedMassRemoval(t, env, b, a, 4, 5)
	memsyncIn(t, env, b, "sync", "--force")
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
	refusedMassRemoval(t, env, b, a, 5, 5)
	memsyncIn(t, env, b, "sync", "--force")
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
	_, stderr := memsyncRefused(t, env, b, "sync")
	if !strings.Contains(stderr, "--force") {
		t.Fatalf("b's refusal: %s", stderr)
	}
	if have := memoryIDs(t, b); len(have) != 5 {
		t.Fatalf("b after the refusal holds %d entries, want 5", len(have))
	}
}

// TestSyncForgedRemovalTrailer: a hand-made commit on a clone's ref on the
// remote that empties the memory and carries memsync's trailers, saying
// its removals were deliberate, does not empty the other clones' memories:
// each clone's sync stops (exit 5, nothing changed) naming the commit and
// how many entries it would remove, and the remote's shared ref keeps the
// entries.
func TestSyncForgedRemovalTrailer(t *testing.T) {
	env, root, remote := bareRemote(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		gitRun(t, env, root, "clone", "-q", remote, d)
		memsyncIn(t, env, d, "init")
	}
	for i := range 5 {
		memsyncIn(t, env, a, "add", fmt.Sprintf("fact %d", i))
	}
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")

	// The forger writes on a's ref: an empty memory, vouched for by a trailer.
	refs := strings.Fields(gitRunIn(t, env, root, "", "--git-dir="+remote, "for-each-ref", "--format=%(refname)", "refs/memsync/clones/"))
	if len(refs) == 0 {
		t.Fatal("no clone refs on the remote")
	}
	tip := strings.TrimSpace(gitRunIn(t, env, root, "", "--git-dir="+remote, "rev-parse", refs[0]))
	empty := strings.TrimSpace(gitRunIn(t, env, root, "", "--git-dir="+remote, "mktree"))
	msg := "memsync snapshot\n\nMemsync-Entries: 0\nMemsync-Changes: +0 -5 ~0\nMemsync-Removal: deliberate\n"
	forged := strings.TrimSpace(gitRunIn(t, env, root, msg, "--git-dir="+remote, "commit-tree", empty, "-p", tip))
	gitRunIn(t, env, root, "", "--git-dir="+remote, "update-ref", refs[0], forged)

	for _, d := range []string{a, b} {
		_, stderr := memsyncRefused(t, env, d, "sync")
		if !strings.Contains(stderr, forged[:12]) || !strings.Contains(stderr, "5 of 5") || !strings.Contains(stderr, "--force") {
			t.Errorf("%s's refusal names not the commit, the count and --force: %s", filepath.Base(d), stderr)
		}
		if have := memoryIDs(t, d); len(have) != 5 {
			t.Errorf("%s after the forged removal holds %d entries, want 5", filepath.Base(d), len(have))
		}
	}
	if have := snapshotIDs(t, env, remote); len(have) != 5 {
		t.Errorf("the remote's snapshot holds %d entries, want 5", len(have))
	}
}

// refusedMassRemoval checks that dir's sync stops at the mass removal
// from's latest snapshot makes (n of total entries), names it and --force,
// and leaves the memory as it was.
func refusedMassRemoval(tb testing.TB, env []string, dir, from string, n, total int) {
	tb.Helper()
	before := memoryIDs(tb, dir)
	commit := strings.TrimSpace(gitRun(tb, env, from, "rev-parse", "refs/memsync/snapshots"))
	_, stderr := memsyncRefused(tb, env, dir, "sync")
	if want := fmt.Sprintf("%d of %d", n, total); !strings.Contains(stderr, want) || !strings.Contains(stderr, commit[:12]) || !strings.Contains(stderr, "--force") {
		tb.Errorf("the refusal names not %s, %s and --force: %s", commit[:12], want, stderr)
	}
	if have := memoryIDs(tb, dir); len(have) != len(before) {
		tb.Errorf("after the refusal: %d entries, want %d", len(have), len(before))
	}
}
