package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// memsyncBinary builds the real memsync once for tests that run it as
// separate processes (concurrency, whole-process benchmarks).
func memsyncBinary(tb testing.TB) string {
	tb.Helper()
	binOnce.Do(func() {
		// MEMSYNC_TEST_BIN runs the process tests and benchmarks with a
		// given binary (scripts/bench-baseline: another revision's).
		if p := os.Getenv("MEMSYNC_TEST_BIN"); p != "" {
			binPath = p
			return
		}
		binDir, binErr = os.MkdirTemp("", "memsync-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "memsync")
		// Built as README says to install it: static, without cgo, without
		// the CLI library's man page generator.
		build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", binPath, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if binErr != nil {
		tb.Fatal(binErr)
	}
	return binPath
}

// testGitEnv is the environment for git and memsync processes in tests.
func testGitEnv(tb testing.TB) []string {
	home := tb.TempDir()
	env := []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@memsync.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@memsync.invalid"}
	// Tests pack and snapshot in the foreground (git's
	// maintenance.autoDetach, MEMSYNC_HOOKS_WAIT), so no packing or hook
	// outlives the test that its temp dir's removal would race, and a
	// commit's snapshot is there when git returns; benchmarks run as a
	// user's memsync does.
	if _, bench := tb.(*testing.B); !bench {
		if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[maintenance]\n\tautoDetach = false\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
		env = append(env, "MEMSYNC_HOOKS_WAIT=1")
	}
	// The user's own git identity (GIT_AUTHOR_NAME and the like) must not
	// win over the test's: exec takes the last of a name.
	for _, kv := range gitcmd.Env() {
		if !hasAnyPrefix(kv, "HOME=", "MEMSYNC_", "XDG_DATA_HOME=", "GIT_AUTHOR_", "GIT_COMMITTER_") {
			env = append(env, kv)
		}
	}
	return env
}

// prependPath is env with dir first on its PATH.
func prependPath(env []string, dir string) []string {
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + dir + string(os.PathListSeparator) + v
		}
	}
	return env
}

