package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/memfile"
)

// TestConcurrentAddsFromManagedWorktrees: 4 worktrees made by `memsync
// worktree add`, and from each a writer running 250 `memsync add` processes
// one after another, all 4 at once: the primary's memory holds all 1000
// entries, every worktree's link shows them, and git status is empty in all
// five worktrees.
func TestConcurrentAddsFromManagedWorktrees(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 1000 processes")
	}
	bin := memsyncBinary(t)
	env := testGitEnv(t)
	repo := newRepo(t, env)
	const workers, adds = 4, 250
	var dirs []string
	for i := range workers {
		wt := filepath.Join(filepath.Dir(repo), "trees", fmt.Sprintf("loop %d", i))
		cmd := exec.Command(bin, "worktree", "add", wt, "-b", fmt.Sprintf("loop%d", i))
		cmd.Dir, cmd.Env = repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("worktree add: %v\n%s", err, out)
		}
		dirs = append(dirs, wt)
	}
	err := inParallel(env, dirs, adds, "", func(i, j int) [][]string {
		return [][]string{{bin, "add", fmt.Sprintf("loop %d learned %d", i, j), "--tags", fmt.Sprintf("loop%d", i)}}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range append([]string{repo}, dirs...) {
		data, err := os.ReadFile(filepath.Join(d, ".agent", "memories.md"))
		if err != nil {
			t.Fatal(err)
		}
		f := memfile.Parse(data)
		if len(f.Problems) > 0 || len(f.Entries) != workers*adds {
			t.Fatalf("%s: %d entries (want %d), problems %v", d, len(f.Entries), workers*adds, f.Problems)
		}
		seen := map[string]bool{}
		for _, e := range f.Entries {
			seen[e.Content] = true
		}
		if len(seen) != workers*adds {
			t.Fatalf("%s: %d distinct entries, want %d", d, len(seen), workers*adds)
		}
		if out := gitRun(t, env, d, "status", "--porcelain", "-uall"); strings.TrimSpace(out) != "" {
			t.Fatalf("git status in %s:\n%s", d, out)
		}
	}
}

// BenchmarkWorktreeAddProcess: a whole `memsync worktree add` process side by
// side with what it replaces, `git worktree add` followed by `ln -s` of the
// memory link. Each run starts from a fresh repository with 40 tracked files,
// so both sides see the same number of worktrees. Target ratio ≤ 1.1.
func BenchmarkWorktreeAddProcess(b *testing.B) {
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	setup := func(b *testing.B) string {
		repo := newRepo(b, env)
		for i := range 40 {
			p := filepath.Join(repo, "src", fmt.Sprintf("file%02d.go", i))
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(strings.Repeat("package src // line\n", 50)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		gitRun(b, env, repo, "add", ".")
		gitRun(b, env, repo, "commit", "-q", "-m", "files")
		runProcess(b, env, repo, bin, "init")
		return repo
	}
	repos := []string{setup(b), setup(b)}
	sideBySide(b, []string{"git+ln", "memsync"}, []func(int) time.Duration{
		func(i int) time.Duration {
			wt := fmt.Sprintf("../trees/wt%d", i)
			d := runProcess(b, env, repos[0], "git", "worktree", "add", wt, "-b", fmt.Sprintf("b%d", i))
			if err := os.MkdirAll(filepath.Join(repos[0], wt, ".agent"), 0o755); err != nil {
				b.Fatal(err)
			}
			return d + runProcess(b, env, repos[0], "ln", "-s", "../../../repo/.agent/memories.md", filepath.Join(wt, ".agent", "memories.md"))
		},
		func(i int) time.Duration {
			return runProcess(b, env, repos[1], bin, "worktree", "add", fmt.Sprintf("../trees/wt%d", i), "-b", fmt.Sprintf("b%d", i))
		},
	})
}
