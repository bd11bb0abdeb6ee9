package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync"
)

// ralphRepo is a repository whose memory is ralph's: memsync finds
// .ralph/agent/memories.md (ralphFile) without configuration, and ralph and
// memsync share that file and its lock.
func ralphRepo(tb testing.TB, env []string) string {
	tb.Helper()
	repo := newRepo(tb, env)
	if err := os.MkdirAll(filepath.Join(repo, ".ralph", "agent"), 0o755); err != nil {
		tb.Fatal(err)
	}
	return repo
}

// ralphFile is the memory file of a ralphRepo.
func ralphFile(repo string) string { return filepath.Join(repo, ".ralph", "agent", "memories.md") }

// ralphMemory is an entry as `ralph tools memory list --format json` shows it.
type ralphMemory struct {
	ID      string   `json:"id"`
	Type    string   `json:"memory_type"`
	Content string   `json:"content"`
	Tags    []string `json:"tags"`
	Created string   `json:"created"`
}

func runRalph(tb testing.TB, repo string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(ralphBinary(tb), append([]string{"tools", "memory"}, args...)...)
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("ralph %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func ralphList(tb testing.TB, repo string) map[string]ralphMemory {
	tb.Helper()
	var ms []ralphMemory
	if err := json.Unmarshal([]byte(runRalph(tb, repo, "list", "--format", "json")), &ms); err != nil {
		tb.Fatal(err)
	}
	out := map[string]ralphMemory{}
	for _, m := range ms {
		out[m.ID] = m
	}
	return out
}

func runMemsync(tb testing.TB, env []string, repo string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(memsyncBinary(tb), args...)
	cmd.Dir, cmd.Env = repo, env
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("memsync %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func memsyncList(tb testing.TB, env []string, repo string, args ...string) map[string]memsync.Entry {
	tb.Helper()
	var es []memsync.Entry
	if err := json.Unmarshal([]byte(runMemsync(tb, env, repo, append(args, "list", "--json")...)), &es); err != nil {
		tb.Fatal(err)
	}
	out := map[string]memsync.Entry{}
	for _, e := range es {
		out[e.ID] = e
	}
	return out
}

// TestRalphKeepsWhatMemsyncWrites: ralph first, then memsync writes what
// ralph's dialect has no line for (a type ralph lacks, a title, a session, a
// blank line); ralph lists each entry with its content and tags, and
// ralph's delete of another entry keeps memsync's entries and what they hold
// (issue 12).
func TestRalphKeepsWhatMemsyncWrites(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := ralphRepo(t, env)
	first := runRalph(t, repo, "add", "first by ralph", "-t", "fix", "--tags", "a,b", "--format", "quiet")
	note := runMemsync(t, env, repo, "add", "-t", "note", "--title", "Own title, with a comma", "--tags", "x", "note paragraph\n\nsecond paragraph")
	sol := runMemsync(t, env, repo, "add", "-t", "solution", "restart the worker")
	s9 := runMemsync(t, env, repo, "--session", "s9", "add", "-t", "pattern", "only for session s9")

	seen := ralphList(t, repo)
	if len(seen) != 4 {
		t.Fatalf("ralph sees %d entries: %+v", len(seen), seen)
	}
	// Each memsync entry also carries its provenance as tags, last.
	prov := []string{"author:t <t@memsync.invalid>", "branch:" + strings.TrimSpace(gitRun(t, env, repo, "branch", "--show-current")),
		"worktree:.", "commit:" + strings.TrimSpace(gitRun(t, env, repo, "rev-parse", "HEAD"))}
	for id, want := range map[string]struct {
		content string
		tags    []string
	}{
		note: {"note paragraph\n \nsecond paragraph", []string{"x", "type:note", "title:Own title%2C with a comma"}},
		sol:  {"restart the worker", []string{"type:solution"}},
		s9:   {"only for session s9", []string{"session:s9"}},
	} {
		if m := seen[id]; m.Content != want.content || !slices.Equal(m.Tags, append(want.tags, prov...)) {
			t.Errorf("ralph sees %s as %+v, want %+v and %v", id, m, want, prov)
		}
	}

	runRalph(t, repo, "delete", first)
	got := memsyncList(t, env, repo)
	if len(got) != 3 {
		t.Fatalf("after ralph's delete: %+v", got)
	}
	if e := got[note]; e.Type != "note" || e.Title != "Own title, with a comma" || e.Content != "note paragraph\n\nsecond paragraph" || !slices.Equal(e.Tags, []string{"x"}) {
		t.Errorf("note: %+v", e)
	}
	if e := got[sol]; e.Type != "solution" {
		t.Errorf("solution: %+v", e)
	}
	if e := got[s9]; e.Fields["Session"] != "s9" || e.Type != "pattern" {
		t.Errorf("session entry: %+v", e)
	}
	if _, ok := memsyncList(t, env, repo, "--session", "s8")[s9]; ok {
		t.Error("session s8 sees the entry of session s9")
	}
	// A duplicate is found within the session's view only.
	if id := runMemsync(t, env, repo, "--session", "s8", "add", "-t", "pattern", "only for session s9"); id == s9 {
		t.Error("session s8's add was taken as s9's entry")
	}
	if id := runMemsync(t, env, repo, "--session", "s9", "add", "-t", "pattern", "only for session s9"); id != s9 {
		t.Errorf("session s9's same add stored again as %s", id)
	}
}

// TestImportIntoRalphFile: memsync first (an orch file), then import into
// ralph's file: ralph lists every entry, with its source ID as a tag, and
// memsync finds each by its old ID; ralph's delete of its own entry keeps
// them all (issue 12).
func TestImportIntoRalphFile(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	src := newRepo(t, env)
	var ids []string
	for _, args := range [][]string{
		{"add", "-t", "decision", "--title", "Chose Postgres", "use postgres for the queue"},
		{"add", "-t", "note", "plain note"},
		{"add", "-t", "pattern", "--tags", "p", "barrel exports\n\nin every package"},
	} {
		ids = append(ids, runMemsync(t, env, src, args...))
	}
	repo := ralphRepo(t, env)
	mine := runRalph(t, repo, "add", "ralph's own", "-t", "context", "--format", "quiet")
	runMemsync(t, env, repo, "import", filepath.Join(src, ".agent", "memories.md"))
	data, _ := os.ReadFile(ralphFile(repo))
	seen := ralphList(t, repo)
	if len(seen) != 4 {
		t.Fatalf("ralph sees %d entries after the import:\n%s", len(seen), data)
	}
	for _, id := range ids {
		found := false
		for _, m := range seen {
			found = found || slices.Contains(m.Tags, "source-id:"+id)
		}
		if !found {
			t.Errorf("no entry ralph sees has the source ID %s:\n%s", id, data)
		}
	}
	runRalph(t, repo, "delete", mine)
	got := memsyncList(t, env, repo)
	if len(got) != 3 {
		t.Fatalf("after ralph's delete: %d entries\n%s", len(got), data)
	}
	var e memsync.Entry
	if err := json.Unmarshal([]byte(runMemsync(t, env, repo, "show", "--json", ids[0])), &e); err != nil || e.Title != "Chose Postgres" || e.Type != "decision" {
		t.Fatalf("show by the old ID: %v %+v", err, e)
	}
}

// TestMixedDialectFile: ralph adds into a file memsync wrote (inside
// memsync's "## Context: …" entry); memsync lists every entry of both,
// doctor reports the other dialect's entries with their lines, and doctor
// --fix writes them in the file's dialect with a backup; after that, ralph's
// delete loses nothing (issue 12).
func TestMixedDialectFile(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	for _, c := range []struct {
		name         string
		orch, ralphs int
		dialect      string
	}{{"mostly ralph", 2, 3, "ralph"}, {"mostly orch", 3, 1, "orch"}} {
		t.Run(c.name, func(t *testing.T) {
			repo := ralphRepo(t, env)
			// The file as an older memsync (or orch) wrote it, in orch's dialect.
			orch := "# Memories\n"
			for i := range c.orch {
				orch += fmt.Sprintf("\n## Context: memsync entry %c\n- Tags: m\n- Date: 2026-11-22\n- ID: 0000000000%02d\n- Content: memsync entry %c\n", 'a'+i, i, 'a'+i)
			}
			if err := os.WriteFile(ralphFile(repo), []byte(orch), 0o644); err != nil {
				t.Fatal(err)
			}
			for i := range c.ralphs {
				runRalph(t, repo, "add", "ralph entry "+string(rune('a'+i)), "-t", "fix", "--format", "quiet")
			}
			if n := len(memsyncList(t, env, repo)); n != c.orch+c.ralphs {
				t.Fatalf("memsync lists %d entries of %d", n, c.orch+c.ralphs)
			}
			if n := len(strings.Split(runMemsync(t, env, repo, "search", "entry"), "\n")); n < c.orch+c.ralphs {
				t.Fatalf("search shows %d", n)
			}
			cmd := exec.Command(memsyncBinary(t), "doctor")
			cmd.Dir, cmd.Env = repo, env
			out, _ := cmd.CombinedOutput()
			if !strings.Contains(string(out), "both dialects") || !strings.Contains(string(out), "at line ") {
				t.Fatalf("doctor:\n%s", out)
			}
			file := ralphFile(repo)
			runMemsync(t, env, repo, "doctor", "--fix")
			if b, _ := filepath.Glob(filepath.Join(repo, ".git", "memsync", "memories.md.bak-*")); len(b) != 1 {
				t.Fatalf("backups %v", b)
			}
			data, _ := os.ReadFile(file)
			if c.dialect == "ralph" && strings.Contains(string(data), "- ID:") || c.dialect == "orch" && strings.Contains(string(data), "### mem-") {
				t.Fatalf("not all in %s's dialect:\n%s", c.dialect, data)
			}
			runMemsync(t, env, repo, "doctor")
			if c.dialect != "ralph" {
				return
			}
			seen := ralphList(t, repo)
			if len(seen) != c.orch+c.ralphs {
				t.Fatalf("ralph sees %d:\n%s", len(seen), data)
			}
			for id := range seen {
				runRalph(t, repo, "delete", id)
				break
			}
			if n := len(memsyncList(t, env, repo)); n != c.orch+c.ralphs-1 {
				t.Fatalf("after ralph's delete memsync lists %d", n)
			}
		})
	}
}
