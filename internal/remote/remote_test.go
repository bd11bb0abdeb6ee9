package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/worktree"
)

// clones makes a bare remote and n clones of it, each with a memory.
func clones(t *testing.T, n int) []*history.History {
	t.Helper()
	root := testgit.Isolate(t)
	testgit.Git(t, root, "init", "-q", "--bare", "remote.git")
	var out []*history.History
	for i := range n {
		dir := filepath.Join(root, "c"+string(rune('a'+i)))
		testgit.Git(t, root, "clone", "-q", "remote.git", dir)
		testgit.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
		r, err := worktree.Discover(dir)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, history.Open(r, store.Open(r.Home)))
	}
	return out
}

func add(t *testing.T, h *history.History, content string) {
	t.Helper()
	if _, err := h.Store.Append(h.Store.NewEntry("", "", content, nil)); err != nil {
		t.Fatal(err)
	}
}

func TestSync(t *testing.T) {
	cs := clones(t, 2)
	a, b := cs[0], cs[1]
	add(t, a, "from a")
	res, err := Sync(context.Background(), a, "origin", Options{})
	if err != nil || !res.Pushed || res.Fetched != "" {
		t.Fatalf("%+v %v", res, err)
	}
	first := res.Snapshot
	add(t, b, "from b")
	res, err = Sync(context.Background(), b, "origin", Options{})
	if err != nil || res.Kind != history.Merged || !res.Pushed {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = Sync(context.Background(), a, "origin", Options{})
	if err != nil || res.Kind != history.FastForward || res.Pushed || len(res.Merged) != 1 || res.Merged[0] != ClonesPrefix+cloneID(t, b) {
		t.Fatalf("%+v %v", res, err) // the remote has what a has now
	}
	res, err = Sync(context.Background(), a, "origin", Options{})
	if err != nil || res.Kind != history.UpToDate || res.Pushed || len(res.Merged) != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	for _, h := range cs {
		f, _ := h.Store.Load()
		if len(f.Entries) != 2 {
			t.Fatalf("%s has %d entries", h.Repo.WorkTree, len(f.Entries))
		}
	}
	// The remote holds the shared ref and b's at b's merge, a's at what a
	// pushed, and nothing else of memsync's.
	head := strings.TrimSpace(testgit.Git(t, a.Repo.WorkTree, "rev-parse", history.Ref))
	want := first + "\t" + ClonesPrefix + cloneID(t, a) + "\n" + head + "\t" + ClonesPrefix + cloneID(t, b) + "\n" + head + "\t" + history.Ref
	refs := testgit.Git(t, a.Repo.WorkTree, "ls-remote", "origin", "refs/memsync/*")
	if got := strings.Join(sortedLines(refs), "\n"); got != strings.Join(sortedLines(want), "\n") {
		t.Fatalf("remote refs:\n%s\nwant:\n%s", got, want)
	}
	// The push moved b's tracking refs of what it pushed, with no fetch
	// since (b's only sync pushed last).
	tracking := testgit.Git(t, b.Repo.WorkTree, "for-each-ref", "--format=%(objectname)%09%(refname)", TrackingRef("origin"), trackingPrefix("origin")+"clones/"+cloneID(t, b))
	if want := head + "\t" + TrackingRef("origin") + "\n" + head + "\t" + trackingPrefix("origin") + "clones/" + cloneID(t, b); strings.Join(sortedLines(tracking), "\n") != strings.Join(sortedLines(want), "\n") {
		t.Fatalf("b's tracking refs:\n%s\nwant:\n%s", tracking, want)
	}
}

func cloneID(t *testing.T, h *history.History) string {
	t.Helper()
	id, _, err := CloneID(h)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(lines)
	return lines
}

// TestPushLease: a push whose lease names a stale snapshot leaves the
// remote's ref as it was; on this clone's own ref it is a race, on another
// ref no failure.
func TestPushLease(t *testing.T) {
	cs := clones(t, 2)
	a, b := cs[0], cs[1]
	add(t, a, "from a")
	if _, err := Sync(context.Background(), a, "origin", Options{}); err != nil {
		t.Fatal(err)
	}
	remoteHead := testgit.Git(t, a.Repo.WorkTree, "rev-parse", history.Ref)
	add(t, b, "from b")
	if _, err := b.Take(context.Background(), "", history.Provenance{}); err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(testgit.Git(t, b.Repo.WorkTree, "rev-parse", history.Ref))
	for _, own := range []bool{false, true} {
		// b believes the remote has none
		raced, err := push(context.Background(), b, "origin", head, []update{{history.Ref, "", own}}, DefaultTimeout)
		if err != nil || raced != own {
			t.Fatalf("own %v: raced %v, err %v", own, raced, err)
		}
		if got := testgit.Git(t, a.Repo.WorkTree, "ls-remote", "origin", history.Ref); !strings.HasPrefix(got, remoteHead) {
			t.Fatalf("the remote moved: %s", got)
		}
	}
	// Sync itself fetches, merges and pushes.
	res, err := Sync(context.Background(), b, "origin", Options{})
	if err != nil || !res.Pushed || res.Kind != history.Merged {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestSyncErrors(t *testing.T) {
	cs := clones(t, 1)
	a := cs[0]
	add(t, a, "kept")
	if _, err := Sync(context.Background(), a, "nosuch", Options{}); !errors.Is(err, ErrFetch) {
		t.Fatalf("missing remote: %v", err)
	}
	for _, bad := range []string{"../x", "/tmp/x", "a b", "-x", ""} {
		if _, err := Sync(context.Background(), a, bad, Options{}); !errors.Is(err, ErrBadRemote) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
	// A push that fails for another reason than a race: the remote is gone.
	testgit.Git(t, a.Repo.WorkTree, "remote", "add", "gone", filepath.Join(t.TempDir(), "missing.git"))
	if _, err := Sync(context.Background(), a, "gone", Options{}); !errors.Is(err, ErrFetch) {
		t.Fatalf("gone remote: %v", err)
	}
	data, _ := os.ReadFile(a.Store.Path())
	if !strings.Contains(string(data), "kept") {
		t.Fatal("a failed sync lost the local entry")
	}
}

// A sync whose context is done spawns no git to its end and changes nothing:
// the remote has no snapshots, the local memory is as it was.
func TestSyncHonoursContext(t *testing.T) {
	cs := clones(t, 1)
	a := cs[0]
	add(t, a, "kept")
	before, _ := os.ReadFile(a.Store.Path())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Sync(ctx, a, "origin", Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("sync with a cancelled context: %v", err)
	}
	if out, _ := testgit.GitErr(a.Repo.WorkTree, "ls-remote", "origin", history.Ref); out != "" {
		t.Fatalf("the remote got snapshots: %s", out)
	}
	if after, _ := os.ReadFile(a.Store.Path()); string(after) != string(before) {
		t.Fatal("a cancelled sync changed the memory")
	}
}

func TestDefaultRemote(t *testing.T) {
	cs := clones(t, 1)
	a := cs[0]
	if got := DefaultRemote(a); got != "origin" {
		t.Fatalf("got %q", got)
	}
	branch := a.CurrentProvenance("").Branch
	testgit.Git(t, a.Repo.WorkTree, "config", "branch."+branch+".remote", "upstream")
	if got := DefaultRemote(a); got != "upstream" {
		t.Fatalf("got %q", got)
	}
}

// TestOldCloneFileKeepsID: a clone file an older memsync wrote (the ID
// alone) keeps its ID, with no note, and gets its home written beside it.
func TestOldCloneFileKeepsID(t *testing.T) {
	h := clones(t, 1)[0]
	dir := filepath.Join(h.Repo.CommonDir, "memsync")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, cloneFile), []byte("old-0badc0de\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if id, note, err := CloneID(h); err != nil || id != "old-0badc0de" || note != "" {
			t.Fatalf("CloneID: %q %q %v", id, note, err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, cloneHomeFile)); err != nil || !strings.Contains(string(data), `"path"`) {
		t.Fatalf("clone home: %s %v", data, err)
	}
}
