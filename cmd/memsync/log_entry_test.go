package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/history"
)

// logJSON is 'memsync log --json' with args.
func logJSON(t *testing.T, env []string, dir string, args ...string) []history.LogEntry {
	t.Helper()
	var out []history.LogEntry
	if err := json.Unmarshal([]byte(memsyncIn(t, env, dir, append([]string{"log", "--json"}, args...)...)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// touch is one snapshot of an entry's history as the test expects it.
type touch struct {
	kind, author, branch, worktree, hook string
	merge                                bool
}

// TestLogEntryProcess: two clones with hooks share a memory through a bare
// remote. Ann adds entries, edits one from the primary and from a linked
// worktree on another branch, archives one, restores and deletes another;
// Bob edits the first in his clone and syncs; Ann's sync merges his edit.
// 'memsync log ID' in Ann's clone lists exactly the snapshots that touched
// each entry, newest first, with who and where (Bob's own snapshot through
// the merge's second parent, and the merge); -p carries each diff; --stat
// names every snapshot's entries; an unknown ID exits 3 with a hint.
func TestLogEntryProcess(t *testing.T) {
	env, root, remote := bareRemote(t)
	ann := slices.Concat(env, []string{"GIT_AUTHOR_NAME=Ann", "GIT_AUTHOR_EMAIL=ann@example.invalid"})
	bob := slices.Concat(env, []string{"GIT_AUTHOR_NAME=Bob", "GIT_AUTHOR_EMAIL=bob@example.invalid"})
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		gitRun(t, env, root, "clone", "-q", remote, d)
		memsyncIn(t, env, d, "init")
		memsyncIn(t, env, d, "hooks", "install")
	}
	commit := func(env []string, dir, msg string) {
		t.Helper()
		gitRun(t, env, dir, "commit", "-q", "--allow-empty", "-m", msg)
	}
	x := strings.TrimSpace(memsyncIn(t, ann, a, "add", "retry the upstream with backoff", "-t", "pattern"))
	commit(ann, a, "x")
	y := strings.TrimSpace(memsyncIn(t, ann, a, "add", "the cache is warmed at start", "-t", "fix"))
	z := strings.TrimSpace(memsyncIn(t, ann, a, "add", "staging needs the VPN"))
	commit(ann, a, "y z")
	memsyncIn(t, ann, a, "edit", x, "--content", "retry the upstream with jittered backoff")
	commit(ann, a, "edit x")
	wt := filepath.Join(root, "a-feature")
	gitRun(t, ann, a, "worktree", "add", "-q", "-b", "feature", wt)
	memsyncIn(t, ann, wt, "edit", x, "--content", "retry the upstream with jittered backoff, at most 5 times")
	commit(ann, wt, "edit x in the worktree")
	memsyncIn(t, ann, a, "archive", y)
	commit(ann, a, "archive y")
	memsyncIn(t, ann, a, "restore", y)
	memsyncIn(t, ann, a, "delete", z)
	commit(ann, a, "restore y, delete z")
	memsyncIn(t, ann, a, "sync")
	memsyncIn(t, bob, b, "sync")
	memsyncIn(t, bob, b, "edit", x, "--content", "retry the upstream with jittered backoff, at most 3 times")
	memsyncIn(t, bob, b, "sync")
	memsyncIn(t, ann, a, "add", "a later fact, so that Ann's sync merges")
	memsyncIn(t, ann, a, "sync")
	if got := listJSON(t, env, a)[x].Content; got != "retry the upstream with jittered backoff, at most 3 times" {
		t.Fatalf("Bob's edit did not arrive: %q", got)
	}

	annWho, bobWho := "Ann <ann@example.invalid>", "Bob <bob@example.invalid>"
	main := trimmed(t, env, a, "rev-parse", "--abbrev-ref", "HEAD")
	for _, c := range []struct {
		id   string
		want []touch
	}{
		{x, []touch{
			{kind: history.Changed, author: annWho, branch: "main", worktree: ".", merge: true},
			{kind: history.Changed, author: bobWho, branch: "main", worktree: "."},
			{kind: history.Added, author: bobWho, branch: "main", worktree: ".", merge: true}, // Bob's first sync brought it to his clone
			{kind: history.Changed, author: annWho, branch: "feature", worktree: "../a-feature", hook: "post-commit"},
			{kind: history.Changed, author: annWho, branch: "main", worktree: ".", hook: "post-commit"},
			{kind: history.Added, author: annWho, branch: "main", worktree: ".", hook: "post-commit"},
		}},
		{y, []touch{
			{kind: history.Added, author: bobWho, branch: "main", worktree: ".", merge: true},
			// delete snapshots first: that snapshot (no hook) has the restore
			{kind: history.Restored, author: annWho, branch: "main", worktree: "."},
			{kind: history.Archived, author: annWho, branch: "main", worktree: ".", hook: "post-commit"},
			{kind: history.Added, author: annWho, branch: "main", worktree: ".", hook: "post-commit"},
		}},
		{z, []touch{
			{kind: history.Removed, author: annWho, branch: "main", worktree: ".", hook: "post-commit"},
			{kind: history.Added, author: annWho, branch: "main", worktree: ".", hook: "post-commit"},
		}},
	} {
		for i := range c.want {
			if c.want[i].branch == "main" {
				c.want[i].branch = main
			}
		}
		got := logJSON(t, env, a, c.id[:6])
		var have []touch
		for i, e := range got {
			if len(e.Changes) != 1 || e.Changes[0].ID != c.id || e.Changes[0].Diff != nil {
				t.Fatalf("%s: changes %+v", c.id, e.Changes)
			}
			if i > 0 && e.Time > got[i-1].Time {
				t.Fatalf("%s: not newest first", c.id)
			}
			have = append(have, touch{kind: e.Changes[0].Kind, author: e.Author, branch: e.Branch, worktree: e.Worktree, hook: e.Hook,
				merge: strings.HasPrefix(e.Subject, "memsync merge of")})
		}
		if !reflect.DeepEqual(have, c.want) {
			t.Fatalf("log %s:\n got %+v\nwant %+v", c.id, have, c.want)
		}
	}

	// -p: each snapshot with the entry's diff; the text form prints them
	// under the snapshot, with who and where.
	patched := logJSON(t, env, a, x, "-p")
	if d := patched[1].Changes[0].Diff; d == nil || !strings.Contains(*d, "-- Content: retry the upstream with jittered backoff, at most 5 times\n+- Content: retry the upstream with jittered backoff, at most 3 times\n") {
		t.Fatalf("Bob's edit as a diff: %+v", patched[1].Changes)
	}
	text := memsyncIn(t, env, a, "log", x, "-p")
	for _, want := range []string{
		"by Bob <bob@example.invalid> · branch " + main + " · ",
		"by Ann <ann@example.invalid> · hook post-commit · branch feature · commit ",
		"worktree ../a-feature\n              ~ " + x + "  retry the upstream with jittered backoff, at most 5 times\n                @@ line 1 @@\n",
		"              + " + x + "  retry the upstream with backoff\n",
		"                +- Content: retry the upstream with backoff\n",
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("log %s -p lacks %q:\n%s", x, want, text)
		}
	}

	// --stat names the entries of every snapshot as the record counts them.
	for _, e := range logJSON(t, env, a, "--stat") {
		n := map[string]int{}
		for _, ch := range e.Changes {
			n[ch.Kind]++
		}
		if e.Changes == nil || n[history.Added] != e.Added || n[history.Removed] != e.Removed || n[history.Changed] != e.Changed {
			t.Fatalf("snapshot %s: counts %+v, changes %+v", e.Commit, e.Counts, e.Changes)
		}
	}
	if plain := memsyncIn(t, env, a, "log", "--json"); strings.Contains(plain, `"changes"`) {
		t.Fatalf("plain log has changes:\n%s", plain)
	}

	cmd := exec.Command(memsyncBinary(t), "log", "nosuchentry")
	cmd.Dir, cmd.Env = a, env
	out, err := cmd.CombinedOutput()
	if exitStatus(err) != 3 || !strings.Contains(string(out), "nosuchentry") {
		t.Fatalf("unknown entry: %v\n%s", err, out)
	}
}
