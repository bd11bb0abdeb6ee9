package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// massSetup makes two clones a and b of a bare remote, both holding four
// entries, and returns the IDs of the first three.
func massSetup(t *testing.T) (env []string, a, b string, ids []string) {
	t.Helper()
	env, root, remote := bareRemote(t)
	a, b = filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, c := range []string{a, b} {
		gitRun(t, env, root, "clone", "-q", remote, c)
	}
	for _, s := range []string{"one: the cache key is the path", "two: retry with backoff", "three: pin the toolchain", "four: keep the lock short"} {
		memsyncIn(t, env, a, "add", s)
	}
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	var listed []struct {
		ID, Content string
	}
	if err := json.Unmarshal([]byte(memsyncIn(t, env, a, "list", "--json")), &listed); err != nil || len(listed) != 4 {
		t.Fatalf("list --json: %v %+v", err, listed)
	}
	for _, e := range listed {
		if !strings.HasPrefix(e.Content, "four") {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) != 3 {
		t.Fatalf("ids %q", ids)
	}
	return env, a, b, ids
}

// TestPurgeMostEntriesOtherCloneSyncs: a purge that takes out more than
// half of the entries stops the other clone's plain sync (exit 5, nothing
// changed) with a message saying it is a purge and what to run, since
// tombstones anyone can write vouch for nothing; sync --force applies it
// and keeps what that clone added meanwhile.
func TestPurgeMostEntriesOtherCloneSyncs(t *testing.T) {
	env, a, b, ids := massSetup(t)
	memsyncIn(t, env, a, append([]string{"purge"}, ids...)...)
	memsyncIn(t, env, b, "add", "five: b learned this meanwhile")

	out, stderr, code := memsyncRun(t, env, b, "sync")
	if code != 5 || !strings.Contains(stderr, "tombstones would purge them here") || !strings.Contains(stderr, "memsync sync --force") {
		t.Fatalf("b's sync after a purge of 3 of 4 entries: exit %d\n%s%s", code, out, stderr)
	}
	if list := memsyncIn(t, env, b, "list"); !strings.Contains(list, "one:") || !strings.Contains(list, "five:") {
		t.Fatalf("the refused sync changed b's memory:\n%s", list)
	}
	out = memsyncIn(t, env, b, "sync", "--force")
	if !strings.Contains(out, "purged 3 entries") {
		t.Errorf("b's sync --force does not say it applied the purge:\n%s", out)
	}
	list := memsyncIn(t, env, b, "list")
	for _, gone := range []string{"one:", "two:", "three:"} {
		if strings.Contains(list, gone) {
			t.Errorf("b still lists %q:\n%s", gone, list)
		}
	}
	for _, kept := range []string{"four:", "five:"} {
		if !strings.Contains(list, kept) {
			t.Errorf("b lost %q:\n%s", kept, list)
		}
	}
}

// TestForgedTombstonesStopSync: a hand-made commit on a clone ref whose
// tree adds a purged blob naming every entry does not purge every other
// clone's memory and history: their sync stops with exit 5, nothing lost.
func TestForgedTombstonesStopSync(t *testing.T) {
	env, a, b, ids := massSetup(t)
	blob := strings.TrimSpace(gitRunIn(t, env, b, strings.Join(ids, "\n")+"\n", "hash-object", "-w", "--stdin"))
	idx := filepath.Join(t.TempDir(), "index")
	envIdx := append(append([]string{}, env...), "GIT_INDEX_FILE="+idx)
	gitRun(t, envIdx, b, "read-tree", "refs/memsync/snapshots")
	gitRun(t, envIdx, b, "update-index", "--add", "--cacheinfo", "100644,"+blob+",purged")
	tree := strings.TrimSpace(gitRun(t, envIdx, b, "write-tree"))
	forged := strings.TrimSpace(gitRun(t, env, b, "commit-tree", tree, "-p", "refs/memsync/snapshots", "-m", "tidy"))
	gitRun(t, env, b, "push", "-q", "origin", forged+":refs/memsync/clones/tidy")
	if err := os.Remove(idx); err != nil {
		t.Fatal(err)
	}

	out, stderr, code := memsyncRun(t, env, a, "sync")
	if code != 5 || !strings.Contains(stderr, "(3 of 4)") {
		t.Fatalf("a's sync with forged tombstones: exit %d\n%s%s", code, out, stderr)
	}
	if list := memsyncIn(t, env, a, "list"); strings.Count(list, ": ") < 4 {
		t.Fatalf("forged tombstones took a's entries:\n%s", list)
	}
}
