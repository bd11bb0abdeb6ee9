package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSyncReadsFormat1Snapshots: a teammate's memsync from before snapshot
// format 2 pushed format 1 snapshots (each file one blob), made here with
// git's plumbing as it made them. A clone of this memsync merges them, keeps
// both sides' entries, and pushes format 2 on top, which plain git rebuilds.
func TestSyncReadsFormat1Snapshots(t *testing.T) {
	env, root, remote := bareRemote(t)
	old := filepath.Join(root, "old")
	gitRun(t, env, root, "clone", "-q", remote, old)
	text := "# Memories\n\n## Pattern: from the old memsync\n- ID: oldoldoldold\n- Date: 2026-01-01\n- Content: written as format 1\n"
	blob := strings.TrimSpace(gitRunIn(t, env, old, text, "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(gitRunIn(t, env, old, "100644 blob "+blob+"\tmemories.md\n", "mktree"))
	commit := strings.TrimSpace(gitRunIn(t, env, old, "", "commit-tree", tree, "-m", "memsync snapshot"))
	gitRun(t, env, old, "push", "-q", "origin", commit+":refs/memsync/snapshots")

	dir := filepath.Join(root, "new")
	gitRun(t, env, root, "clone", "-q", remote, dir)
	memsyncIn(t, env, dir, "init")
	id := strings.TrimSpace(memsyncIn(t, env, dir, "add", "written by this memsync"))
	memsyncIn(t, env, dir, "sync")
	ids := memoryIDs(t, dir)
	if !ids["oldoldoldold"] || !ids[id] || len(ids) != 2 {
		t.Fatalf("after the sync the memory holds %v", ids)
	}
	if got := snapFile(t, env, remote, "refs/memsync/snapshots:format"); got != "memsync snapshot format 2\n" {
		t.Fatalf("the pushed snapshot's format blob: %q", got)
	}
	if have := snapshotIDs(t, env, remote); !have["oldoldoldold"] || !have[id] {
		t.Fatalf("the remote's snapshot holds %v", have)
	}
	// The format 1 snapshot stays in the history.
	gitRun(t, env, dir, "merge-base", "--is-ancestor", commit, "refs/memsync/snapshots")
}

// TestInitOffersTheTeamsMemory: memsync init in a fresh clone of a
// repository whose remote holds the team's memory says how to fetch it,
// and init --sync fetches it.
func TestInitOffersTheTeamsMemory(t *testing.T) {
	env, root, remote := bareRemote(t)
	a := filepath.Join(root, "a")
	gitRun(t, env, root, "clone", "-q", remote, a)
	memsyncIn(t, env, a, "init")
	id := strings.TrimSpace(memsyncIn(t, env, a, "add", "the team's first lesson"))
	memsyncIn(t, env, a, "sync")

	b := filepath.Join(root, "b")
	gitRun(t, env, root, "clone", "-q", remote, b)
	_, stderr, code := memsyncRun(t, env, b, "init")
	if code != 0 || !strings.Contains(stderr, "memsync sync origin (or memsync init --sync)") {
		t.Fatalf("init in a fresh clone: exit %d, stderr %q", code, stderr)
	}
	c := filepath.Join(root, "c")
	gitRun(t, env, root, "clone", "-q", remote, c)
	if out := memsyncIn(t, env, c, "init", "--sync"); !strings.Contains(out, "changed from origin") {
		t.Fatalf("init --sync: %s", out)
	}
	if !memoryIDs(t, c)[id] {
		t.Fatalf("init --sync did not fetch %s", id)
	}
	if _, stderr, _ := memsyncRun(t, env, c, "init"); strings.Contains(stderr, "hint:") {
		t.Fatalf("init after a sync still hints: %s", stderr)
	}
}
