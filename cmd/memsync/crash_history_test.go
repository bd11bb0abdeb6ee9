package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memsync/memsync/memfile"
)

// crashRun runs one memsync process in dir and kills it with SIGKILL after a
// random delay below span (no kill when span is 0). It reports whether the
// kill landed, and the output and error of a run that ended on its own.
func crashRun(t *testing.T, rng *rand.Rand, span time.Duration, bin, dir string, env []string, args ...string) (killed bool, out string, took time.Duration, err error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if span > 0 {
		timer := time.AfterFunc(time.Duration(rng.Int64N(int64(span))), func() {
			_ = cmd.Process.Signal(syscall.SIGKILL)
		})
		defer timer.Stop()
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return true, b.String(), time.Since(start), nil
	}
	return false, b.String(), time.Since(start), err
}

// crashLoop runs the command args(n) rounds times in dir: every third run
// goes to its end, each run not killed must succeed, and the duration of
// every third bounds the random kill points of the next two, so kills land
// anywhere in a run on a busy machine too. before, when set, runs before each round.
func crashLoop(t *testing.T, rounds int, bin, dir string, env []string, before func(n int), args func(n int) []string) (kills int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(rounds), 7))
	span, done := 20*time.Millisecond, 0
	for n := range rounds {
		if before != nil {
			before(n)
		}
		s := span
		if n%3 == 0 {
			s = 0
		}
		a := args(n)
		killed, out, took, err := crashRun(t, rng, s, bin, dir, env, a...)
		switch {
		case killed:
			kills++
		case err == nil:
			done++
			if n%3 == 0 {
				span = took
			}
		default:
			t.Fatalf("round %d: memsync %v after a killed run: %v\n%s", n, a, err, out)
		}
	}
	t.Logf("%v: %d killed, %d completed", args(0), kills, done)
	return kills
}

// memsyncOK runs memsync, fails the test on an error, and returns its
// standard output.
func memsyncOK(t *testing.T, bin, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr // notes (a near-duplicate, a repair) are no part of the output
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("memsync %v: %v\n%s%s", args, err, out, stderr.String())
	}
	return string(out)
}

// expectSane checks what every crash test expects afterwards: git fsck is
// clean, git status is clean, and no lock or temp file of memsync is left
// in the memory home or beside the snapshot ref.
func expectSane(t *testing.T, env []string, repo string) {
	t.Helper()
	if out := gitRun(t, env, repo, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("git status after the crashes:\n%s", out)
	}
	cmd := exec.Command("git", "fsck", "--no-dangling", "--no-progress")
	cmd.Dir, cmd.Env = repo, env
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// TestCrashSafeSnapshots: `memsync snapshot` and the post-commit handler
// are killed at random points while a user keeps committing with the hooks
// installed. Every commit succeeds; afterwards git fsck is clean, `memsync
// log` works, and the next snapshot succeeds at once and holds the memory.
func TestCrashSafeSnapshots(t *testing.T) {
	bin := memsyncBinary(t)
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsyncOK(t, bin, repo, env, "init")
	memsyncOK(t, bin, repo, env, "hooks", "install")
	memsyncOK(t, bin, repo, env, "add", "seed "+strings.Repeat("text ", 2000))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	commits := 0
	wg.Add(1)
	go func() { // the user: commits must never fail
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			cmd := exec.Command("git", "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("user %d", commits))
			cmd.Dir, cmd.Env = repo, env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("git commit %d: %v\n%s", commits, err, out)
				return
			}
			commits++
		}
	}()
	kills := crashLoop(t, 60, bin, repo, env,
		func(n int) { memsyncOK(t, bin, repo, env, "add", fmt.Sprintf("lesson %d", n)) },
		func(n int) []string {
			if n%2 == 0 {
				return []string{"snapshot"}
			}
			return []string{"hook", "post-commit"}
		})
	close(stop)
	wg.Wait()
	if kills == 0 {
		t.Fatal("no run was killed")
	}
	if n := strings.Count(gitRun(t, env, repo, "log", "--format=%s", "HEAD"), "user "); n != commits {
		t.Fatalf("%d user commits on HEAD, want %d", n, commits)
	}
	t.Logf("%d user commits", commits)

	memsyncOK(t, bin, repo, env, "add", "after the crashes")
	memsyncOK(t, bin, repo, env, "snapshot")
	if got := snapFile(t, env, repo, "refs/memsync/snapshots:memories.md"); !strings.Contains(got, "after the crashes") {
		t.Fatalf("the snapshot after the crashes lacks the last entry:\n%s", got)
	}
	if out := memsyncOK(t, bin, repo, env, "log"); !strings.Contains(out, "snapshot") {
		t.Fatalf("memsync log:\n%s", out)
	}
	if _, err := os.Lstat(filepath.Join(repo, ".git", "refs", "memsync", "snapshots.lock")); err == nil {
		t.Fatal("refs/memsync/snapshots.lock left behind")
	}
	expectSane(t, env, repo)
}

