package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The memory survives what git's own commands do to ignored files in a
// worktree (git clean, git stash --all, a checkout of a branch that tracks
// the memory file, git worktree move): every acknowledged entry stays in
// the memory and reaches the next snapshot, and the command that repairs a
// link says so once.

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

// expectSnapshotHolds checks that the newest snapshot holds every one of want.
func expectSnapshotHolds(tb testing.TB, env []string, repo string, want []string) {
	tb.Helper()
	got := snapFile(tb, env, repo, "refs/memsync/snapshots:memories.md")
	for _, w := range want {
		if !strings.Contains(got, w) {
			tb.Fatalf("the snapshot lacks %q:\n%s", w, got)
		}
	}
}

// hookedRepo is a repository with memsync's hooks installed and n entries
// added, the first half of them snapshotted by a commit.
func hookedRepo(t *testing.T, n int) (env []string, repo string, added []string) {
	env = testGitEnv(t)
	repo = newRepo(t, env)
	memsyncIn(t, env, repo, "init")
	memsyncIn(t, env, repo, "hooks", "install")
	for i := range n {
		c := "lesson " + string(rune('a'+i)) + " learned the hard way"
		memsyncIn(t, env, repo, "add", c)
		added = append(added, c)
		if i == n/2 {
			gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", "half")
		}
	}
	return env, repo, added
}

func expectGitClean(tb testing.TB, env []string, dirs ...string) {
	tb.Helper()
	for _, d := range dirs {
		if out := gitRun(tb, env, d, "status", "--porcelain", "--untracked-files=all"); strings.TrimSpace(out) != "" {
			tb.Fatalf("git status in %s:\n%s", d, out)
		}
	}
}

func TestGitCleanKeepsMemory(t *testing.T) {
	env, repo, added := hookedRepo(t, 6)
	mem := filepath.Join(repo, ".agent", "memories.md")
	gitRun(t, env, repo, "clean", "-fdxq")
	if _, err := os.Lstat(mem); !os.IsNotExist(err) {
		t.Fatalf("git clean -fdx left %s: %v", mem, err)
	}
	stderr := expectAll(t, env, repo, added)
	if !strings.Contains(stderr, "linked "+mem) {
		t.Errorf("the repair was not reported: %q", stderr)
	}
	if _, stderr := listed(t, env, repo); stderr != "" {
		t.Errorf("the repair was reported twice: %q", stderr)
	}
	if target, err := filepath.EvalSymlinks(mem); err != nil || !strings.Contains(target, filepath.Join(".git", "memsync")) {
		t.Errorf("%s -> %s, %v", mem, target, err)
	}
	// A clean, then a commit (the hook heals first): no entry recorded as removed.
	gitRun(t, env, repo, "clean", "-fdxq")
	gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", "after clean")
	expectSnapshotHolds(t, env, repo, added)
	if _, err := os.Lstat(mem); err != nil {
		t.Errorf("the post-commit hook did not put the link back: %v", err)
	}
	expectGitClean(t, env, repo)
}

