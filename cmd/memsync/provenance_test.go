package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/mcpserver"
)

// listJSON is 'memsync list --json' with args, by ID.
func listJSON(t *testing.T, env []string, dir string, args ...string) map[string]memsync.Entry {
	t.Helper()
	var es []memsync.Entry
	if err := json.Unmarshal([]byte(memsyncIn(t, env, dir, append([]string{"list", "--json"}, args...)...)), &es); err != nil {
		t.Fatal(err)
	}
	out := map[string]memsync.Entry{}
	for _, e := range es {
		out[e.ID] = e
	}
	return out
}

func trimmed(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(gitRun(t, env, dir, args...))
}

// TestProvenanceFrontDoors: add from the primary and from a worktree,
// import, an MCP save and the fold of a worktree's copy each record who
// and where; list, search and MCP's list filter by it; entries written
// before provenance have none and match no filter.
func TestProvenanceFrontDoors(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	branch, head := trimmed(t, env, repo, "branch", "--show-current"), trimmed(t, env, repo, "rev-parse", "HEAD")
	wt := filepath.Join(filepath.Dir(repo), "wt-feature")
	gitRun(t, env, repo, "worktree", "add", "-q", "-b", "feature", wt)
	gitRun(t, env, wt, "commit", "-q", "--allow-empty", "-m", "feature work")
	featureHead := trimmed(t, env, wt, "rev-parse", "HEAD")
	author := "t <t@memsync.invalid>"

	// An entry from before provenance: written as orch writes it.
	old := filepath.Join(t.TempDir(), "old.md")
	if err := os.WriteFile(old, []byte("# Memories\n\n## Pattern: Old\n- Tags: old\n- Date: 2025-01-01\n- Content: written before provenance\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prim := strings.TrimSpace(memsyncIn(t, append(env, "MEMSYNC_AGENT=loop-1"), repo, "add", "from the primary", "-t", "fix"))
	feat := strings.TrimSpace(memsyncIn(t, append(env, "RALPH_LOOP_ID=ralph-7"), wt, "add", "from the feature worktree"))
	memsyncIn(t, env, repo, "import", old)
	var saved mcpserver.SaveOutput
	mcp := startMCP(t, append(env, "MEMSYNC_AGENT=ignored"), wt)
	mustCall(t, mcp, "save_to_memory", map[string]any{"content": "saved over MCP", "caller_agent_id": "claude-2"}, &saved)

	all := listJSON(t, env, repo)
	byContent := map[string]memsync.Entry{}
	for _, e := range all {
		byContent[e.Content] = e
	}
	want := map[string]memsync.Provenance{
		"from the primary":          {Author: author, Branch: branch, Worktree: ".", Commit: head, Agent: "loop-1"},
		"from the feature worktree": {Author: author, Branch: "feature", Worktree: "../wt-feature", Commit: featureHead, Agent: "ralph-7"},
		"written before provenance": {Author: author, Branch: branch, Worktree: ".", Commit: head},
		"saved over MCP":            {Author: author, Branch: "feature", Worktree: "../wt-feature", Commit: featureHead, Agent: "claude-2"},
	}
	for content, p := range want {
		e, ok := byContent[content]
		if !ok || e.Provenance == nil || *e.Provenance != p {
			t.Errorf("%q: provenance %+v, want %+v", content, e.Provenance, p)
		}
	}
	if e := byContent["saved over MCP"]; e.Fields["Source"] != "claude-2" || e.Fields["Agent"] != "" || saved.Entry.Provenance == nil || saved.Entry.Provenance.Agent != "claude-2" {
		t.Errorf("MCP save: fields %v, returned %+v", e.Fields, saved.Entry.Provenance)
	}
	show := memsyncIn(t, env, repo, "show", feat)
	for _, l := range []string{"- Author: " + author, "- Branch: feature", "- Worktree: ../wt-feature", "- Commit: " + featureHead, "- Agent: ralph-7"} {
		if !strings.Contains(show, l+"\n") {
			t.Errorf("show lacks %q:\n%s", l, show)
		}
	}

	// A worktree's copy (a tool wrote where git removed the link): its new
	// entry is folded in with the worktree's provenance, no agent.
	link := filepath.Join(wt, ".agent", "memories.md")
	data, err := os.ReadFile(link)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	data = append(data, "\n## Written into the copy\n- Date: 2026-01-02\n- Content: written into the worktree's copy\n"...)
	if err := os.WriteFile(link, data, 0o644); err != nil {
		t.Fatal(err)
	}
	folded := false
	for _, e := range listJSON(t, env, wt) {
		if e.Content == "written into the worktree's copy" {
			folded = true
			p := memsync.Provenance{Author: author, Branch: "feature", Worktree: "../wt-feature", Commit: featureHead}
			if e.Provenance == nil || *e.Provenance != p {
				t.Errorf("folded: %+v, want %+v", e.Provenance, p)
			}
		}
	}
	if !folded {
		t.Error("the copy's entry was not folded in")
	}

	// Filters.
	ids := func(args ...string) []string {
		var out []string
		for id := range listJSON(t, env, repo, args...) {
			out = append(out, id)
		}
		slices.Sort(out)
		return out
	}
	if got := ids("--agent", "loop-1"); !slices.Equal(got, []string{prim}) {
		t.Errorf("--agent loop-1: %v", got)
	}
	if got := ids("--branch", "feature", "--agent", "ralph-7"); !slices.Equal(got, []string{feat}) {
		t.Errorf("--branch feature --agent ralph-7: %v", got)
	}
	if got := ids("--author", "T@MEMSYNC"); len(got) != 5 {
		t.Errorf("--author: %d entries, want all 5", len(got))
	}
	if got := ids("--author", "someone else"); len(got) != 0 {
		t.Errorf("--author someone else: %v", got)
	}
	var hits []memsync.Entry
	if err := json.Unmarshal([]byte(memsyncIn(t, env, repo, "search", "from", "--branch", "feature", "--json")), &hits); err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].ID != feat {
		t.Errorf("search --branch feature: %+v", hits)
	}
	var listed mcpserver.Entries
	mustCall(t, mcp, "list_memory_entries", map[string]any{"agent": "claude-2"}, &listed)
	if listed.Total != 1 || listed.Entries[0].Content != "saved over MCP" {
		t.Errorf("MCP list by agent: %+v", listed)
	}
}

// TestEditProcess: memsync edit with flags, from stdin and in $EDITOR (a
// script); the ID stays, a derived title follows the content (show printed
// the old title after an edit), who edited is recorded; exit codes.
func TestEditProcess(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	id := strings.TrimSpace(memsyncIn(t, env, repo, "add", "CI times out at 10 minutes", "-t", "fix", "--tags", "ci"))
	other := strings.TrimSpace(memsyncIn(t, env, repo, "add", "another entry", "--title", "Kept title"))

	out := memsyncIn(t, env, repo, "edit", id[:5], "--content", "CI times out at 20 minutes", "--tags", "ci,build")
	if out != "edited "+id+"  Fix: CI times out at 20 minutes\n" {
		t.Fatalf("edit: %q", out)
	}
	show := memsyncIn(t, env, repo, "show", id)
	for _, l := range []string{"## Fix: CI times out at 20 minutes", "- Tags: ci, build", "- ID: " + id, "- Content: CI times out at 20 minutes", "- Author: t <t@memsync.invalid>"} {
		if !strings.Contains(show, l+"\n") {
			t.Errorf("show lacks %q:\n%s", l, show)
		}
	}
	if !regexpFind(`(?m)^- Edited: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ t <t@memsync\.invalid>$`, show) {
		t.Errorf("no Edited bullet:\n%s", show)
	}
	if out := memsyncIn(t, env, repo, "edit", id, "--content", "CI times out at 20 minutes"); out != id+" unchanged\n" {
		t.Errorf("same edit: %q", out)
	}

	// From stdin, with --json: the entry as show --json prints it.
	cmd := exec.Command(memsyncBinary(t), "edit", "2", "--content", "-", "--json")
	cmd.Dir, cmd.Env, cmd.Stdin = repo, env, strings.NewReader("multi\nline content\n")
	b, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var e memsync.Entry
	if err := json.Unmarshal(b, &e); err != nil || e.ID != other || e.Title != "Kept title" || e.Content != "multi\nline content" || e.Provenance == nil || e.Provenance.EditedBy != "t <t@memsync.invalid>" {
		t.Fatalf("stdin edit: %+v %v", e, err)
	}

	// $EDITOR: a script that rewrites the content line and the heading's type.
	editor := filepath.Join(t.TempDir(), "editor.sh")
	script := "#!/bin/sh\nsed -i -e 's/20 minutes/30 minutes/' -e 's/^## Fix: /## Decision: /' \"$1\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	withEditor := append(slices.Clone(env), "EDITOR="+editor, "VISUAL=")
	if out := memsyncIn(t, withEditor, repo, "edit", id); out != "edited "+id+"  Decision: CI times out at 30 minutes\n" {
		t.Fatalf("editor: %q", out)
	}
	got := listJSON(t, env, repo)[id]
	if got.Type != "decision" || got.Content != "CI times out at 30 minutes" || strings.Join(got.Tags, ",") != "ci,build" {
		t.Errorf("after the editor: %+v", got)
	}
	// An editor that leaves no entry cancels; one that fails changes nothing.
	before, err := os.ReadFile(filepath.Join(repo, ".git", "memsync", "memories.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, script := range map[string]string{"empty": "#!/bin/sh\n: > \"$1\"\n", "fails": "#!/bin/sh\nexit 3\n"} {
		if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := memsyncRun(t, withEditor, repo, "edit", id)
		if wantCode := map[string]int{"empty": 0, "fails": 1}[name]; code != wantCode {
			t.Errorf("%s editor: exit %d, want %d: %s", name, code, wantCode, stderr)
		}
	}
	after, err := os.ReadFile(filepath.Join(repo, ".git", "memsync", "memories.md"))
	if err != nil || string(after) != string(before) {
		t.Fatalf("a cancelled edit changed the memory: %v", err)
	}

	// Exit codes: not found, ambiguous, refused, usage.
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"edit", "zzzzzzzz", "--title", "x"}, exitNotFound},
		{[]string{"edit", "9", "--title", "x"}, exitNotFound},
		{[]string{"--role", "worker", "edit", id, "--title", "x"}, exitRefused},
		{[]string{"edit", id, "--content", "  "}, exitRefused},
		{[]string{"edit", id, "--title", "x", "extra"}, exitUsage},
		{[]string{"edit"}, exitUsage},
	} {
		if _, stderr, code := memsyncRun(t, env, repo, c.args...); code != c.code {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, c.code, stderr)
		}
	}
	if st := gitRun(t, env, repo, "status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Fatalf("git status not clean:\n%s", st)
	}
}