// TestCrashSafeSync: two clones add entries and sync through a bare remote;
// their syncs are killed at random points. After every round the remote's
// snapshot ref (when there is one) names a commit the remote holds; after
// the next syncs complete, both clones hold every entry either added, and
// nothing is left that makes git fsck or git status complain.
func TestCrashSafeSync(t *testing.T) {
	bin := memsyncBinary(t)
	env, root, remote := bareRemote(t)
	var clones []string
	for c := range 2 {
		dir := filepath.Join(root, fmt.Sprintf("clone%d", c))
		gitRun(t, env, root, "clone", "-q", remote, dir)
		memsyncOK(t, bin, dir, env, "init")
		clones = append(clones, dir)
	}
	var ids []string
	add := func(dir, text string) {
		ids = append(ids, strings.TrimSpace(memsyncOK(t, bin, dir, env, "add", text)))
	}
	add(clones[0], "seed "+strings.Repeat("text ", 2000))
	memsyncOK(t, bin, clones[0], env, "sync")
	for c, dir := range clones {
		kills := crashLoop(t, 9, bin, dir, env,
			func(n int) {
				add(clones[n%2], fmt.Sprintf("clone %d in loop %d round %d", n%2, c, n))
				add(dir, fmt.Sprintf("syncing clone %d round %d", c, n))
				cmd := exec.Command("git", "--git-dir="+remote, "rev-parse", "-q", "--verify", "refs/memsync/snapshots")
				cmd.Env = env
				if out, err := cmd.Output(); err == nil {
					gitRun(t, env, root, "--git-dir="+remote, "cat-file", "-e", strings.TrimSpace(string(out))+"^{commit}")
				}
			},
			func(int) []string { return []string{"sync"} })
		if kills == 0 {
			t.Fatal("no sync was killed")
		}
	}
	for _, d := range []string{clones[0], clones[1], clones[0]} {
		memsyncOK(t, bin, d, env, "sync")
	}
	for c, d := range clones {
		data, err := os.ReadFile(filepath.Join(d, ".agent", "memories.md"))
		if err != nil {
			t.Fatal(err)
		}
		f := memfile.Parse(data)
		if len(f.Problems) > 0 {
			t.Fatalf("clone %d: the memory does not parse: %v", c, f.Problems)
		}
		have := map[string]bool{}
		for _, e := range f.Entries {
			have[e.ID] = true
		}
		for _, id := range ids {
			if !have[id] {
				t.Fatalf("clone %d lost entry %s", c, id)
			}
		}
		if len(f.Entries) != len(ids) {
			t.Fatalf("clone %d holds %d entries, want %d", c, len(f.Entries), len(ids))
		}
		expectSane(t, env, d)
	}
	gitRun(t, env, root, "--git-dir="+remote, "fsck", "--no-dangling", "--no-progress")
}

// idsIn returns the IDs of the entries of a memory file, failing the test
// when it does not parse.
func idsIn(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	f := memfile.Parse(data)
	if len(f.Problems) > 0 {
		t.Fatalf("%s does not parse: %v", path, f.Problems)
	}
	ids := map[string]bool{}
	for _, e := range f.Entries {
		ids[e.ID] = true
	}
	return ids
}