func gitRun(tb testing.TB, env []string, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// snapFile is a memory file a snapshot holds ("REV:memories.md"), rebuilt
// with plain git (testgit.ShowErr).
func snapFile(tb testing.TB, env []string, dir, object string) string {
	tb.Helper()
	out, err := testgit.ShowErr(dir, env, object)
	if err != nil {
		tb.Fatalf("git show %s: %v", object, err)
	}
	return out
}

// newRepo makes a repository with one commit in a temp dir.
func newRepo(tb testing.TB, env []string) string {
	tb.Helper()
	dir, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	repo := filepath.Join(dir, "repo")
	gitRun(tb, env, dir, "init", "-q", repo)
	gitRun(tb, env, repo, "commit", "-q", "--allow-empty", "-m", "init")
	return repo
}

// TestConcurrentAddsFromWorktrees: 8 real processes × 200 adds each, from 8
// worktrees, half through a symlink to the primary's file and half without
// one: every entry arrives whole, exactly once (in the active file or, past
// the max count, in the archive).
func TestConcurrentAddsFromWorktrees(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 1600 processes")
	}
	bin := memsyncBinary(t)
	env := testGitEnv(t)
	repo := newRepo(t, env)
	const workers, adds = 8, 200
	var dirs []string
	for i := range workers {
		wt := filepath.Join(filepath.Dir(repo), fmt.Sprintf("wt%d", i))
		gitRun(t, env, repo, "worktree", "add", "-q", wt, "-b", fmt.Sprintf("loop%d", i))
		if i%2 == 0 {
			if err := os.MkdirAll(filepath.Join(wt, ".agent"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../../repo/.agent/memories.md", filepath.Join(wt, ".agent", "memories.md")); err != nil {
				t.Fatal(err)
			}
		}
		dirs = append(dirs, wt)
	}
	err := inParallel(env, dirs, adds, "", func(i, j int) [][]string {
		return [][]string{{bin, "add", fmt.Sprintf("worker %d learned thing %d\nsecond line %d-%d", i, j, i, j), "-t", "pattern", "--tags", fmt.Sprintf("w%d", i)}}
	})
	if err != nil {
		t.Fatal(err)
	}
	// Past the default max count (1000) add archives the least recently
	// used entries: every entry is in exactly one of the two files.
	var all []memfile.Entry
	for _, p := range []string{".agent/memories.md", ".agent/archive/memories.md"} {
		data, err := os.ReadFile(filepath.Join(repo, p))
		if err != nil {
			t.Fatal(err)
		}
		f := memfile.Parse(data)
		if len(f.Problems) > 0 {
			t.Fatalf("%s: problems: %v", p, f.Problems)
		}
		all = append(all, f.Entries...)
	}
	if len(all) != workers*adds {
		t.Fatalf("%d entries, want %d", len(all), workers*adds)
	}
	ids, contents := map[string]bool{}, map[string]bool{}
	for _, e := range all {
		ids[e.ID] = true
		contents[e.Content] = true
	}
	if len(ids) != workers*adds || len(contents) != workers*adds {
		t.Fatalf("%d distinct IDs, %d distinct contents, want %d", len(ids), len(contents), workers*adds)
	}
	for i := range workers {
		for j := range adds {
			if !contents[fmt.Sprintf("worker %d learned thing %d\nsecond line %d-%d", i, j, i, j)] {
				t.Fatalf("lost: worker %d entry %d", i, j)
			}
		}
	}
	for _, d := range append(dirs, repo) {
		if out := gitRun(t, env, d, "status", "--porcelain"); strings.TrimSpace(out) != "" {
			t.Fatalf("git status in %s:\n%s", d, out)
		}
	}
}

// BenchmarkSearchProcess: a whole `memsync search` process over a memory
// of 30,000 entries (12 MB) side by side with `grep -ci` on the same file;
// the first run builds the search index, the others read it. Target:
// memsync ≤ 2× grep's median.
func BenchmarkSearchProcess(b *testing.B) {
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	repo, file := repoWithMemory(b, env, size30k)
	sideBySide(b, []string{"grep", "memsync"}, []func(int) time.Duration{
		func(int) time.Duration { return runProcess(b, env, repo, "grep", "-ci", "retry", file) },
		func(int) time.Duration {
			return runProcess(b, env, repo, bin, "search", "retry timeout", "--limit", "10")
		},
	})
}

// BenchmarkAddProcess: a whole `memsync add` process side by side with the
// shell baseline of the same lock protocol, flock(1) + printf >> file, into a
// memory of 1000 entries. Target ratio ≤ 1.5.
func BenchmarkAddProcess(b *testing.B) {
	if _, err := exec.LookPath("flock"); err != nil {
		b.Skip("flock(1) not installed")
	}
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	// Two repositories: an append behind memsync's back makes it rebuild its
	// dedup index on the next add.
	base, file := repoWithMemory(b, env, 330<<10)
	repo, _ := repoWithMemory(b, env, 330<<10)
	sideBySide(b, []string{"flock-printf", "memsync"}, []func(int) time.Duration{
		func(i int) time.Duration {
			return runProcess(b, env, base, "flock", file+".lock", "sh", "-c",
				fmt.Sprintf(`printf '\n## Solution: CI Timeout\n- Tags: ci\n- Date: 2026-11-22\n- Content: Increase CI timeout to %d seconds\n' >> %s`, 600+i, file))
		},
		func(i int) time.Duration {
			// New content each time: identical content is a duplicate, not an append.
			return runProcess(b, env, repo, bin, "add", fmt.Sprintf("Raise CI timeout to %d seconds", 600+i), "-t", "solution", "--tags", "ci")
		},
	})
}

// inParallel runs one worker per dir, all at once: worker i runs the command
// lines steps(i, j) for j = 0..n-1 in its dir, in order, as real processes.
// The first failure (or output containing fail, when fail is not "") is
// returned; that worker stops.
func inParallel(env, dirs []string, n int, fail string, steps func(i, j int) [][]string) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(dirs))
	for i, dir := range dirs {
		wg.Go(func() {
			for j := range n {
				for _, args := range steps(i, j) {
					cmd := exec.Command(args[0], args[1:]...)
					cmd.Dir, cmd.Env = dir, env
					out, err := cmd.CombinedOutput()
					if err != nil || (fail != "" && bytes.Contains(out, []byte(fail))) {
						errs <- fmt.Errorf("worker %d step %d: %v: %w\n%s", i, j, args, err, out)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
