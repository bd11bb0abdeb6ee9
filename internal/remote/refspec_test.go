package remote

import (
	"context"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/testgit"
)

// TestSyncTrackingRefsUnderUserRefspec: a remote whose own fetch refspec
// also maps refs/memsync/ (+refs/*:refs/remotes/origin/*: git push moves
// the tracking ref of the first refspec that matches, and the repository's
// config comes before git -c) still gets memsync's tracking refs of what a
// sync pushed.
func TestSyncTrackingRefsUnderUserRefspec(t *testing.T) {
	cs := clones(t, 2)
	a, b := cs[0], cs[1]
	add(t, b, "from b")
	if _, err := Sync(context.Background(), b, "origin", Options{}); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, a.Repo.WorkTree, "config", "--add", "remote.origin.fetch", "+refs/*:refs/remotes/origin/*")
	add(t, a, "from a")
	res, err := Sync(context.Background(), a, "origin", Options{})
	if err != nil || !res.Pushed {
		t.Fatalf("%+v %v", res, err)
	}
	tracking := testgit.Git(t, a.Repo.WorkTree, "for-each-ref", "--format=%(objectname)%09%(refname)", TrackingRef("origin"), trackingPrefix("origin")+"clones/"+res.Clone)
	want := res.Snapshot + "\t" + TrackingRef("origin") + "\n" + res.Snapshot + "\t" + trackingPrefix("origin") + "clones/" + res.Clone
	if strings.Join(sortedLines(tracking), "\n") != strings.Join(sortedLines(want), "\n") {
		t.Fatalf("a's tracking refs:\n%s\nwant:\n%s", tracking, want)
	}
}

// TestSyncMirrorRefspecKeepsLocalSnapshots: under a fetch refspec that maps
// every ref onto itself (+refs/*:refs/*, as git clone --mirror and git
// remote add --mirror=fetch set), a sync neither lets its fetch set this
// clone's snapshot ref to the remote's shared one (which dropped this
// clone's snapshots and then took the memory as deleting the other clone's
// entries) nor lets its push make refs/memsync/clones/ refs here.
func TestSyncMirrorRefspecKeepsLocalSnapshots(t *testing.T) {
	cs := clones(t, 2)
	a, b := cs[0], cs[1]
	for _, e := range []string{"b one", "b two", "b three"} {
		add(t, b, e)
	}
	if _, err := Sync(context.Background(), b, "origin", Options{}); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, a.Repo.WorkTree, "config", "--add", "remote.origin.fetch", "+refs/*:refs/*")
	add(t, a, "from a")
	if _, err := a.Take(context.Background(), "", history.Provenance{}); err != nil {
		t.Fatal(err)
	}
	mine := strings.TrimSpace(testgit.Git(t, a.Repo.WorkTree, "rev-parse", history.Ref))
	res, err := Sync(context.Background(), a, "origin", Options{})
	if err != nil || !res.Pushed {
		t.Fatalf("%+v %v", res, err)
	}
	f, err := a.Store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != 4 {
		t.Fatalf("a has %d entries after the sync, want 4", len(f.Entries))
	}
	if _, err := testgit.GitErr(a.Repo.WorkTree, "merge-base", "--is-ancestor", mine, history.Ref); err != nil {
		t.Fatalf("a's snapshot %s was dropped from %s", mine, history.Ref)
	}
	if got := testgit.Git(t, a.Repo.WorkTree, "for-each-ref", ClonesPrefix); got != "" {
		t.Fatalf("the push made local refs:\n%s", got)
	}
}

// TestSyncMirrorRemote: a remote that git push mirrors to
// (remote.<name>.mirror, set by git clone --mirror and git remote add
// --mirror=push) takes memsync's refspecs too: git refuses --mirror with
// refspecs, which failed every sync.
func TestSyncMirrorRemote(t *testing.T) {
	cs := clones(t, 1)
	a := cs[0]
	testgit.Git(t, a.Repo.WorkTree, "config", "remote.origin.mirror", "true")
	add(t, a, "from a")
	res, err := Sync(context.Background(), a, "origin", Options{})
	if err != nil || !res.Pushed {
		t.Fatalf("%+v %v", res, err)
	}
	// Nothing but memsync's refs was pushed.
	refs := testgit.Git(t, a.Repo.WorkTree, "ls-remote", "origin")
	for _, line := range sortedLines(refs) {
		if _, ref, _ := strings.Cut(line, "\t"); !strings.HasPrefix(ref, "refs/memsync/") {
			t.Fatalf("the remote got %s:\n%s", ref, refs)
		}
	}
}
