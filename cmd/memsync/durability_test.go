package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The memory keeps serving the same file when git and other tools change
// the worktrees around it: the layout is pinned at the first write, and a
// worktree moved by git gets its link repaired.

// memsyncOut runs the real memsync in dir and returns stdout and stderr; it
// fails the test when memsync fails.
func memsyncOut(tb testing.TB, env []string, dir string, args ...string) (string, string) {
	tb.Helper()
	cmd := exec.Command(memsyncBinary(tb), args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("memsync %v in %s: %v\n%s%s", args, dir, err, out, stderr.String())
	}
	return string(out), stderr.String()
}

// listed is the contents of the memory as 'memsync list --json' prints it.
func listed(tb testing.TB, env []string, dir string) (map[string]bool, string) {
	tb.Helper()
	out, stderr := memsyncOut(tb, env, dir, "list", "--json")
	var entries []struct{ Content string }
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		tb.Fatalf("list --json: %v\n%s", err, out)
	}
	have := map[string]bool{}
	for _, e := range entries {
		have[e.Content] = true
	}
	return have, stderr
}

// expectAll checks that the memory listed in dir holds every one of want.
func expectAll(tb testing.TB, env []string, dir string, want []string) string {
	tb.Helper()
	have, stderr := listed(tb, env, dir)
	for _, w := range want {
		if !have[w] {
			tb.Fatalf("the memory lost %q; it holds %v (stderr: %s)", w, have, stderr)
		}
	}
	return stderr
}

// TestLayoutPinned: the first write pins memsync.layout; a ralph file that
// appears later in the primary never switches the memory, doctor reports it,
// and doctor --fix folds its entries in.
func TestLayoutPinned(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsyncIn(t, env, repo, "add", "an agent-layout lesson")
	if got := strings.TrimSpace(gitRun(t, env, repo, "config", "memsync.layout")); got != "agent" {
		t.Fatalf("memsync.layout = %q after the first write", got)
	}
	other := filepath.Join(repo, ".ralph", "agent", "memories.md")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("# Memories\n\n## Patterns\n\n### mem-1767225600-a1b2\n> a ralph lesson\n<!-- tags: x | created: 2026-01-01 -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	have, stderr := listed(t, env, repo)
	if !have["an agent-layout lesson"] || have["a ralph lesson"] {
		t.Fatalf("the memory switched layout: %v", have)
	}
	if !strings.Contains(stderr, other) {
		t.Errorf("no word of %s on stderr: %q", other, stderr)
	}
	if _, stderr := listed(t, env, repo); strings.Contains(stderr, other) {
		t.Errorf("said twice: %q", stderr)
	}
	cmd := exec.Command(memsyncBinary(t), "doctor")
	cmd.Dir, cmd.Env = repo, env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), other) {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
	memsyncOut(t, env, repo, "doctor", "--fix")
	expectAll(t, env, repo, []string{"an agent-layout lesson", "a ralph lesson"})
	if _, err := os.Lstat(other); !os.IsNotExist(err) {
		t.Errorf("%s is still there after the fold: %v", other, err)
	}
}

// TestWorktreeMoveRelinks: git worktree move to another depth breaks the
// relative link; the next memsync command in that worktree repairs it.
func TestWorktreeMoveRelinks(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsyncIn(t, env, repo, "add", "before the move")
	wt := filepath.Join(filepath.Dir(repo), "wt1")
	memsyncIn(t, env, repo, "worktree", "add", wt, "-b", "loop")
	moved := filepath.Join(filepath.Dir(repo), "deeper", "still", "wt1")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, repo, "worktree", "move", wt, moved)
	mem := filepath.Join(moved, ".agent", "memories.md")
	if _, err := os.Stat(mem); err == nil {
		t.Fatal("the link survived the move: the test proves nothing")
	}
	memsyncIn(t, env, moved, "add", "after the move")
	expectAll(t, env, repo, []string{"before the move", "after the move"})
	if data, err := os.ReadFile(mem); err != nil || !strings.Contains(string(data), "after the move") {
		t.Fatalf("%s after the repair: %v\n%s", mem, err, data)
	}
}