// TestCrashSafeRepairs: gc, rollback, resolve and worktree add are killed
// at random points; the next run of the same command succeeds (or says
// what to do), no entry is lost, and git status and git fsck stay clean.
func TestCrashSafeRepairs(t *testing.T) {
	bin := memsyncBinary(t)

	t.Run("gc", func(t *testing.T) {
		env := append(testGitEnv(t), "MCP_MEMORY_MAX_ENTRIES=15")
		repo := newRepo(t, env)
		memsyncOK(t, bin, repo, env, "init")
		var ids []string
		crashLoop(t, 12, bin, repo, env, func(n int) {
			for i := range 2 {
				cmd := exec.Command(bin, "add", fmt.Sprintf("lesson %d.%d %s", n, i, strings.Repeat("text ", 100)))
				cmd.Dir, cmd.Env = repo, env
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("add: %v", err)
				}
				ids = append(ids, strings.TrimSpace(string(out)))
			}
		}, func(int) []string { return []string{"gc"} })
		memsyncOK(t, bin, repo, env, "gc")
		active, archive := idsIn(t, filepath.Join(repo, ".agent", "memories.md")), idsIn(t, filepath.Join(repo, ".agent", "archive", "memories.md"))
		for _, id := range ids {
			if !active[id] && !archive[id] {
				t.Fatalf("entry %s is lost", id)
			}
		}
		memsyncOK(t, bin, repo, env, "snapshot")
		expectSane(t, env, repo)
	})

	t.Run("rollback", func(t *testing.T) {
		env := testGitEnv(t)
		repo := newRepo(t, env)
		memsyncOK(t, bin, repo, env, "init")
		var revs []string
		for i := range 4 {
			memsyncOK(t, bin, repo, env, "add", fmt.Sprintf("version %d %s", i, strings.Repeat("text ", 500)))
			memsyncOK(t, bin, repo, env, "snapshot")
			revs = append(revs, strings.TrimSpace(gitRun(t, env, repo, "rev-parse", "refs/memsync/snapshots")))
		}
		crashLoop(t, 24, bin, repo, env, nil, func(n int) []string { return []string{"rollback", revs[n%len(revs)]} })
		memsyncOK(t, bin, repo, env, "rollback", revs[1])
		want := map[string]bool{}
		for _, e := range memfile.Parse([]byte(snapFile(t, env, repo, revs[1]+":memories.md"))).Entries {
			want[e.ID] = true
		}
		if got := idsIn(t, filepath.Join(repo, ".agent", "memories.md")); len(got) != len(want) {
			t.Fatalf("after the rollback the memory holds %v, want %v", got, want)
		}
		memsyncOK(t, bin, repo, env, "log")
		memsyncOK(t, bin, repo, env, "add", "after the crashes")
		memsyncOK(t, bin, repo, env, "snapshot")
		expectSane(t, env, repo)
	})

	t.Run("resolve", func(t *testing.T) {
		env, root, remote := bareRemote(t)
		a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
		for _, d := range []string{a, b} {
			gitRun(t, env, root, "clone", "-q", remote, d)
		}
		var ids []string
		for i := range 20 {
			ids = append(ids, strings.TrimSpace(memsyncOK(t, bin, a, env, "add", fmt.Sprintf("fact %d is base", i))))
		}
		memsyncOK(t, bin, a, env, "sync")
		memsyncOK(t, bin, b, env, "sync")
		// Each clone edits every entry its own way: b's sync records a
		// conflict per entry, keeping b's words.
		edit := func(dir, word string) {
			path := filepath.Join(dir, ".agent", "memories.md")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, bytes.ReplaceAll(data, []byte(" is base"), []byte(" is "+word)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		edit(a, "alpha")
		memsyncOK(t, bin, a, env, "sync")
		edit(b, "beta")
		memsyncOK(t, bin, b, env, "sync")
		if out := memsyncOK(t, bin, b, env, "conflicts"); strings.Count(out, "conflict ") != len(ids) {
			t.Fatalf("want %d conflicts:\n%s", len(ids), out)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		span, kills := 30*time.Millisecond, 0
		for n, id := range ids {
			s := span
			if n%3 == 0 {
				s = 0
			}
			killed, out, took, err := crashRun(t, rng, s, bin, b, env, "resolve", id, "--theirs")
			if !killed {
				if err != nil {
					t.Fatalf("resolve %s: %v\n%s", id, err, out)
				}
				if n%3 == 0 {
					span = took
				}
				continue
			}
			kills++
			// Again: it resolves, or says the conflict is settled already.
			cmd := exec.Command(bin, "resolve", id, "--theirs")
			cmd.Dir, cmd.Env = b, env
			if out, err := cmd.CombinedOutput(); err != nil && !strings.Contains(string(out), "no recorded conflict") {
				t.Fatalf("resolve %s after a killed run: %v\n%s", id, err, out)
			}
		}
		if kills == 0 {
			t.Fatal("no resolve was killed")
		}
		t.Logf("resolve: %d of %d killed", kills, len(ids))
		if out := memsyncOK(t, bin, b, env, "conflicts"); !strings.Contains(out, "no recorded conflicts") {
			t.Fatalf("conflicts left:\n%s", out)
		}
		data, err := os.ReadFile(filepath.Join(b, ".agent", "memories.md"))
		if err != nil {
			t.Fatal(err)
		}
		f := memfile.Parse(data)
		if len(f.Problems) > 0 || len(f.Entries) != len(ids) {
			t.Fatalf("after the resolves: %d entries, problems %v", len(f.Entries), f.Problems)
		}
		for _, e := range f.Entries {
			if !strings.HasSuffix(e.Content, " is alpha") {
				t.Fatalf("entry %s holds %q, want theirs (alpha)", e.ID, e.Content)
			}
		}
		memsyncOK(t, bin, b, env, "snapshot")
		memsyncOK(t, bin, b, env, "sync")
		expectSane(t, env, b)
	})

	t.Run("worktree-add", func(t *testing.T) {
		env := testGitEnv(t)
		repo := newRepo(t, env)
		memsyncOK(t, bin, repo, env, "init")
		memsyncOK(t, bin, repo, env, "add", "shared lesson")
		args := func(n int) []string {
			return []string{"worktree", "add", "-B", fmt.Sprintf("b%d", n), filepath.Join(filepath.Dir(repo), fmt.Sprintf("wt%d", n))}
		}
		rng := rand.New(rand.NewPCG(3, 4))
		span := 50 * time.Millisecond
		for n := range 16 {
			killed, out, took, err := crashRun(t, rng, span, bin, repo, env, args(n)...)
			if !killed {
				if err != nil {
					t.Fatalf("%v: %v\n%s", args(n), err, out)
				}
				span = took
				continue
			}
			// The same command again: it succeeds, or says what to do.
			cmd := exec.Command(bin, args(n)...)
			cmd.Dir, cmd.Env = repo, env
			if out, err := cmd.CombinedOutput(); err != nil {
				if !strings.Contains(string(out), "hint:") {
					t.Fatalf("%v after a killed run: %v, and no hint\n%s", args(n), err, out)
				}
				t.Logf("%v after a killed run: %s", args(n), out)
				memsyncOK(t, bin, repo, env, "worktree", "link", filepath.Join(filepath.Dir(repo), fmt.Sprintf("wt%d", n)))
			}
			wt := filepath.Join(filepath.Dir(repo), fmt.Sprintf("wt%d", n))
			if out := memsyncOK(t, bin, wt, env, "list"); !strings.Contains(out, "shared lesson") {
				t.Fatalf("worktree %d does not share the memory:\n%s", n, out)
			}
			expectSane(t, env, wt)
		}
		memsyncOK(t, bin, repo, env, "worktree", "doctor")
		expectSane(t, env, repo)
	})
}
