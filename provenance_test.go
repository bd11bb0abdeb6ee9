package memsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// provenanceRepo is a repository on branch main with one commit, its git
// user set in the repository's config (not the environment), and a second
// worktree on branch feature.
func provenanceRepo(t *testing.T) (primary, secondary, head string) {
	t.Helper()
	root := testgit.Isolate(t)
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "MEMSYNC_AGENT", "RALPH_LOOP_ID"} {
		t.Setenv(k, "")
		_ = os.Unsetenv(k)
	}
	primary = filepath.Join(root, "repo")
	testgit.Git(t, root, "init", "-q", "-b", "main", primary)
	testgit.Git(t, primary, "config", "user.name", "Jane Doe")
	testgit.Git(t, primary, "config", "user.email", "jane@example.com")
	testgit.Git(t, primary, "commit", "-q", "--allow-empty", "-m", "one")
	secondary = filepath.Join(root, "wt-feature")
	testgit.Git(t, primary, "worktree", "add", "-q", "-b", "feature", secondary)
	return primary, secondary, testgit.Git(t, primary, "rev-parse", "HEAD")
}

// Add records who wrote the entry and where, read from git's files: the
// author from the repository's config, the branch, the worktree relative to
// the primary, HEAD's commit, and the agent from the environment.
func TestAddRecordsProvenance(t *testing.T) {
	primary, secondary, head := provenanceRepo(t)
	ctx := context.Background()
	m, err := Open(primary, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := m.Add(ctx, Entry{Content: "from the primary"})
	if err != nil {
		t.Fatal(err)
	}
	want := Provenance{Author: "Jane Doe <jane@example.com>", Branch: "main", Worktree: ".", Commit: head}
	if e.Provenance == nil || *e.Provenance != want {
		t.Fatalf("primary: %+v, want %+v", e.Provenance, want)
	}

	t.Setenv("MEMSYNC_AGENT", "loop-7")
	testgit.Git(t, secondary, "commit", "-q", "--allow-empty", "-m", "two")
	head2 := testgit.Git(t, secondary, "rev-parse", "HEAD")
	m2, err := Open(secondary, Options{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Add(ctx, Entry{Content: "from the feature worktree"}); err != nil {
		t.Fatal(err)
	}
	got, err := m.Get(ctx, View{}, "2")
	if err != nil {
		t.Fatal(err)
	}
	want = Provenance{Author: "Jane Doe <jane@example.com>", Branch: "feature", Worktree: "../wt-feature", Commit: head2, Agent: "loop-7", Session: "s1"}
	if p := got[0].Provenance; p == nil || *p != want {
		t.Fatalf("secondary: %+v, want %+v", p, want)
	}
	data, err := os.ReadFile(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"- Author: Jane Doe <jane@example.com>\n", "- Branch: feature\n", "- Worktree: ../wt-feature\n", "- Commit: " + head2 + "\n", "- Agent: loop-7\n"} {
		if !strings.Contains(string(data), line) {
			t.Errorf("the file lacks %q:\n%s", line, data)
		}
	}

	// An agent named by the caller (MCP's caller_agent_id is the Source)
	// is the agent; the environment's is not added beside it.
	e, err = m2.Add(ctx, Entry{Content: "saved by an MCP client", Fields: map[string]string{"Source": "admin_1"}})
	if err != nil {
		t.Fatal(err)
	}
	if e.Provenance.Agent != "admin_1" || e.Fields["Agent"] != "" {
		t.Fatalf("agent: %+v %v", e.Provenance, e.Fields)
	}

	// The filters.
	all, err := m.List(ctx, View{})
	if err != nil {
		t.Fatal(err)
	}
	for f, n := range map[Filter]int{{}: 3, {Author: "JANE"}: 3, {Author: "bob"}: 0, {Branch: "feature"}: 2, {Branch: "feat"}: 0, {Agent: "loop-7"}: 1, {Agent: "admin_1", Branch: "feature"}: 1} {
		if got := Filtered(all, f); len(got) != n {
			t.Errorf("%+v: %d entries, want %d", f, len(got), n)
		}
	}
	hits, err := m.Search(ctx, "feature worktree primary mcp", SearchOptions{Filter: Filter{Branch: "main"}, Limit: 1})
	if err != nil || len(hits) != 1 || hits[0].Content != "from the primary" {
		t.Fatalf("search by branch: %+v %v", hits, err)
	}
}

// Edit keeps the ID, lets a derived title follow the content, keeps a title
// set by hand, records who edited, writes nothing when nothing changes, and
// goes through the role check and the lookup of every reference.
func TestEdit(t *testing.T) {
	primary, _, _ := provenanceRepo(t)
	ctx := context.Background()
	m, err := Open(primary, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.Add(ctx, Entry{Type: "fix", Tags: []string{"ci"}, Content: "CI times out at 10 minutes\nraise it"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Add(ctx, Entry{Title: "Pool size", Content: "the pool has 10 connections"})
	if err != nil {
		t.Fatal(err)
	}
	content := "CI times out at 20 minutes now"
	res, err := m.Edit(ctx, a.ID, EditOptions{Content: &content, Tags: []string{"ci", " build "}})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Entry
	if !res.Changed || e.ID != a.ID || e.Title != content || e.Type != "fix" || strings.Join(e.Tags, ",") != "ci,build" || e.Date != a.Date {
		t.Fatalf("edited: %+v", res)
	}
	if e.Provenance.EditedBy != "Jane Doe <jane@example.com>" || e.Provenance.EditedAt == "" || e.Provenance.Author != a.Provenance.Author {
		t.Fatalf("provenance: %+v", e.Provenance)
	}
	got, err := m.Get(ctx, View{}, a.ID)
	if err != nil || got[0].Title != content || got[0].Heading() != "Fix: "+content {
		t.Fatalf("read back: %+v %v", got, err)
	}

	// A title set by hand stays; an empty one derives it again.
	content = "the pool has 20 connections"
	if res, err = m.Edit(ctx, b.ID[:6], EditOptions{Content: &content}); err != nil || res.Entry.Title != "Pool size" {
		t.Fatalf("hand title: %+v %v", res, err)
	}
	empty, typ := "", "decision"
	if res, err = m.Edit(ctx, "2", EditOptions{Title: &empty, Type: &typ, Tags: []string{}}); err != nil || res.Entry.Title != content || res.Entry.Type != "decision" || len(res.Entry.Tags) != 0 {
		t.Fatalf("derived again: %+v %v", res, err)
	}

	before, err := os.ReadFile(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	if res, err = m.Edit(ctx, b.ID, EditOptions{Content: &content}); err != nil || res.Changed {
		t.Fatalf("same again: %+v %v", res, err)
	}
	for name, err := range map[string]error{
		"nothing": editErr(m, a.ID, EditOptions{}),
		"empty":   editErr(m, a.ID, EditOptions{Content: new("  \n")}),
		"missing": editErr(m, "zzzzzzzzzzzz", EditOptions{Content: &content}),
		"title":   editErr(m, a.ID, EditOptions{Title: new("two\nlines")}),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := editErr(m, "zzzzzzzzzzzz", EditOptions{Content: &content}); !errors.Is(err, memfile.ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	w, err := Open(primary, Options{Role: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	if err := editErr(w, a.ID, EditOptions{Content: new("a worker's edit")}); !errors.Is(err, policy.ErrRefused) {
		t.Errorf("worker: %v", err)
	}
	after, err := os.ReadFile(m.Path())
	if err != nil || string(after) != string(before) {
		t.Fatalf("a failed or empty edit changed the file: %v", err)
	}
}

func editErr(m *Memory, ref string, o EditOptions) error {
	_, err := m.Edit(context.Background(), ref, o)
	return err
}
