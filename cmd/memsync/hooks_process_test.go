package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/memsync/memsync/memfile"
)

// TestConcurrentCommitSnapshots: 8 worktrees commit in parallel, 20 times
// each, every commit after a memory change, with the hooks installed (real
// git and memsync processes). The snapshot ref stays one chain holding every
// snapshot, its last tree is the live memory, git fsck is clean, and a
// reader polling the ref meanwhile never finds it missing.
func TestConcurrentCommitSnapshots(t *testing.T) {
	bin := memsyncBinary(t)
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsync := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("memsync %v: %v\n%s", args, err, out)
		}
	}
	memsync(repo, "init")
	memsync(repo, "hooks", "install")
	memsync(repo, "add", "seed")
	memsync(repo, "snapshot")

	const workers, commits = 8, 20
	var dirs []string
	for i := range workers {
		wt := filepath.Join(filepath.Dir(repo), fmt.Sprintf("wt%d", i))
		gitRun(t, env, repo, "worktree", "add", "-q", wt, "-b", fmt.Sprintf("loop%d", i))
		if _, err := os.Readlink(filepath.Join(wt, ".agent", "memories.md")); err != nil {
			t.Fatalf("worktree %d not linked by post-checkout: %v", i, err)
		}
		dirs = append(dirs, wt)
	}

	// The reader: git rev-parse in a loop, recording what it sees.
	var stop atomic.Bool
	seen := map[string]bool{}
	readerErr := make(chan error, 1)
	go func() {
		defer close(readerErr)
		for !stop.Load() {
			cmd := exec.Command("git", "rev-parse", "--verify", "refs/memsync/snapshots")
			cmd.Dir, cmd.Env = repo, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				readerErr <- fmt.Errorf("reader: git rev-parse: %w\n%s", err, out)
				return
			}
			seen[strings.TrimSpace(string(out))] = true
		}
	}()

	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range commits {
				for _, args := range [][]string{
					{bin, "add", fmt.Sprintf("worker %d commit %d", i, j)},
					{"git", "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("w%d c%d", i, j)},
				} {
					cmd := exec.Command(args[0], args[1:]...)
					cmd.Dir, cmd.Env = dir, env
					out, err := cmd.CombinedOutput()
					if err != nil || bytes.Contains(out, []byte("memsync: warning")) {
						errs <- fmt.Errorf("worker %d commit %d: %v: %w\n%s", i, j, args[:2], err, out)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := <-readerErr; err != nil {
		t.Fatal(err)
	}

	// One chain: no merges, and every snapshot the reader saw is on it.
	chain := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(gitRun(t, env, repo, "rev-list", "--parents", "refs/memsync/snapshots")), "\n") {
		f := strings.Fields(l)
		if len(f) > 2 {
			t.Fatalf("snapshot %s has %d parents", f[0], len(f)-1)
		}
		chain[f[0]] = true
	}
	for h := range seen {
		if !chain[h] {
			t.Fatalf("the reader saw %s, which is not on the chain", h)
		}
	}
	if len(chain) < 2 || len(chain) > workers*commits+1 {
		t.Fatalf("%d snapshots for %d memory changes", len(chain), workers*commits)
	}
	// Every snapshot commit written is reachable: nothing dangles.
	if out := gitRun(t, env, repo, "fsck", "--no-reflogs", "--unreachable"); strings.Contains(out, "commit") {
		t.Fatalf("unreachable commits (a lost snapshot):\n%s", out)
	}
	gitRun(t, env, repo, "fsck", "--strict")

	live, err := os.ReadFile(filepath.Join(repo, ".agent", "memories.md"))
	if err != nil {
		t.Fatal(err)
	}
	if snap := gitRun(t, env, repo, "show", "refs/memsync/snapshots:memories.md"); snap != string(live) {
		t.Fatalf("the last snapshot differs from the live memory")
	}
	if n := len(memfile.Parse(live).Entries); n != workers*commits+1 {
		t.Fatalf("%d entries, want %d", n, workers*commits+1)
	}
	for _, d := range append(dirs, repo) {
		if out := gitRun(t, env, d, "status", "--porcelain"); strings.TrimSpace(out) != "" {
			t.Fatalf("git status in %s:\n%s", d, out)
		}
	}
	t.Logf("%d snapshots for %d commits; the reader polled %d distinct values", len(chain), workers*commits, len(seen))
}

// BenchmarkCommitWithHooks: a whole `git commit` with memsync's hooks
// installed side by side with one without, over a memory of 1000 entries,
// unchanged and changed before each commit. Target: median ratio ≤ 1.5.
func BenchmarkCommitWithHooks(b *testing.B) {
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	for _, c := range []struct {
		name    string
		hooks   bool
		changed bool
	}{{"plain", false, false}, {"hooks-unchanged", true, false}, {"hooks-changed", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			repo := newRepo(b, env)
			file := filepath.Join(repo, ".agent", "memories.md")
			_ = os.MkdirAll(filepath.Dir(file), 0o755)
			if err := os.WriteFile(file, memfile.GenerateFile(330<<10, 2), 0o644); err != nil {
				b.Fatal(err)
			}
			run := func(name string, args ...string) {
				cmd := exec.Command(name, args...)
				cmd.Dir, cmd.Env = repo, env
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%s %v: %v\n%s", name, args, err, out)
				}
			}
			run(bin, "init")
			if c.hooks {
				run(bin, "hooks", "install")
				run(bin, "snapshot")
			}
			b.ResetTimer()
			for i := range b.N {
				if c.changed {
					b.StopTimer()
					appendEntry(b, file, i)
					b.StartTimer()
				}
				run("git", "commit", "-q", "--allow-empty", "-m", "bench")
			}
		})
	}
}

func appendEntry(tb testing.TB, file string, i int) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := fmt.Fprintf(f, "\n## Fix: change %d\n- Tags: bench\n- Date: 2026-11-22\n- Content: learned %d\n", i, i); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkSnapshot10MB: a whole `memsync snapshot` process over a changed
// 10 MB memory side by side with git's own plumbing writing the same
// snapshot (hash-object -w, mktree, commit-tree, update-ref). Target: ≤ 1×.
func BenchmarkSnapshot10MB(b *testing.B) {
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	for _, c := range []struct {
		name string
		cmd  []string
	}{
		{"memsync", []string{bin, "snapshot"}},
		{"git-plumbing", []string{"sh", "-c", `blob=$(git hash-object -w .agent/memories.md) &&
tree=$(printf '100644 blob %s\tmemories.md\n' "$blob" | git mktree) &&
old=$(git rev-parse -q --verify refs/plumbing/snapshots) ; if [ -n "$old" ]; then p="-p $old"; else p=; fi;
commit=$(git commit-tree $tree $p -m snapshot) &&
git update-ref refs/plumbing/snapshots $commit $old`}},
	} {
		b.Run(c.name, func(b *testing.B) {
			repo := newRepo(b, env)
			file := filepath.Join(repo, ".agent", "memories.md")
			_ = os.MkdirAll(filepath.Dir(file), 0o755)
			if err := os.WriteFile(file, memfile.GenerateFile(10<<20, 1), 0o644); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				appendEntry(b, file, i)
				b.StartTimer()
				cmd := exec.Command(c.cmd[0], c.cmd[1:]...)
				cmd.Dir, cmd.Env = repo, env
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %v\n%s", c.cmd, err, out)
				}
			}
		})
	}
}