// TestRalphReadsEditedProvenance: in ralph's file an entry memsync wrote and
// then edited carries its provenance as tags; ralph lists and shows it,
// deletes another entry keeping it, and memsync reads the provenance back.
func TestRalphReadsEditedProvenance(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := ralphRepo(t, env)
	first := runRalph(t, repo, "add", "first by ralph", "-t", "fix", "--format", "quiet")
	id := runMemsync(t, append(env, "MEMSYNC_AGENT=loop, 3|x"), repo, "add", "-t", "pattern", "--tags", "db", "pool size is 10")
	runMemsync(t, env, repo, "edit", id, "--content", "pool size is 20")

	m, ok := ralphList(t, repo)[id]
	if !ok || m.Content != "pool size is 20" || m.Type != "pattern" || len(m.Tags) < 5 || m.Tags[0] != "db" || !slices.Contains(m.Tags, "author:t <t@memsync.invalid>") || !slices.Contains(m.Tags, "agent:loop%2C 3%7Cx") {
		t.Fatalf("ralph lists %+v", m)
	}
	if out := runRalph(t, repo, "show", id); !strings.Contains(out, "pool size is 20") || !strings.Contains(out, "edited:") {
		t.Fatalf("ralph show:\n%s", out)
	}
	runRalph(t, repo, "delete", first)
	e, ok := memsyncList(t, env, repo)[id]
	if !ok || e.Provenance == nil || e.Provenance.Author != "t <t@memsync.invalid>" || e.Provenance.Agent != "loop, 3|x" || e.Provenance.Worktree != "." || e.Provenance.EditedBy != "t <t@memsync.invalid>" || !slices.Equal(e.Tags, []string{"db"}) {
		t.Fatalf("memsync reads back %+v %+v", e, e.Provenance)
	}
}
