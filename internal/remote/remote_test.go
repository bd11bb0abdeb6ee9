package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
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
		out = append(out, history.Open(r, memfile.Open(r.Home)))
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
	add(t, b, "from b")
	res, err = Sync(context.Background(), b, "origin", Options{})
	if err != nil || res.Kind != history.Merged || !res.Pushed {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = Sync(context.Background(), a, "origin", Options{})
	if err != nil || res.Kind != history.FastForward || res.Pushed {
		t.Fatalf("%+v %v", res, err)
	}
	for _, h := range cs {
		f, _ := h.Store.Load()
		if len(f.Entries) != 2 {
			t.Fatalf("%s has %d entries", h.Repo.WorkTree, len(f.Entries))
		}
	}
	// The remote holds the ref and nothing else of memsync's.
	refs := testgit.Git(t, a.Repo.WorkTree, "ls-remote", "origin")
	if !strings.Contains(refs, "\t"+history.Ref) || strings.Count(refs, "memsync") != 1 {
		t.Fatalf("remote refs:\n%s", refs)
	}
}

// TestPushLease: a push whose lease names a stale snapshot is a race, not
// an error, and leaves the remote as it was.
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
	head := testgit.Git(t, b.Repo.WorkTree, "rev-parse", history.Ref)
	raced, err := push(context.Background(), b, "origin", head, "", DefaultTimeout) // b believes the remote has none
	if err != nil || !raced {
		t.Fatalf("raced %v, err %v", raced, err)
	}
	if got := testgit.Git(t, a.Repo.WorkTree, "ls-remote", "origin", history.Ref); !strings.HasPrefix(got, remoteHead) {
		t.Fatalf("the remote moved: %s", got)
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
