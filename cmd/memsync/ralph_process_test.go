package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// ralphBinary is the build of ralph-orchestrator's own memory code that
// tests run as a real second writer: $MEMSYNC_TEST_RALPH, else
// ../shared/tools/ralph/ralph beside the module root. A test that needs it
// skips, saying so, only when the file is absent.
func ralphBinary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("MEMSYNC_TEST_RALPH"); p != "" {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			tb.Fatal("no go.mod above the test's folder")
		}
	}
	p := filepath.Join(filepath.Dir(dir), "shared", "tools", "ralph", "ralph")
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("ralph-orchestrator's memory build is absent (%s; set MEMSYNC_TEST_RALPH): %v", p, err)
	}
	return p
}

// ralphIn runs `ralph tools memory ARGS` in dir and returns its stdout.
func ralphIn(tb testing.TB, env []string, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(ralphBinary(tb), append([]string{"tools", "memory"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("ralph %v in %s: %v\n%s%s", args, dir, err, out, stderr.String())
	}
	return string(out)
}

// memsyncAny runs the real memsync in dir and returns its output, whatever
// its exit status (a doctor that finds problems exits 1).
func memsyncAny(tb testing.TB, env []string, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(memsyncBinary(tb), args...)
	cmd.Dir, cmd.Env = dir, env
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// seen is what each tool lists in dir: content -> IDs.
type seen struct{ ralph, memsync map[string][]string }

func listBoth(tb testing.TB, env []string, dir string) seen {
	tb.Helper()
	var r []struct{ ID, Content string }
	if err := json.Unmarshal([]byte(ralphIn(tb, env, dir, "list", "--format", "json")), &r); err != nil {
		tb.Fatalf("ralph list in %s: %v", dir, err)
	}
	var m []struct{ ID, Content string }
	if err := json.Unmarshal([]byte(memsyncIn(tb, env, dir, "list", "--json")), &m); err != nil {
		tb.Fatalf("memsync list in %s: %v", dir, err)
	}
	s := seen{map[string][]string{}, map[string][]string{}}
	for _, e := range r {
		s.ralph[e.Content] = append(s.ralph[e.Content], e.ID)
	}
	for _, e := range m {
		s.memsync[e.Content] = append(s.memsync[e.Content], e.ID)
	}
	return s
}

// expectSeen fails unless both tools list every one of want in dir, and
// nothing else.
func expectSeen(tb testing.TB, env []string, dir string, want []string) seen {
	tb.Helper()
	s := listBoth(tb, env, dir)
	for _, tool := range []struct {
		name string
		got  map[string][]string
	}{{"ralph", s.ralph}, {"memsync", s.memsync}} {
		var missing []string
		for _, c := range want {
			if len(tool.got[c]) == 0 {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			tb.Errorf("%s in %s does not list %d of %d entries, first %q", tool.name, dir, len(missing), len(want), missing[0])
		}
		if len(tool.got) != len(want) {
			tb.Errorf("%s in %s lists %d distinct entries, want %d", tool.name, dir, len(tool.got), len(want))
		}
	}
	if tb.Failed() {
		tb.FailNow()
	}
	return s
}

// expectClean fails unless git status in dir is empty.
func expectClean(tb testing.TB, env []string, dirs ...string) {
	tb.Helper()
	for _, d := range dirs {
		if out := gitRun(tb, env, d, "status", "--porcelain", "--untracked-files=all"); strings.TrimSpace(out) != "" {
			tb.Fatalf("git status in %s:\n%s", d, out)
		}
	}
}

// expectNoBackup fails when a backup or stray file lies beside the memory.
func expectNoBackup(tb testing.TB, home string) {
	tb.Helper()
	names, err := os.ReadDir(home)
	if err != nil {
		tb.Fatal(err)
	}
	for _, n := range names {
		if n.Name() != "memories.md" && n.Name() != "memories.md.lock" && n.Name() != "archive" { // archive/: the link to the archive
			tb.Errorf("%s holds %s", home, n.Name())
		}
	}
}

// TestRalphFirstThenMemsync: ralph makes its memory; memsync, with no
// configuration, serves that file (list, search, add), and ralph reads what
// memsync added. git status stays clean.
func TestRalphFirstThenMemsync(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	ralphIn(t, env, repo, "add", "ralph learned the build needs make gen", "-t", "pattern", "--tags", "build")
	s := expectSeen(t, env, repo, []string{"ralph learned the build needs make gen"})
	if !strings.HasPrefix(s.memsync["ralph learned the build needs make gen"][0], "mem-") {
		t.Fatalf("memsync lists %v", s.memsync)
	}
	if out := memsyncIn(t, env, repo, "search", "make gen", "--json"); !strings.Contains(out, "ralph learned") {
		t.Fatalf("memsync search: %s", out)
	}
	memsyncIn(t, env, repo, "add", "memsync learned the tests need git", "-t", "fix", "--tags", "test")
	expectSeen(t, env, repo, []string{"ralph learned the build needs make gen", "memsync learned the tests need git"})
	if _, err := os.Stat(filepath.Join(repo, ".agent")); err == nil {
		t.Fatal("memsync made .agent/ in a ralph repository")
	}
	if out := memsyncIn(t, env, repo, "doctor"); !strings.Contains(out, ".ralph/agent/memories.md") {
		t.Fatalf("doctor does not say which file is the memory:\n%s", out)
	}
	expectClean(t, env, repo)
}

// TestMemsyncFirstThenRalph: memsync starts the memory, chosen by
// `memsync init --ralph` in an empty repository or found by a bare .ralph/
// folder; ralph reads it and adds to it; memsync sees ralph's entries.
func TestMemsyncFirstThenRalph(t *testing.T) {
	env := testGitEnv(t)
	for _, how := range []string{"init --ralph", ".ralph/ folder"} {
		t.Run(how, func(t *testing.T) {
			repo := newRepo(t, env)
			if how == "init --ralph" {
				memsyncIn(t, env, repo, "init", "--ralph")
			} else if err := os.Mkdir(filepath.Join(repo, ".ralph"), 0o755); err != nil {
				t.Fatal(err)
			}
			memsyncIn(t, env, repo, "add", "memsync first: use the retry helper", "-t", "pattern")
			if _, err := os.Stat(filepath.Join(repo, ".ralph", "agent", "memories.md")); err != nil {
				t.Fatal(err)
			}
			ralphIn(t, env, repo, "add", "ralph second: the cache key includes the arch", "-t", "decision")
			expectSeen(t, env, repo, []string{"memsync first: use the retry helper", "ralph second: the cache key includes the arch"})
			if how == ".ralph/ folder" {
				// The explicit setting moves the link to memsync's own path;
				// the memory (in the git dir) stays the one memory.
				memsyncIn(t, env, repo, "init", "--layout", "agent")
				out := memsyncIn(t, env, repo, "list", "--json")
				if !strings.Contains(out, "memsync first") || !strings.Contains(out, "ralph second") {
					t.Fatalf("with layout agent, memsync lists %s", out)
				}
				if _, err := os.Readlink(filepath.Join(repo, ".agent", "memories.md")); err != nil {
					t.Fatalf("no .agent link after init --layout agent: %v", err)
				}
			}
			expectClean(t, env, repo)
		})
	}
}

// TestRalphConcurrentPrimary: 4 ralph and 4 memsync processes × 50 adds
// each, at once, in the primary worktree: every entry is seen by both tools,
// the IDs are distinct, and no backup is written.
func TestRalphConcurrentPrimary(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 400 processes")
	}
	ralph, bin := ralphBinary(t), memsyncBinary(t)
	env := testGitEnv(t)
	repo := newRepo(t, env)
	ralphIn(t, env, repo, "init")
	const workers, adds = 8, 50
	dirs := slices.Repeat([]string{repo}, workers)
	start := time.Now()
	err := inParallel(env, dirs, adds, "", func(i, j int) [][]string {
		if i%2 == 0 {
			return [][]string{{ralph, "tools", "memory", "add", fmt.Sprintf("ralph %d note %d", i, j), "-t", "pattern", "--format", "quiet"}}
		}
		return [][]string{{bin, "add", fmt.Sprintf("memsync %d note %d", i, j), "-t", "pattern"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	var want []string
	for i := range workers {
		for j := range adds {
			who := "memsync"
			if i%2 == 0 {
				who = "ralph"
			}
			want = append(want, fmt.Sprintf("%s %d note %d", who, i, j))
		}
	}
	s := expectSeen(t, env, repo, want)
	reportIDs(t, s, len(want))
	expectNoBackup(t, filepath.Join(repo, ".ralph", "agent"))
	expectClean(t, env, repo)
	t.Logf("primary: %d ralph + %d memsync processes × %d adds in %v: ralph lists %d, memsync lists %d, no backup",
		workers/2, workers/2, adds, took.Round(time.Millisecond), len(s.ralph), len(s.memsync))
}

// reportIDs fails when two entries share an ID that memsync drew (ralph's
// own draws, 4 random hex digits a second, are its own; such a clash is
// logged), or when memsync gave out an ID of a form ralph draws too.
func reportIDs(t *testing.T, s seen, n int) {
	t.Helper()
	owner := map[string][]string{}
	for c, ids := range s.memsync {
		for _, id := range ids {
			if strings.HasPrefix(c, "memsync") && !ownRalphID.MatchString(id) {
				t.Errorf("memsync gave %q the ID %s, of a form ralph may draw too", c, id)
			}
			owner[id] = append(owner[id], c)
		}
	}
	for id, cs := range owner {
		if len(cs) < 2 {
			continue
		}
		mine := false
		for _, c := range cs {
			mine = mine || strings.HasPrefix(c, "memsync")
		}
		if mine {
			t.Errorf("ID %s is on %d entries: %q", id, len(cs), cs)
		} else {
			t.Logf("ralph drew ID %s twice: %q", id, cs)
		}
	}
	t.Logf("%d entries, %d distinct IDs", n, len(owner))
}

// TestRalphConcurrentWorktrees: ralph loops in two worktrees — one ralph
// made itself (a plain git worktree add and ralph's absolute symlink to the
// primary's file, brought onto the one lock by memsync worktree doctor
// --fix), one whose memory the post-checkout hook linked — and memsync in
// the primary, all adding at once: every entry is seen by both tools in
// every worktree, the IDs are distinct, no backup is written, git status
// stays clean everywhere.
func TestRalphConcurrentWorktrees(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 150 processes")
	}
	ralph, bin := ralphBinary(t), memsyncBinary(t)
	env := testGitEnv(t)
	repo := newRepo(t, env)
	if err := os.WriteFile(filepath.Join(repo, ".gitignore"), []byte(".worktrees/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, repo, "add", ".gitignore")
	gitRun(t, env, repo, "commit", "-q", "-m", "ignore ralph's worktrees")
	ralphIn(t, env, repo, "add", "before the loops", "-t", "context")

	// A loop ralph made: its absolute symlink, its own lock.
	loop1 := filepath.Join(repo, ".worktrees", "loop-1")
	gitRun(t, env, repo, "worktree", "add", "-q", loop1, "-b", "ralph/loop-1")
	if err := os.MkdirAll(filepath.Join(loop1, ".ralph", "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, ".ralph", "agent", "memories.md"), filepath.Join(loop1, ".ralph", "agent", "memories.md")); err != nil {
		t.Fatal(err)
	}
	ralphIn(t, env, loop1, "list") // makes its own lock file there
	out := memsyncAny(t, env, repo, "worktree", "doctor")
	if !strings.Contains(out, "lock-unshared") {
		t.Fatalf("worktree doctor does not see ralph's own lock in loop-1:\n%s", out)
	}
	memsyncIn(t, env, repo, "worktree", "doctor", "--fix")
	lp1, _ := filepath.EvalSymlinks(filepath.Join(loop1, ".ralph", "agent", "memories.md.lock"))
	if want := filepath.Join(repo, ".git", "memsync", "memories.md.lock"); lp1 != want {
		t.Fatalf("loop-1's lock resolves to %s, want %s", lp1, want)
	}

	// A loop made with memsync's hooks installed: post-checkout links it.
	memsyncIn(t, env, repo, "hooks", "install")
	loop2 := filepath.Join(repo, ".worktrees", "loop-2")
	gitRun(t, env, repo, "worktree", "add", "-q", loop2, "-b", "ralph/loop-2")
	lp2, _ := filepath.EvalSymlinks(filepath.Join(loop2, ".ralph", "agent", "memories.md.lock"))
	if want := filepath.Join(repo, ".git", "memsync", "memories.md.lock"); lp2 != want {
		t.Fatalf("after post-checkout, loop-2's lock resolves to %q, want %s", lp2, want)
	}
	if out := memsyncIn(t, env, repo, "worktree", "doctor"); strings.Contains(out, "lock-unshared") {
		t.Fatalf("worktree doctor after the fixes:\n%s", out)
	}

	const adds = 50
	start := time.Now()
	err := inParallel(env, []string{loop1, loop2, repo}, adds, "", func(i, j int) [][]string {
		if i < 2 {
			return [][]string{{ralph, "tools", "memory", "add", fmt.Sprintf("ralph loop %d note %d", i+1, j), "-t", "fix", "--format", "quiet"}}
		}
		return [][]string{{bin, "add", fmt.Sprintf("memsync primary note %d", j), "-t", "fix"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	want := []string{"before the loops"}
	for j := range adds {
		want = append(want, fmt.Sprintf("ralph loop 1 note %d", j), fmt.Sprintf("ralph loop 2 note %d", j), fmt.Sprintf("memsync primary note %d", j))
	}
	var s seen
	for _, d := range []string{repo, loop1, loop2} {
		s = expectSeen(t, env, d, want)
	}
	reportIDs(t, s, len(want))
	expectNoBackup(t, filepath.Join(repo, ".ralph", "agent"))
	expectClean(t, env, repo, loop1, loop2)
	t.Logf("worktrees: ralph in 2 worktrees + memsync in the primary × %d adds in %v: %d entries seen by both tools in each of 3 worktrees, no backup",
		adds, took.Round(time.Millisecond), len(want))
}

// TestRalphTrackedAcrossWorktrees: a repository that commits
// .ralph/agent/memories.md (ralph's default). memsync worktree add links a
// new worktree's file (skip-worktree set, lock shared); a worktree whose
// ralph wrote its own checked-out copy is folded and linked by worktree
// doctor --fix. Both tools see every entry in every worktree; git status
// shows nothing memsync made (the primary's file is modified by the new
// entries, as with ralph alone), and git add -A commits no link.
func TestRalphTrackedAcrossWorktrees(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	ralphIn(t, env, repo, "add", "committed learning", "-t", "pattern")
	gitRun(t, env, repo, "add", ".ralph/agent/memories.md")
	gitRun(t, env, repo, "commit", "-q", "-m", "ralph memories")

	wt1 := filepath.Join(filepath.Dir(repo), "wt1")
	memsyncIn(t, env, repo, "worktree", "add", wt1, "-b", "b1")
	// A worktree ralph runs in without memsync: its own tracked copy.
	wt2 := filepath.Join(filepath.Dir(repo), "wt2")
	gitRun(t, env, repo, "worktree", "add", "-q", wt2, "-b", "b2")
	ralphIn(t, env, wt2, "add", "learned in wt2 before linking", "-t", "fix")
	memsyncIn(t, env, repo, "worktree", "doctor", "--fix")

	ralphIn(t, env, wt1, "add", "learned in wt1", "-t", "fix")
	ralphIn(t, env, wt2, "add", "learned in wt2", "-t", "fix")
	memsyncIn(t, env, repo, "add", "learned in the primary", "-t", "decision")
	memsyncIn(t, env, wt1, "add", "memsync in wt1", "-t", "decision")
	want := []string{"committed learning", "learned in wt2 before linking", "learned in wt1", "learned in wt2", "learned in the primary", "memsync in wt1"}
	for _, d := range []string{repo, wt1, wt2} {
		expectSeen(t, env, d, want)
	}
	expectClean(t, env, wt1, wt2)
	for _, d := range []string{wt1, wt2} {
		gitRun(t, env, d, "add", "-A")
		if out := gitRun(t, env, d, "diff", "--cached", "--name-status"); strings.TrimSpace(out) != "" {
			t.Fatalf("git add -A in %s stages:\n%s", d, out)
		}
	}
	if out := gitRun(t, env, repo, "status", "--porcelain", "--untracked-files=all"); strings.TrimSpace(out) != "M .ralph/agent/memories.md" {
		t.Fatalf("git status in the primary:\n%s", out)
	}
	if out := memsyncIn(t, env, repo, "worktree", "doctor"); strings.Contains(out, "typechange") || strings.Contains(out, "lock-unshared") {
		t.Fatalf("worktree doctor:\n%s", out)
	}
}

// TestRalphUntrackedAcrossWorktrees: a repository that ignores nothing and
// commits nothing of .ralph/: memsync keeps the memory out of git status in
// every worktree it links, and both tools see every entry everywhere.
func TestRalphUntrackedAcrossWorktrees(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	ralphIn(t, env, repo, "add", "untracked learning", "-t", "pattern")
	wt1 := filepath.Join(filepath.Dir(repo), "wt1")
	memsyncIn(t, env, repo, "worktree", "add", wt1, "-b", "b1")
	ralphIn(t, env, wt1, "add", "from wt1", "-t", "fix")
	memsyncIn(t, env, wt1, "add", "memsync from wt1", "-t", "fix")
	want := []string{"untracked learning", "from wt1", "memsync from wt1"}
	expectSeen(t, env, repo, want)
	expectSeen(t, env, wt1, want)
	expectClean(t, env, repo, wt1)
}

// TestRalphMergeDriver: a tracked ralph file changed on two branches merges
// by entry through memsync's merge driver in a real git merge, and ralph
// reads the result.
func TestRalphMergeDriver(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	ralphIn(t, env, repo, "add", "base learning", "-t", "pattern")
	gitRun(t, env, repo, "add", ".ralph/agent/memories.md")
	gitRun(t, env, repo, "commit", "-q", "-m", "memories")
	out := memsyncIn(t, env, repo, "init", "--merge-driver")
	if !strings.Contains(out, ".ralph/agent/memories.md merge=memsync") {
		t.Fatalf("init --merge-driver:\n%s", out)
	}
	gitRun(t, env, repo, "checkout", "-q", "-b", "side")
	ralphIn(t, env, repo, "add", "side learning", "-t", "fix")
	gitRun(t, env, repo, "commit", "-q", "-am", "side")
	gitRun(t, env, repo, "checkout", "-q", "-")
	ralphIn(t, env, repo, "add", "main learning", "-t", "fix")
	gitRun(t, env, repo, "commit", "-q", "-am", "main")
	gitRun(t, env, repo, "merge", "-q", "--no-edit", "side")
	data, err := os.ReadFile(filepath.Join(repo, ".ralph", "agent", "memories.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "<<<<<<<") || strings.Contains(string(data), "## Context:") {
		t.Fatalf("merged file:\n%s", data)
	}
	expectSeen(t, env, repo, []string{"base learning", "side learning", "main learning"})
	expectClean(t, env, repo)
}

// ownRalphID is the form of the IDs memsync gives out in a ralph file,
// which ralph's generator never makes (it writes the seconds without a
// leading zero).
var ownRalphID = regexp.MustCompile(`^mem-0[0-9]+-[0-9a-f]{4}$`)

// TestRalphIDCollisionKeepsBoth: an entry ralph made and one memsync made
// share an ID (memsync gave out IDs of ralph's form before), forced by
// hand. memsync's IDs in the file are of its own form; the next rewrite
// leaves the shared ID to ralph's entry, which ralph knows by it alone, and
// gives memsync's a new one: each tool then finds each entry by its ID, and
// ralph's delete of its own ID removes its own entry only.
func TestRalphIDCollisionKeepsBoth(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	ralphIn(t, env, repo, "init")
	// memsync's entry first in the file (Patterns before Context): a
	// rewrite that renamed the later of two entries sharing an ID took it
	// from ralph's.
	mid := strings.TrimSpace(memsyncIn(t, env, repo, "add", "memsync's fact", "-t", "pattern"))
	rid := strings.TrimSpace(ralphIn(t, env, repo, "add", "ralph's fact", "-t", "context", "--format", "quiet"))
	if !ownRalphID.MatchString(mid) || ownRalphID.MatchString(rid) {
		t.Fatalf("memsync gave out %s, ralph %s: want memsync's alone of memsync's own form", mid, rid)
	}
	file := filepath.Join(repo, ".ralph", "agent", "memories.md")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	forced := strings.Replace(string(data), "### "+mid+"\n", "### "+rid+"\n", 1)
	if forced == string(data) {
		t.Fatalf("no heading %s in\n%s", mid, data)
	}
	if err := os.WriteFile(file, []byte(forced), 0o644); err != nil {
		t.Fatal(err)
	}
	memsyncAny(t, env, repo, "doctor", "--fix")

	s := expectSeen(t, env, repo, []string{"ralph's fact", "memsync's fact"})
	newID := s.memsync["memsync's fact"]
	if !slices.Equal(s.memsync["ralph's fact"], []string{rid}) || !slices.Equal(s.ralph["ralph's fact"], []string{rid}) ||
		len(newID) != 1 || !ownRalphID.MatchString(newID[0]) || !slices.Equal(s.ralph["memsync's fact"], newID) {
		t.Fatalf("after the rewrite: memsync lists %v, ralph %v; want ralph's fact as %s and memsync's under a new ID of memsync's form", s.memsync, s.ralph, rid)
	}
	for id, want := range map[string]string{rid: "ralph's fact", newID[0]: "memsync's fact"} {
		if out := ralphIn(t, env, repo, "show", id, "--format", "json"); !strings.Contains(out, want) {
			t.Errorf("ralph show %s: %s, want %q", id, out, want)
		}
		if out := memsyncIn(t, env, repo, "show", id, "--json"); !strings.Contains(out, want) {
			t.Errorf("memsync show %s: %s, want %q", id, out, want)
		}
	}
	ralphIn(t, env, repo, "delete", rid)
	expectSeen(t, env, repo, []string{"memsync's fact"})
}
