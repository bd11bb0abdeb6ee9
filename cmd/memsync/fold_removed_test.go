package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/memfile"
)

// foldRemovedSetup makes a clone (hooks installed) whose memory held three
// entries when a branch "old" committed .agent/memories.md, and then lost
// two of them: one deleted, one purged, both synced to the remote. It
// returns the clone, the remote and the IDs kept, deleted and purged.
func foldRemovedSetup(t *testing.T) (env []string, dir, remote, kept, deleted, purged string) {
	t.Helper()
	env, root, remote := bareRemote(t)
	dir = filepath.Join(root, "clone")
	gitRun(t, env, root, "clone", "-q", remote, dir)
	memsyncIn(t, env, dir, "init")
	memsyncIn(t, env, dir, "hooks", "install")
	kept = strings.TrimSpace(memsyncIn(t, env, dir, "add", "a fact that stays"))
	deleted = strings.TrimSpace(memsyncIn(t, env, dir, "add", "a fact deleted later"))
	purged = strings.TrimSpace(memsyncIn(t, env, dir, "add", "a fact purged later, text zebracorn"))
	memsyncIn(t, env, dir, "sync")
	main := strings.TrimSpace(gitRun(t, env, dir, "rev-parse", "--abbrev-ref", "HEAD"))
	gitRun(t, env, dir, "checkout", "-q", "-b", "old")
	// The branch commits the file itself, as one made before memsync
	// linked it (or a teammate's) does.
	file := filepath.Join(dir, ".agent", "memories.md")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, dir, "add", "-f", ".agent/memories.md")
	gitRun(t, env, dir, "commit", "-q", "-m", "track the memory")
	gitRun(t, env, dir, "checkout", "-q", main)
	memsyncIn(t, env, dir, "delete", deleted)
	memsyncIn(t, env, dir, "purge", purged)
	memsyncIn(t, env, dir, "sync")
	return env, dir, remote, kept, deleted, purged
}

// expectGone checks that neither removed entry is in the clone's memory nor
// in the remote's snapshots after a sync, and that the purged text is on no
// ref of the remote's newest snapshots.
func expectGone(t *testing.T, env []string, dir, remote, kept string, removed ...string) {
	t.Helper()
	memsyncIn(t, env, dir, "sync")
	have := homeIDs(t, env, dir)
	if !have[kept] {
		t.Fatalf("the kept entry %s is missing: %v", kept, have)
	}
	remoteHas := snapshotIDs(t, env, remote)
	for _, id := range removed {
		if have[id] {
			t.Errorf("the removed entry %s came back into the memory", id)
		}
		if remoteHas[id] {
			t.Errorf("the removed entry %s was pushed to the remote again", id)
		}
	}
	if out := snapFile(t, env, remote, "refs/memsync/snapshots:memories.md"); strings.Contains(out, "zebracorn") {
		t.Errorf("the purged text is on the remote's snapshot again:\n%s", out)
	}
}

// homeIDs is the IDs of the memory home of the repository at dir (a
// branch's tracked .agent/memories.md is no link to it), active and archive.
func homeIDs(t *testing.T, env []string, dir string) map[string]bool {
	t.Helper()
	common := strings.TrimSpace(gitRun(t, env, dir, "rev-parse", "--path-format=absolute", "--git-common-dir"))
	have := map[string]bool{}
	for _, p := range []string{"memories.md", "archive/memories.md"} {
		data, err := os.ReadFile(filepath.Join(common, "memsync", p))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, e := range memfile.Parse(data).Entries {
			have[e.ID] = true
		}
	}
	return have
}

// TestCheckoutOldBranchKeepsRemovals: git checkout of a branch that
// committed .agent/memories.md before an entry was deleted and another
// purged runs the post-checkout hook, which folds the branch's copy into
// the memory: the deleted and the purged entry stay out, and the next sync
// pushes neither.
func TestCheckoutOldBranchKeepsRemovals(t *testing.T) {
	env, dir, remote, kept, deleted, purged := foldRemovedSetup(t)
	gitRun(t, env, dir, "checkout", "-q", "old")
	memsyncIn(t, env, dir, "list")
	expectGone(t, env, dir, remote, kept, deleted, purged)
}

// TestWorktreeFoldKeepsRemovals: a linked worktree whose .agent/memories.md
// is a regular-file copy that still holds a deleted and a purged entry (an
// editor's save, an old copy put back) is folded in by memsync worktree
// link, and by memsync worktree remove, without them.
func TestWorktreeFoldKeepsRemovals(t *testing.T) {
	for _, cmd := range []string{"link", "remove"} {
		t.Run(cmd, func(t *testing.T) {
			env, dir, remote, kept, deleted, purged := foldRemovedSetup(t)
			wt := filepath.Join(filepath.Dir(dir), "wt")
			memsyncIn(t, env, dir, "worktree", "add", "-q", wt, "-b", "side")
			file := filepath.Join(wt, ".agent", "memories.md")
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(gitRun(t, env, dir, "show", "old:.agent/memories.md")), 0o644); err != nil {
				t.Fatal(err)
			}
			memsyncIn(t, env, dir, "worktree", cmd, wt)
			expectGone(t, env, dir, remote, kept, deleted, purged)
		})
	}
}

// TestImportKeepsRemovals: importing an old copy of the memory (orch's
// memories.md) does not bring back what was deleted or purged.
func TestImportKeepsRemovals(t *testing.T) {
	env, dir, remote, kept, deleted, purged := foldRemovedSetup(t)
	old := filepath.Join(t.TempDir(), "memories.md")
	if err := os.WriteFile(old, []byte(gitRun(t, env, dir, "show", "old:.agent/memories.md")), 0o644); err != nil {
		t.Fatal(err)
	}
	memsyncIn(t, env, dir, "import", old)
	expectGone(t, env, dir, remote, kept, deleted, purged)
}

// TestSyncMergeKeepsRemovals: clone A deletes an entry and syncs; clone B
// merges the deletion, then gets the entry back in its file (pasted from an
// old copy, as an older memsync's fold of an old branch did) and syncs. A's
// next sync does not take it back, and after both sync again the entry is
// in neither memory nor on the remote.
func TestSyncMergeKeepsRemovals(t *testing.T) {
	env, root, remote := bareRemote(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		gitRun(t, env, root, "clone", "-q", remote, d)
		memsyncIn(t, env, d, "init")
	}
	kept := strings.TrimSpace(memsyncIn(t, env, a, "add", "a fact that stays"))
	gone := strings.TrimSpace(memsyncIn(t, env, a, "add", "a fact deleted later"))
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	file := filepath.Join(b, ".agent", "memories.md")
	old, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	memsyncIn(t, env, a, "delete", gone)
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	if homeIDs(t, env, b)[gone] {
		t.Fatal("b did not merge the deletion")
	}
	if err := os.WriteFile(file, old, 0o644); err != nil { // through the link
		t.Fatal(err)
	}
	memsyncIn(t, env, b, "sync")
	if !snapshotIDs(t, env, remote, "refs/memsync/snapshots")[gone] {
		t.Fatal("b's sync did not push the pasted entry; the test tests nothing")
	}
	memsyncIn(t, env, a, "sync")
	if homeIDs(t, env, a)[gone] {
		t.Fatalf("a's sync merged the deleted entry %s back", gone)
	}
	memsyncIn(t, env, b, "sync")
	expectGone(t, env, a, remote, kept, gone)
	if homeIDs(t, env, b)[gone] {
		t.Fatalf("b still holds the deleted entry %s after syncing a's merge", gone)
	}
}
