package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// syncJSON runs 'memsync sync --json' in dir: the clone ID it synced as
// and its notes.
func syncJSON(t *testing.T, env []string, dir string) (clone string, notes []string) {
	t.Helper()
	var res struct {
		Clone string   `json:"clone"`
		Notes []string `json:"notes"`
	}
	if out := memsyncIn(t, env, dir, "sync", "--json"); json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("sync --json in %s: %s", dir, out)
	}
	return res.Clone, res.Notes
}

// TestCopiedRepositoryCloneID: a repository copied with cp -a (its linked
// worktree with it) syncs under a new clone ID, with a note saying so once;
// the original keeps its ID, and so does a repository moved with mv. Both
// copies' snapshots are then on the remote, each on its own ref.
func TestCopiedRepositoryCloneID(t *testing.T) {
	if _, err := exec.LookPath("cp"); err != nil {
		t.Skip("cp is missing")
	}
	env, root, remote := bareRemote(t)
	orig := filepath.Join(root, "orig")
	gitRun(t, env, root, "clone", "-q", remote, orig)
	memsyncIn(t, env, orig, "add", "in the original")
	memsyncIn(t, env, orig, "worktree", "add", "../orig-wt", "-b", "wt")
	id, notes := syncJSON(t, env, orig)
	if id == "" || len(notes) != 0 {
		t.Fatalf("first sync: clone %q, notes %q", id, notes)
	}

	copied := filepath.Join(root, "copy")
	if out, err := exec.Command("cp", "-a", orig, copied).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	memsyncIn(t, env, copied, "add", "in the copy")
	cid, notes := syncJSON(t, env, copied)
	if cid == id || len(notes) != 1 || !strings.Contains(notes[0], "is a copy of "+filepath.Join(orig, ".git")) || !strings.Contains(notes[0], "new clone ID "+cid) {
		t.Fatalf("the copy synced as %q (the original is %q), notes %q", cid, id, notes)
	}
	if again, notes := syncJSON(t, env, copied); again != cid || len(notes) != 0 {
		t.Fatalf("the copy's next sync: clone %q, notes %q (want %q, none)", again, notes, cid)
	}
	if again, notes := syncJSON(t, env, orig); again != id || len(notes) != 0 {
		t.Fatalf("the original's next sync: clone %q, notes %q (want %q, none)", again, notes, id)
	}
	refs := gitRun(t, env, root, "--git-dir="+remote, "for-each-ref", "--format=%(refname)", "refs/memsync/clones/")
	if strings.Count(refs, "\n") != 2 || !strings.Contains(refs, id) || !strings.Contains(refs, cid) {
		t.Fatalf("the remote's clone refs:\n%s", refs)
	}

	moved := filepath.Join(root, "moved")
	if err := os.Rename(copied, moved); err != nil {
		t.Fatal(err)
	}
	if again, notes := syncJSON(t, env, moved); again != cid || len(notes) != 0 {
		t.Fatalf("after mv: clone %q, notes %q (want %q, none)", again, notes, cid)
	}
}
