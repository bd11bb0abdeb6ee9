package provenance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// Current reads HEAD as git does: a loose ref, a packed one, a detached
// HEAD, an unborn branch, a rebase; the author from the environment, else
// the config, else none.
func TestCurrent(t *testing.T) {
	root := testgit.Isolate(t)
	repo := filepath.Join(root, "repo")
	testgit.Git(t, root, "init", "-q", "-b", "main", repo)
	gitDir := filepath.Join(repo, ".git")
	w := Where{CommonDir: gitDir, GitDir: gitDir, Primary: repo, WorkTree: repo}
	none := env(nil)

	if i := Current(w, none); i != (Info{Branch: "main", Worktree: "."}) {
		t.Fatalf("unborn, no author: %+v", i)
	}
	testgit.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "one")
	head := testgit.Git(t, repo, "rev-parse", "HEAD")
	testgit.Git(t, repo, "config", "user.name", "Jane <Doe>")
	testgit.Git(t, repo, "config", "user.email", "jane@example.com")
	if i := Current(w, none); i != (Info{Author: "Jane Doe <jane@example.com>", Branch: "main", Worktree: ".", Commit: head}) {
		t.Fatalf("loose ref: %+v", i)
	}
	testgit.Git(t, repo, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(gitDir, "refs", "heads", "main")); !os.IsNotExist(err) {
		t.Fatalf("the ref is still loose: %v", err)
	}
	e := env(map[string]string{"GIT_AUTHOR_NAME": "Bob\n", "GIT_AUTHOR_EMAIL": "bob@example.com", "MEMSYNC_AGENT": " loop-1 ", "RALPH_LOOP_ID": "r"})
	if i := Current(w, e); i != (Info{Author: "Bob <bob@example.com>", Branch: "main", Worktree: ".", Commit: head, Agent: "loop-1"}) {
		t.Fatalf("packed ref, env: %+v", i)
	}
	testgit.Git(t, repo, "checkout", "-q", "--detach")
	if i := Current(w, none); i.Branch != "" || i.Commit != head {
		t.Fatalf("detached: %+v", i)
	}
	if err := os.MkdirAll(filepath.Join(gitDir, "rebase-merge"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitDir, "rebase-merge", "head-name"), []byte("refs/heads/topic\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if i := Current(w, none); i.Branch != "topic" || i.Commit != head {
		t.Fatalf("rebase: %+v", i)
	}
	if i := Current(Where{}, env(map[string]string{"RALPH_LOOP_ID": "r-2"})); i.Branch != "" || i.Worktree != "" || i.Agent != "r-2" {
		t.Fatalf("no repository: %+v", i)
	}
	if got := GitDir(repo); got != gitDir {
		t.Fatalf("GitDir: %s", got)
	}
}

// Stamp leaves an entry that records provenance alone; Fill keeps what the
// entry has and names no agent beside a Source.
func TestStampFill(t *testing.T) {
	i := Info{Author: "A <a@x>", Branch: "b", Worktree: ".", Commit: strings.Repeat("a", 40), Agent: "env-agent"}
	var e memfile.Entry
	if !i.Stamp(&e) || e.Field(AuthorField) != "A <a@x>" || e.Field(AgentField) != "env-agent" || !Has(&e) {
		t.Fatalf("stamp: %+v", e.Extra)
	}
	other := Info{Author: "B"}
	if other.Stamp(&e) || e.Field(AuthorField) != "A <a@x>" {
		t.Fatalf("stamped twice: %+v", e.Extra)
	}
	var s memfile.Entry
	s.SetField(SourceField, "mcp-client")
	s.SetField(BranchField, "given")
	i.Fill(&s)
	if s.Field(AgentField) != "" || Agent(&s) != "mcp-client" || s.Field(BranchField) != "given" || s.Field(CommitField) != i.Commit {
		t.Fatalf("fill: %+v", s.Extra)
	}
	at, by := SplitEdited(Edited(time.Date(2026, 5, 1, 12, 0, 0, 0, time.FixedZone("x", 3600)), "A <a@x>"))
	if at != "2026-05-01T11:00:00Z" || by != "A <a@x>" {
		t.Fatalf("edited: %q %q", at, by)
	}
}

// BenchmarkCurrent is what provenance adds to every add: reading HEAD, the
// ref and git's config files (the author from user.name and user.email, as
// most people have it), no git process.
func BenchmarkCurrent(b *testing.B) {
	root := testgit.Isolate(b)
	testgit.Git(b, root, "init", "-q", "-b", "main")
	testgit.Git(b, root, "commit", "-q", "--allow-empty", "-m", "one")
	testgit.Git(b, root, "config", "user.name", "Jane Doe")
	testgit.Git(b, root, "config", "user.email", "jane@example.com")
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"} {
		b.Setenv(k, "")
		_ = os.Unsetenv(k)
	}
	gitDir := filepath.Join(root, ".git")
	w := Where{CommonDir: gitDir, GitDir: gitDir, Primary: root, WorkTree: root}
	for b.Loop() {
		if Current(w, os.Getenv).Commit == "" {
			b.Fatal("no commit")
		}
	}
}
