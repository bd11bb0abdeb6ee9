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

	// The copy keeps git's record of the original's linked worktree: it is
	// reported as the original's, with a fix that works, and the original
	// still sees it linked.
	out, stderr, code := memsyncCode(t, env, copied, "worktree", "doctor")
	wantFix := "rm -r " + filepath.Join(copied, ".git", "worktrees", "orig-wt")
	if code != 1 || !strings.Contains(out, "other-repo") || !strings.Contains(out, wantFix) || strings.Contains(stderr, "--fix") {
		t.Fatalf("worktree doctor in the copy: exit %d\n%s%s", code, out, stderr)
	}
	if out := memsyncIn(t, env, orig, "worktree", "list"); !strings.Contains(out, "linked         "+filepath.Join(root, "orig-wt")) {
		t.Fatalf("worktree list in the original:\n%s", out)
	}
	if out, err := exec.Command("sh", "-c", wantFix).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", wantFix, err, out)
	}
	for _, dir := range []string{copied, orig} {
		if out, stderr, code := memsyncCode(t, env, dir, "worktree", "doctor"); code != 0 {
			t.Fatalf("worktree doctor in %s after the fix: exit %d\n%s%s", dir, code, out, stderr)
		}
	}

	moved := filepath.Join(root, "moved")
	if err := os.Rename(copied, moved); err != nil {
		t.Fatal(err)
	}
	if again, notes := syncJSON(t, env, moved); again != cid || len(notes) != 0 {
		t.Fatalf("after mv: clone %q, notes %q (want %q, none)", again, notes, cid)
	}
}

// memsyncCode runs the real memsync in dir: its stdout, stderr and exit code.
func memsyncCode(t *testing.T, env []string, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}