func TestGitStashAllKeepsMemory(t *testing.T) {
	env, repo, added := hookedRepo(t, 4)
	if err := os.WriteFile(filepath.Join(repo, "work.txt"), []byte("wip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, repo, "stash", "--all", "-q")
	memsyncIn(t, env, repo, "add", "written while stashed")
	added = append(added, "written while stashed")
	expectAll(t, env, repo, added)
	gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", "while stashed")
	expectSnapshotHolds(t, env, repo, added)
	// The stash holds only the links, which are back: dropping it loses nothing.
	gitRun(t, env, repo, "stash", "drop", "-q")
	expectAll(t, env, repo, added)
}

// trackedBranch makes the branch "tracked": HEAD plus a commit that tracks
// a .agent/memories.md of its own, holding one entry.
func trackedBranch(t *testing.T, env []string, repo string) {
	t.Helper()
	branchFile := filepath.Join(t.TempDir(), "memories.md")
	if err := os.WriteFile(branchFile, []byte("# Memories\n\n## From the branch\n- Date: 2026-01-02\n- Content: only the branch knew this\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	blob := strings.TrimSpace(gitRun(t, env, repo, "hash-object", "-w", branchFile))
	idx := slices.Concat(env, []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")})
	cmd := exec.Command("git", "update-index", "--add", "--cacheinfo", "100644,"+blob+",.agent/memories.md")
	cmd.Dir, cmd.Env = repo, idx
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	cmd = exec.Command("git", "write-tree")
	cmd.Dir, cmd.Env = repo, idx
	tree, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(gitRun(t, env, repo, "commit-tree", strings.TrimSpace(string(tree)), "-p", "HEAD", "-m", "track the memory"))
	gitRun(t, env, repo, "branch", "tracked", commit)
}

// TestCheckoutOfTrackedMemoryBranch: a branch that committed
// .agent/memories.md replaces the link on checkout; the post-checkout hook
// folds its entries into the memory and leaves the branch's file to git
// (git status stays clean, checkouts keep working); switching back puts the
// link back; nothing is lost either way.
func TestCheckoutOfTrackedMemoryBranch(t *testing.T) {
	env, repo, added := hookedRepo(t, 7)
	trackedBranch(t, env, repo)

	gitRun(t, env, repo, "checkout", "-q", "tracked")
	added = append(added, "only the branch knew this")
	expectAll(t, env, repo, added)
	expectGitClean(t, env, repo)
	memsyncIn(t, env, repo, "add", "learned on the tracked branch")
	added = append(added, "learned on the tracked branch")
	gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", "on tracked")
	expectSnapshotHolds(t, env, repo, added)
	if got := snapFile(t, env, repo, "HEAD:.agent/memories.md"); strings.Contains(got, "learned on the tracked branch") {
		t.Errorf("the commit on the branch took the shared memory into the branch's file:\n%s", got)
	}

	main := strings.TrimSpace(gitRun(t, env, repo, "rev-parse", "--abbrev-ref", "@{-1}"))
	gitRun(t, env, repo, "checkout", "-q", main)
	expectAll(t, env, repo, added)
	expectGitClean(t, env, repo)
	gitRun(t, env, repo, "checkout", "-q", "tracked")
	expectAll(t, env, repo, added)
	expectGitClean(t, env, repo)
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

// TestCrashWithGitChaos: 4 processes add entries in a loop, each run killed
// with SIGKILL at a random point now and then, while git clean -fdx, git
// stash --all (and drop) and checkouts of a branch that tracks the memory
// file run over and over in the primary. Every add that was acknowledged
// (exit 0, its ID printed) is in the memory at the end, and in the snapshot
// the next commit takes.
func TestCrashWithGitChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of processes")
	}
	env, repo, _ := hookedRepo(t, 2)
	bin := memsyncBinary(t)
	trackedBranch(t, env, repo)
	main := strings.TrimSpace(gitRun(t, env, repo, "rev-parse", "--abbrev-ref", "HEAD"))

	const workers, adds = 4, 25
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 18))
			for j := range adds {
				content := fmt.Sprintf("worker %d lesson %d", w, j)
				span := time.Duration(0)
				if j%3 == 1 {
					span = 15 * time.Millisecond
				}
				killed, out, _, err := crashRun(t, rng, span, bin, repo, env, "add", content)
				switch {
				case killed:
				case err != nil:
					errs <- fmt.Errorf("add %q: %w\n%s", content, err, out)
					return
				default:
					mu.Lock()
					acked = append(acked, content)
					mu.Unlock()
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	git := func(args ...string) { // git's own commands; a refusal (a race with a writer) is fine
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, env
		_ = cmd.Run()
	}
	for round := 0; ; round++ {
		select {
		case <-done:
		default:
			switch round % 4 {
			case 0:
				git("clean", "-fdxq")
			case 1:
				git("stash", "--all", "-q")
				git("stash", "drop", "-q")
			case 2:
				git("checkout", "-q", "tracked")
			case 3:
				git("checkout", "-q", main)
			}
			continue
		}
		break
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	git("checkout", "-q", main)
	expectAll(t, env, repo, acked)
	gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", "after the chaos")
	expectSnapshotHolds(t, env, repo, acked)
	t.Logf("%d adds acknowledged of %d", len(acked), workers*adds)
}

// TestGitStashAllThenPop: git stash --all takes the links with the
// user's own untracked and ignored files; memsync commands and hooks run
// meanwhile (an add, a checkout, a commit) leave the links the stash holds
// to git stash pop, which puts them back with the rest: had they put them
// back themselves, the pop would fail (".agent/memories.md already exists,
// no checkout"), keeping the stash. Nothing is lost either way; once the
// stash is dropped instead, or a newer entry stashed, the next command
// puts the links back.
func TestGitStashAllThenPop(t *testing.T) {
	env, repo, added := hookedRepo(t, 4)
	out := memsyncIn(t, env, repo, "list", "--json")
	var entries []struct{ ID string }
	if err := json.Unmarshal([]byte(out), &entries); err != nil || len(entries) == 0 {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	memsyncIn(t, env, repo, "archive", entries[0].ID)
	added = added[1:]
	mem := filepath.Join(repo, ".agent", "memories.md")
	archive := filepath.Join(repo, ".agent", "archive", "memories.md")
	for _, p := range []string{mem, archive} {
		if _, err := os.Readlink(p); err != nil {
			t.Fatalf("no link before the stash: %v", err)
		}
	}
	work := filepath.Join(repo, "work.txt")
	if err := os.WriteFile(work, []byte("wip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, repo, "stash", "--all", "-q")
	memsyncIn(t, env, repo, "add", "written while stashed")
	added = append(added, "written while stashed")
	gitRun(t, env, repo, "checkout", "-q", "-b", "other")
	gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", "while stashed")
	expectAll(t, env, repo, added)
	expectSnapshotHolds(t, env, repo, added)
	memsyncIn(t, env, repo, "doctor") // the stashed link is no problem

	gitRun(t, env, repo, "stash", "pop", "-q")
	if b, err := os.ReadFile(work); err != nil || string(b) != "wip\n" {
		t.Fatalf("work.txt after the pop: %q, %v", b, err)
	}
	for _, p := range []string{mem, archive} {
		if target, err := filepath.EvalSymlinks(p); err != nil || !strings.Contains(target, filepath.Join(".git", "memsync")) {
			t.Fatalf("%s -> %s, %v", p, target, err)
		}
	}
	if list := gitRun(t, env, repo, "stash", "list"); list != "" {
		t.Fatalf("the stash stayed:\n%s", list)
	}
	expectAll(t, env, repo, added)

	// A stash that is dropped: the next command puts the links back.
	gitRun(t, env, repo, "stash", "--all", "-q")
	gitRun(t, env, repo, "stash", "drop", "-q")
	expectAll(t, env, repo, added)
	for _, p := range []string{mem, archive} {
		if _, err := os.Readlink(p); err != nil {
			t.Fatalf("the link is not back after the drop: %v", err)
		}
	}
	// Only the newest stash entry, the one git stash pop applies, keeps
	// its links from being put back: a newer one without them (a plain
	// git stash of a tracked change) lets the next command link again.
	gitRun(t, env, repo, "stash", "--all", "-q")
	tracked := filepath.Join(repo, "tracked.txt")
	if err := os.WriteFile(tracked, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, repo, "add", "tracked.txt")
	gitRun(t, env, repo, "commit", "-q", "-m", "tracked")
	if err := os.WriteFile(tracked, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, repo, "stash", "-q")
	expectAll(t, env, repo, added)
	for _, p := range []string{mem, archive} {
		if _, err := os.Readlink(p); err != nil {
			t.Fatalf("the link is not back under a newer stash entry: %v", err)
		}
	}
}

// TestTrackedBranchBackedUpOnce: on a branch that tracks its own
// .agent/memories.md, every memsync command and hook folds the branch's
// file again (git keeps it there); its entry differs from the memory's
// (the fold stamped it), so a fold keeps the file as a backup, but one
// backup of those bytes is enough: commits, checkouts (git bisect) and
// commands do not add a backup each.
func TestTrackedBranchBackedUpOnce(t *testing.T) {
	env, repo, added := hookedRepo(t, 2)
	trackedBranch(t, env, repo)
	main := strings.TrimSpace(gitRun(t, env, repo, "rev-parse", "--abbrev-ref", "HEAD"))
	for i := range 3 {
		gitRun(t, env, repo, "checkout", "-q", "tracked")
		memsyncIn(t, env, repo, "list")
		memsyncIn(t, env, repo, "add", fmt.Sprintf("learned on the tracked branch, round %d", i))
		added = append(added, fmt.Sprintf("learned on the tracked branch, round %d", i))
		gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", "on tracked")
		gitRun(t, env, repo, "checkout", "-q", main)
	}
	expectAll(t, env, repo, append(added, "only the branch knew this"))
	backups, err := filepath.Glob(filepath.Join(repo, ".agent", "memories.md.bak-*"))
	if err != nil || len(backups) != 1 {
		t.Fatalf("%d backups of the branch's file, want 1: %v", len(backups), backups)
	}
	if b, err := os.ReadFile(backups[0]); err != nil || !strings.Contains(string(b), "only the branch knew this") {
		t.Fatalf("the backup: %q, %v", b, err)
	}
	expectGitClean(t, env, repo)
}
