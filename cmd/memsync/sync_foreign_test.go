package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSyncPassesOverForeignCommits: someone pushes with plain git a commit
// that is no memsync snapshot (a branch's) to the remote's shared
// refs/memsync/snapshots and to a gone clone's ref, an annotated tag and
// a blob to two more clone refs. Every clone's sync
// still merges the others' snapshots and pushes its own (exit 0), says in
// a note which ref it passed over, and the shared ref holds a snapshot
// again after the next push; no entry is lost.
func TestSyncPassesOverForeignCommits(t *testing.T) {
	env, root, remote := bareRemote(t)
	var clones [2]string
	for i := range clones {
		clones[i] = filepath.Join(root, []string{"a", "b"}[i])
		gitRun(t, env, root, "clone", "-q", remote, clones[i])
		memsyncIn(t, env, clones[i], "add", "clone "+[]string{"a", "b"}[i]+" learned this")
		memsyncIn(t, env, clones[i], "sync")
	}
	seed := filepath.Join(root, "seed")
	if err := os.WriteFile(filepath.Join(seed, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, seed, "add", "main.go")
	gitRun(t, env, seed, "commit", "-q", "-m", "a branch's commit")
	gitRun(t, env, seed, "tag", "-a", "-m", "a release", "v1")
	blob := strings.TrimSpace(gitRunIn(t, env, seed, "not a commit\n", "hash-object", "-w", "--stdin"))
	gitRun(t, env, seed, "push", "-q", "-f", "origin", "HEAD:refs/memsync/snapshots", "HEAD:refs/memsync/clones/gone-1234abcd",
		"v1:refs/memsync/clones/tagged-1234abcd", blob+":refs/memsync/clones/blob-1234abcd")

	memsyncIn(t, env, clones[0], "add", "a learned more after the foreign push")
	cmd := exec.Command(memsyncBinary(t), "sync")
	cmd.Dir, cmd.Env = clones[0], env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("a's sync with foreign commits on the remote: %v\n%s", err, out)
	}
	for _, ref := range []string{"refs/memsync/clones/gone-1234abcd", "refs/memsync/clones/tagged-1234abcd", "refs/memsync/clones/blob-1234abcd"} {
		if !strings.Contains(string(out), ref) {
			t.Errorf("a's sync does not say it passed over %s:\n%s", ref, out)
		}
	}
	for _, dir := range []string{clones[1], clones[0], clones[1]} {
		memsyncIn(t, env, dir, "sync")
	}
	for _, dir := range clones {
		out := memsyncIn(t, env, dir, "list")
		for _, want := range []string{"clone a learned this", "clone b learned this", "a learned more after the foreign push"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s after the syncs lacks %q:\n%s", dir, want, out)
			}
		}
	}
	if out := gitRun(t, env, remote, "ls-tree", "--name-only", "refs/memsync/snapshots"); strings.Contains(out, "main.go") {
		t.Errorf("the shared ref still holds the foreign commit after the pushes:\n%s", out)
	}
}

// TestSyncTagOnCloneRefKeepsEntries: an annotated tag on a remote's clone
// ref (someone's backup of a snapshot, pushed with plain git) whose commit
// holds this clone's newest snapshot. git merge-base --independent answers
// with the tag's commit, which is no fetched ref's: the sync must not take
// that for "ours is behind the one other snapshot" and fast-forward the
// memory to a snapshot that lacks this clone's entry (which the push then
// took off this clone's ref too).
func TestSyncTagOnCloneRefKeepsEntries(t *testing.T) {
	env, root, remote := bareRemote(t)
	dirs := map[string]string{}
	for _, c := range []string{"a", "b", "d"} {
		dirs[c] = filepath.Join(root, c)
		gitRun(t, env, root, "clone", "-q", remote, dirs[c])
	}
	for i := range 10 {
		memsyncIn(t, env, dirs["a"], "add", fmt.Sprintf("shared entry %d", i))
	}
	memsyncIn(t, env, dirs["a"], "sync")
	memsyncIn(t, env, dirs["b"], "sync")
	memsyncIn(t, env, dirs["b"], "add", "b learned this")
	memsyncIn(t, env, dirs["b"], "snapshot")
	memsyncIn(t, env, dirs["a"], "add", "a learned this and synced it")
	memsyncIn(t, env, dirs["a"], "sync")
	memsyncIn(t, env, dirs["d"], "sync")
	memsyncIn(t, env, dirs["d"], "add", "d learned this")
	memsyncIn(t, env, dirs["d"], "snapshot")
	gitRun(t, env, dirs["d"], "tag", "-a", "-m", "a backup", "backup", "refs/memsync/snapshots")
	gitRun(t, env, dirs["d"], "push", "-q", "origin", "backup:refs/memsync/clones/backup")
	id, err := os.ReadFile(filepath.Join(dirs["b"], ".git", "memsync", "clone"))
	if err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, dirs["b"], "push", "-q", "origin", "refs/memsync/snapshots:refs/memsync/clones/"+strings.TrimSpace(string(id)))

	memsyncIn(t, env, dirs["a"], "sync")
	out := memsyncIn(t, env, dirs["a"], "list")
	for _, want := range []string{"a learned this and synced it", "b learned this"} {
		if !strings.Contains(out, want) {
			t.Errorf("a after its sync lacks %q:\n%s", want, out)
		}
	}
}
