package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSyncPartialClone: a partial clone (git clone --filter=blob:none, as
// large repositories are cloned) of a repository whose remote holds the
// team's memory. git fetches into a partial clone without blobs unless told
// otherwise, and memsync reads its snapshots' chunks from the object store
// itself (no lazy fetch), so its sync must bring the snapshots whole: the
// first sync takes the team's entries, later syncs carry entries both ways,
// and memsync log reads the history. A partial clone whose refs/memsync/
// were fetched without their blobs (by an older memsync, or a plain git
// fetch of them) is repaired by its next sync.
func TestSyncPartialClone(t *testing.T) {
	env, root, remote := bareRemote(t)
	gitRun(t, env, remote, "config", "uploadpack.allowFilter", "true")
	first := filepath.Join(root, "first")
	gitRun(t, env, root, "clone", "-q", remote, first)
	for _, e := range []string{"the team learned one", "the team learned two", "the team learned three"} {
		memsyncIn(t, env, first, "add", e)
	}
	memsyncIn(t, env, first, "sync")

	url := "file://" + remote // a local path would hard-link the objects, filter or not
	partial := filepath.Join(root, "partial")
	gitRun(t, env, root, "clone", "-q", "--filter=blob:none", url, partial)
	memsyncIn(t, env, partial, "sync")
	if out := memsyncIn(t, env, partial, "list"); !strings.Contains(out, "the team learned three") {
		t.Fatalf("the partial clone after its first sync:\n%s", out)
	}
	memsyncIn(t, env, partial, "add", "the partial clone learned this")
	memsyncIn(t, env, partial, "sync")
	memsyncIn(t, env, first, "add", "first learned more")
	memsyncIn(t, env, first, "sync")
	memsyncIn(t, env, partial, "sync")
	if out := memsyncIn(t, env, first, "list"); !strings.Contains(out, "the partial clone learned this") {
		t.Errorf("first after the syncs:\n%s", out)
	}
	if out := memsyncIn(t, env, partial, "list"); !strings.Contains(out, "first learned more") {
		t.Errorf("the partial clone after the syncs:\n%s", out)
	}
	if out := memsyncIn(t, env, partial, "log"); !strings.Contains(out, "snapshot") {
		t.Errorf("memsync log in the partial clone:\n%s", out)
	}

	// refs/memsync/ fetched without their blobs: the next sync repairs it.
	torn := filepath.Join(root, "torn")
	gitRun(t, env, root, "clone", "-q", "--filter=blob:none", url, torn)
	gitRun(t, env, torn, "fetch", "-q", "--no-tags", "--refmap=", "origin",
		"+refs/memsync/snapshot*:refs/memsync/remotes/origin/snapshot*", "+refs/memsync/clones/*:refs/memsync/remotes/origin/clones/*")
	memsyncIn(t, env, torn, "sync")
	if out := memsyncIn(t, env, torn, "list"); !strings.Contains(out, "first learned more") || !strings.Contains(out, "the partial clone learned this") {
		t.Errorf("a partial clone fetched without the snapshots' blobs, after its sync:\n%s", out)
	}
}
