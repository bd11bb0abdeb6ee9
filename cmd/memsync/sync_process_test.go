package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// memsyncIn runs the real memsync in dir and returns its stdout.
func memsyncIn(tb testing.TB, env []string, dir string, args ...string) string {
	tb.Helper()
	out, _ := memsyncOut(tb, env, dir, args...)
	return out
}

// TestSyncConvergence: a bare repository as the remote, 3 clones with two
// worktrees each, rounds of adds, edits, deletes and archive moves from
// random worktrees,
// then syncs in random order, some of them racing on the push (real
// processes, also two worktrees of one clone at once). After each round the
// remote holds every entry a successful sync left in a clone (nothing a
// sync acknowledged is lost, also when pushes race). After every clone
// syncs twice with no new writes, all clones hold identical memory, every
// entry added anywhere and never deleted is present, and no deleted one is.
//
// The random choices come from a fixed seed, printed; MEMSYNC_TEST_SEED
// sets another one.
func TestSyncConvergence(t *testing.T) {
	env, root, remote := bareRemote(t)

	const clones, rounds = 3, 6
	dirs := make([][]string, clones) // per clone: the primary, then its worktrees
	for c := range clones {
		primary := filepath.Join(root, fmt.Sprintf("clone%d", c))
		gitRun(t, env, root, "clone", "-q", remote, primary)
		memsyncIn(t, env, primary, "init")
		dirs[c] = []string{primary}
		for w := range 2 {
			wt := filepath.Join(root, fmt.Sprintf("clone%d-wt%d", c, w))
			memsyncIn(t, env, primary, "worktree", "add", "-q", wt, "-b", fmt.Sprintf("loop%d", w))
			dirs[c] = append(dirs[c], wt)
		}
	}
	seedRand := uint64(1)
	if v := os.Getenv("MEMSYNC_TEST_SEED"); v != "" {
		var err error
		if seedRand, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("MEMSYNC_TEST_SEED: %v", err)
		}
	}
	t.Logf("seed %d (MEMSYNC_TEST_SEED=%d replays this run)", seedRand, seedRand)
	r := rand.New(rand.NewPCG(seedRand, 7)) // used by this goroutine only
	added := map[string]string{}            // ID -> the clone and round that added it
	deleted := map[string]bool{}
	edited := map[string]bool{} // never deleted: an edit survives a concurrent delete, by design
	pick := func(c int) string { return dirs[c][r.IntN(len(dirs[c]))] }
	ids := func(c int) []string {
		var list []memsync.Entry
		if err := json.Unmarshal([]byte(memsyncIn(t, env, dirs[c][0], "list", "--json")), &list); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range list {
			out = append(out, e.ID)
		}
		return out
	}
	syncAll := func(order []int, concurrent bool) {
		var wg sync.WaitGroup
		errs := make(chan error, len(order))
		for _, c := range order {
			dir := pick(c) // chosen here: the goroutines share no rand
			run := func() {
				cmd := exec.Command(memsyncBinary(t), "sync")
				cmd.Dir, cmd.Env = dir, env
				if out, err := cmd.CombinedOutput(); err != nil {
					errs <- fmt.Errorf("sync in clone %d: %w\n%s", c, err, out)
				}
			}
			if concurrent {
				wg.Go(run)
			} else {
				run()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		// Every sync succeeded: what each clone holds now, the remote must
		// hold too (deleted entries aside).
		remoteIDs := map[string]bool{} // in any clone's snapshots there
		for _, ref := range strings.Fields(gitRun(t, env, remote, "for-each-ref", "--format=%(refname)", "refs/memsync/")) {
			maps.Copy(remoteIDs, snapshotIDs(t, env, remote, ref))
		}
		for _, c := range order {
			for id := range memoryIDs(t, dirs[c][0]) {
				if !remoteIDs[id] && !deleted[id] {
					t.Fatalf("%s, in clone %d after its successful sync, is not on the remote: a push lost it", id, c)
				}
			}
		}
	}
	for round := range rounds {
		for c := range clones {
			for k := range 2 + r.IntN(3) {
				id := strings.TrimSpace(memsyncIn(t, env, pick(c), "add", fmt.Sprintf("clone %d round %d learned %d", c, round, k), "--tags", fmt.Sprintf("c%d", c)))
				added[id] = fmt.Sprintf("clone %d round %d", c, round)
			}
			live := ids(c)
			if id := live[r.IntN(len(live))]; len(live) > 4 && r.IntN(2) == 0 && !deleted[id] { // edit one
				edited[id] = true
				st := store.Open(filepath.Join(dirs[c][0], ".git", "memsync")) // the memory of clone c
				if err := st.Update(func(f *memfile.File) error {
					i, err := f.Find(id)
					if err == nil {
						f.Entries[i].Content += fmt.Sprintf("\nedited in clone %d round %d", c, round)
					}
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			if len(live) > 6 && r.IntN(2) == 0 { // delete one
				if id := live[r.IntN(len(live))]; !edited[id] && !deleted[id] {
					memsyncIn(t, env, pick(c), "delete", id)
					deleted[id] = true
				}
			}
			if len(live) > 6 && r.IntN(3) == 0 { // archive one
				if id := live[r.IntN(len(live))]; !deleted[id] {
					memsyncIn(t, env, pick(c), "archive", id)
				}
			}
		}
		order := r.Perm(clones)
		switch round % 2 {
		case 0: // all at once, racing on the push; plus a second worktree of one clone
			syncAll(append(order, order[0]), true)
		default:
			syncAll(order, false)
		}
	}
	// Quiet: every clone syncs twice.
	syncAll([]int{0, 1, 2, 0, 1, 2}, false)

	var first [2][]byte
	for c := range clones {
		var files [2][]byte
		for i, p := range []string{".agent/memories.md", ".agent/archive/memories.md"} {
			files[i], _ = os.ReadFile(filepath.Join(dirs[c][0], p))
		}
		if c == 0 {
			first = files
		} else if string(files[0]) != string(first[0]) || string(files[1]) != string(first[1]) {
			t.Fatalf("clone %d's memory differs from clone 0's:\n%s\n---\n%s", c, files[0], first[0])
		}
		f := memfile.Parse(files[0])
		if len(f.Problems) > 0 {
			t.Fatalf("clone %d: %v", c, f.Problems)
		}
		have := map[string]bool{}
		for _, e := range append(f.Entries, memfile.Parse(files[1]).Entries...) {
			have[e.ID] = true
		}
		for id, from := range added {
			if !deleted[id] && !have[id] {
				t.Fatalf("clone %d lost %s (added by %s)", c, id, from)
			}
			if deleted[id] && have[id] {
				t.Fatalf("clone %d holds %s (added by %s), deleted since", c, id, from)
			}
		}
		for _, d := range dirs[c] {
			if out := gitRun(t, env, d, "status", "--porcelain"); strings.TrimSpace(out) != "" {
				t.Fatalf("git status in %s:\n%s", d, out)
			}
		}
	}
	if len(added) < 20 || len(deleted) < 2 {
		t.Fatalf("only %d entries added, %d deleted", len(added), len(deleted))
	}
	t.Logf("%d entries added, %d deleted", len(added), len(deleted))
}

// memoryIDs is the IDs of a worktree's memory, active file and archive.
func memoryIDs(tb testing.TB, dir string) map[string]bool {
	tb.Helper()
	have := map[string]bool{}
	for _, p := range []string{".agent/memories.md", ".agent/archive/memories.md"} {
		data, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil && !os.IsNotExist(err) {
			tb.Fatal(err)
		}
		for _, e := range memfile.Parse(data).Entries {
			have[e.ID] = true
		}
	}
	return have
}

// snapshotIDs is the IDs in the newest snapshot of a (bare) repository
// (on ref, the shared refs/memsync/snapshots when none is given), active
// file and archive.
func snapshotIDs(tb testing.TB, env []string, gitDir string, ref ...string) map[string]bool {
	tb.Helper()
	at := append(ref, "refs/memsync/snapshots")[0]
	have := map[string]bool{}
	for _, p := range []string{"memories.md", "archive/memories.md"} {
		out, err := testgit.ShowErr(gitDir, env, at+":"+p)
		if err != nil {
			continue // no snapshot yet, or no archive in it
		}
		for _, e := range memfile.Parse([]byte(out)).Entries {
			have[e.ID] = true
		}
	}
	return have
}

// TestMergeDriverGitMerge: two branches that both appended to a tracked
// memories.md merge through a real 'git merge' with memsync's merge driver:
// no conflict markers, both sides' entries present. An entry edited
// differently on both branches stops the merge with both versions inside
// conflict markers, which 'memsync doctor --fix' merges by entry.
func TestMergeDriverGitMerge(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	gitRun(t, env, repo, "branch", "-M", "main")
	memsyncIn(t, env, repo, "init", "--merge-driver")
	shared := strings.TrimSpace(memsyncIn(t, env, repo, "add", "shared fact"))
	gitRun(t, env, repo, "add", "-f", ".agent/memories.md")
	gitRun(t, env, repo, "commit", "-q", "-m", "track memory")
	gitRun(t, env, repo, "checkout", "-q", "-b", "side")
	memsyncIn(t, env, repo, "add", "side learned one")
	memsyncIn(t, env, repo, "add", "side learned two")
	gitRun(t, env, repo, "commit", "-q", "-am", "side")
	gitRun(t, env, repo, "checkout", "-q", "main")
	memsyncIn(t, env, repo, "add", "main learned")
	gitRun(t, env, repo, "commit", "-q", "-am", "main")
	gitRun(t, env, repo, "merge", "-q", "-m", "merge side", "side")
	data, err := os.ReadFile(filepath.Join(repo, ".agent", "memories.md"))
	if err != nil {
		t.Fatal(err)
	}
	f := memfile.Parse(data)
	if len(f.Problems) > 0 || len(f.Entries) != 4 {
		t.Fatalf("merged file: %v\n%s", f.Problems, data)
	}
	for _, want := range []string{"shared fact", "side learned one", "side learned two", "main learned"} {
		if !strings.Contains(string(data), "- Content: "+want+"\n") {
			t.Fatalf("%q missing:\n%s", want, data)
		}
	}
	if out := gitRun(t, env, repo, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("git status:\n%s", out)
	}

	// Edited differently on both branches: exit 1 from the driver, markers.
	edit := func(content string) {
		st := store.Open(filepath.Join(repo, ".agent"))
		if err := st.Update(func(f *memfile.File) error {
			i, err := f.Find(shared)
			f.Entries[i].Content = content
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, env, repo, "checkout", "-q", "side")
	edit("shared fact, side's words")
	gitRun(t, env, repo, "commit", "-q", "-am", "side edit")
	gitRun(t, env, repo, "checkout", "-q", "main")
	edit("shared fact, main's words")
	gitRun(t, env, repo, "commit", "-q", "-am", "main edit")
	cmd := exec.Command("git", "merge", "-q", "-m", "merge side", "side")
	cmd.Dir, cmd.Env = repo, env
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("a conflicting merge succeeded:\n%s", out)
	}
	data, _ = os.ReadFile(filepath.Join(repo, ".agent", "memories.md"))
	if !strings.Contains(string(data), "<<<<<<< ours\n") || !strings.Contains(string(data), "side's words") || !strings.Contains(string(data), "main's words") {
		t.Fatalf("conflict not written with both versions:\n%s", data)
	}
	cmd = exec.Command(memsyncBinary(t), "doctor", "--fix")
	cmd.Dir, cmd.Env = repo, env
	_, _ = cmd.CombinedOutput() // exit 1: the recorded conflict is left to settle
	data, _ = os.ReadFile(filepath.Join(repo, ".agent", "memories.md"))
	if f := memfile.Parse(data); len(f.Problems) > 0 || len(f.Entries) != 4 || !strings.Contains(string(data), "main's words") {
		t.Fatalf("after doctor --fix: %v\n%s", f.Problems, data)
	}
	if out := memsyncIn(t, env, repo, "conflicts"); !strings.Contains(out, "side's words") {
		t.Fatalf("conflicts:\n%s", out)
	}
}

// BenchmarkSyncProcess: a whole `memsync sync` process against a local bare
// remote with nothing new (a memory of about 1000 entries, synced before),
// side by side with a plain `git fetch` and `git push` of the same ref.
// Target: memsync's median ≤ 1.1× git's.
func BenchmarkSyncProcess(b *testing.B) {
	env, root, remote := bareRemote(b)
	repo := filepath.Join(root, "clone")
	gitRun(b, env, root, "clone", "-q", remote, repo)
	file := filepath.Join(repo, ".agent", "memories.md")
	_ = os.MkdirAll(filepath.Dir(file), 0o755)
	if err := os.WriteFile(file, memfile.GenerateFile(330<<10, 2), 0o644); err != nil {
		b.Fatal(err)
	}
	memsyncIn(b, env, repo, "sync")
	bin := memsyncBinary(b)
	sideBySide(b, []string{"git-fetch-push", "memsync-sync"}, []func(int) time.Duration{
		func(int) time.Duration {
			return runProcess(b, env, repo, "git", "fetch", "--quiet", "--no-tags", "origin", "+refs/memsync/snapshots:refs/memsync/remotes/origin/snapshots") +
				runProcess(b, env, repo, "git", "push", "--quiet", "--no-verify", "origin", "refs/memsync/snapshots:refs/memsync/snapshots")
		},
		func(int) time.Duration { return runProcess(b, env, repo, bin, "sync") },
	})
}

// BenchmarkSync100EachSide: two clones of a memory of about 1000 entries
// (grown as adds grow one: dates in file order, so the cap archives from
// the front) each add 100 entries; one syncs (untimed), then the other's
// `memsync sync` is timed: it fetches the first's 100, merges by entry and
// pushes the merge. The baseline is git moving the same amount: a fetch of
// a commit that adds a 33 KB file and a push of another such commit.
// Target: memsync's median ≤ 2× git's.
func BenchmarkSync100EachSide(b *testing.B) {
	env, root, remote := bareRemote(b)
	var clones [2]string
	for i := range clones {
		clones[i] = filepath.Join(root, fmt.Sprintf("clone%d", i))
		gitRun(b, env, root, "clone", "-q", remote, clones[i])
	}
	file := filepath.Join(clones[0], ".agent", "memories.md")
	_ = os.MkdirAll(filepath.Dir(file), 0o755)
	if err := os.WriteFile(file, grownMemory(330<<10), 0o644); err != nil {
		b.Fatal(err)
	}
	memsyncIn(b, env, clones[0], "sync")
	memsyncIn(b, env, clones[1], "sync")
	// The baseline's two clones, with a commit each time.
	var plain [2]string
	for i := range plain {
		plain[i] = filepath.Join(root, fmt.Sprintf("plain%d", i))
		gitRun(b, env, root, "clone", "-q", remote, plain[i])
	}
	addPlain := func(dir string, i int) {
		var text strings.Builder
		for k := range 100 {
			fmt.Fprintf(&text, "## learned %d %d in %s\n- Tags: bench\n\nThe retry budget of service %d is %d ms; the pool size is set where the config is loaded. %s\n\n", i, k, filepath.Base(dir), k, i*k, strings.Repeat("x", 180))
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), []byte(text.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		gitRun(b, env, dir, "add", ".")
		gitRun(b, env, dir, "commit", "-q", "-m", "100 entries")
	}
	bin := memsyncBinary(b)
	addMemory := func(dir string, i int) {
		for k := range 100 {
			runProcess(b, env, dir, bin, "add", fmt.Sprintf("learned %d %d in %s: the retry budget of service %d is %d ms; the pool size is set where the config is loaded. %s", i, k, filepath.Base(dir), k, i*k, strings.Repeat("x", 180)))
		}
	}
	sideBySide(b, []string{"git-fetch-push", "memsync-sync"}, []func(int) time.Duration{
		func(i int) time.Duration {
			addPlain(plain[0], i)
			gitRun(b, env, plain[0], "push", "-q", "origin", fmt.Sprintf("HEAD:refs/heads/p0-%d", i))
			addPlain(plain[1], i)
			return runProcess(b, env, plain[1], "git", "fetch", "--quiet", "--no-tags", "origin", fmt.Sprintf("+refs/heads/p0-%d:refs/remotes/origin/p0", i)) +
				runProcess(b, env, plain[1], "git", "push", "--quiet", "--no-verify", "origin", fmt.Sprintf("HEAD:refs/heads/p1-%d", i))
		},
		func(i int) time.Duration {
			addMemory(clones[0], i)
			memsyncIn(b, env, clones[0], "sync")
			addMemory(clones[1], i)
			memsyncIn(b, env, clones[1], "snapshot")
			return runProcess(b, env, clones[1], bin, "sync")
		},
	})
}

// grownMemory is a generated memory of about size bytes whose entries are
// dated in file order, a day apart every 1% of the file, as a memory grown
// by adds is: the oldest first. (GenerateFile's dates are random, so the
// entry cap, which archives the oldest, would take entries from all over
// the file.)
func grownMemory(size int) []byte {
	f := memfile.Parse(memfile.GenerateFile(size, 2))
	first := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range f.Entries {
		f.Entries[i].Date = first.AddDate(0, 0, i*100/len(f.Entries)).Format(time.DateOnly)
	}
	return f.Render()
}

// bareRemote makes a folder root holding a bare remote (remote) with one
// commit on its branch, pushed from a clone at root/seed, and the git
// environment of the test.
func bareRemote(t testing.TB) (env []string, root, remote string) {
	t.Helper()
	env = testGitEnv(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	remote = filepath.Join(root, "remote.git")
	gitRun(t, env, root, "init", "-q", "--bare", remote)
	seed := filepath.Join(root, "seed")
	gitRun(t, env, root, "clone", "-q", remote, seed)
	gitRun(t, env, seed, "commit", "-q", "--allow-empty", "-m", "init")
	gitRun(t, env, seed, "push", "-q", "origin", "HEAD")
	return env, root, remote
}

// TestSyncRelativeRemoteURL: a remote added with a URL relative to the
// worktree (git remote add origin ../remote.git), which git itself handles,
// works for memsync sync too, from the primary and from a subfolder.
func TestSyncRelativeRemoteURL(t *testing.T) {
	env, root, _ := bareRemote(t)
	var clones [2]string
	for i := range clones {
		clones[i] = filepath.Join(root, fmt.Sprintf("clone%d", i))
		gitRun(t, env, root, "init", "-q", clones[i])
		gitRun(t, env, clones[i], "remote", "add", "origin", "../remote.git")
		gitRun(t, env, clones[i], "fetch", "-q", "origin") // git takes the URL relative to the worktree
	}
	memsyncIn(t, env, clones[0], "add", "learned in clone 0")
	memsyncIn(t, env, clones[0], "sync")
	sub := filepath.Join(clones[1], "deep", "er")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	memsyncIn(t, env, sub, "sync")
	if out := memsyncIn(t, env, clones[1], "list"); !strings.Contains(out, "learned in clone 0") {
		t.Fatalf("clone 1 after sync:\n%s", out)
	}
}

// TestFreshCloneHint: a fresh clone of a repository whose remote holds the
// team's memory lists nothing, and says once that memsync sync fetches it;
// after the sync (or in a clone without a remote) it says nothing.
func TestFreshCloneHint(t *testing.T) {
	env, root, remote := bareRemote(t)
	first := filepath.Join(root, "first")
	gitRun(t, env, root, "clone", "-q", remote, first)
	memsyncIn(t, env, first, "add", "the team learned this")
	memsyncIn(t, env, first, "sync")
	fresh := filepath.Join(root, "fresh")
	gitRun(t, env, root, "clone", "-q", remote, fresh)
	for _, args := range [][]string{{"list"}, {"search", "team"}, {"inject", "a task"}} {
		_, stderr := memsyncOut(t, env, fresh, args...)
		if strings.Count(stderr, "memsync sync origin") != 1 {
			t.Errorf("memsync %v in a fresh clone: stderr %q", args, stderr)
		}
	}
	memsyncIn(t, env, fresh, "sync")
	if out, stderr := memsyncOut(t, env, fresh, "list"); !strings.Contains(out, "the team learned this") || strings.Contains(stderr, "memsync sync") {
		t.Errorf("after the sync: %q, %q", out, stderr)
	}
	alone := newRepo(t, env)
	if _, stderr := memsyncOut(t, env, alone, "list"); strings.Contains(stderr, "memsync sync") {
		t.Errorf("a repository without a remote: %q", stderr)
	}
}

// TestSyncHangingRemote: a remote that never answers (an SSH command that
// sleeps) stops a sync after --timeout with a message naming the remote and
// no git or ssh child left; a second sync meanwhile waits --lock-timeout,
// then says another sync is under way (exit 4), and the lock is free after.
func TestSyncHangingRemote(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsyncIn(t, env, repo, "add", "kept whatever the network does")
	marker := fmt.Sprintf("%d", 600+os.Getpid()%300) // sleep's argument names this test's children
	gitRun(t, env, repo, "remote", "add", "origin", "ssh://memsync.invalid/team.git")
	hang := filepath.Join(t.TempDir(), "hang")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, repo, "config", "core.sshCommand", hang)

	first := exec.Command(memsyncBinary(t), "sync", "--timeout", "2s")
	first.Dir, first.Env = repo, env
	var firstErr strings.Builder
	first.Stderr = &firstErr
	start := time.Now()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	second := exec.Command(memsyncBinary(t), "sync", "--lock-timeout", "200ms")
	second.Dir, second.Env = repo, env
	out, err := second.CombinedOutput()
	if code := exitStatus(err); code != 4 || !strings.Contains(string(out), "another memsync sync") {
		t.Errorf("a second sync meanwhile: exit %d\n%s", code, out)
	}
	err = first.Wait()
	took := time.Since(start)
	if code := exitStatus(err); code != 1 || !strings.Contains(firstErr.String(), "did not answer") || !strings.Contains(firstErr.String(), "origin") {
		t.Errorf("the hanging sync: exit %d after %v\n%s", code, took, firstErr.String())
	}
	if took > 15*time.Second {
		t.Errorf("the hanging sync took %v with --timeout 2s", took)
	}
	if ps, _ := exec.Command("pgrep", "-f", "sleep "+marker).Output(); len(ps) > 0 {
		t.Errorf("children left running: %s", ps)
		_ = exec.Command("pkill", "-f", "sleep "+marker).Run()
	}
	if out := memsyncIn(t, env, repo, "list"); !strings.Contains(out, "kept whatever") {
		t.Errorf("the memory after the timeout:\n%s", out)
	}
}

// exitStatus is a finished command's exit code (0 for no error, -1 for one
// that did not exit).
func exitStatus(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// TestSyncOneEntryPerFact: two clones (ralph's layout) each add a different
// entry under the same ralph ID, and both add the same fact under IDs of
// their own. After syncs both ways every clone has both entries under two
// IDs, the fact once, and the other clone's ID of the fact still finds it.
func TestSyncOneEntryPerFact(t *testing.T) {
	env, root, remote := bareRemote(t)
	var clones [2]string
	facts := [2]string{}
	for i := range clones {
		clones[i] = filepath.Join(root, fmt.Sprintf("clone%d", i))
		gitRun(t, env, root, "clone", "-q", remote, clones[i])
		memsyncIn(t, env, clones[i], "init", "--ralph")
		entry := fmt.Sprintf("\n### mem-1767225600-abcd\n> clone %d learned its own thing\n<!-- tags: x | created: 2026-01-01 -->\n", i)
		f, err := os.OpenFile(filepath.Join(clones[i], ".ralph", "agent", "memories.md"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(entry); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
		facts[i] = strings.TrimSpace(memsyncIn(t, env, clones[i], "add", "both clones learned the same fact", "-t", "fix"))
	}
	if facts[0] == facts[1] {
		t.Fatal("the two clones drew one ID for the fact: the test proves nothing")
	}
	memsyncIn(t, env, clones[0], "sync")
	if out := memsyncIn(t, env, clones[1], "sync"); !strings.Contains(out, "note: two entries were added under one ID mem-1767225600-abcd") || !strings.Contains(out, "note: one fact was added under two IDs") {
		t.Errorf("the merging sync does not say what it did:\n%s", out)
	}
	memsyncIn(t, env, clones[0], "sync")
	for i, c := range clones {
		var list []struct{ ID, Content string }
		if err := json.Unmarshal([]byte(memsyncIn(t, env, c, "list", "--json")), &list); err != nil {
			t.Fatal(err)
		}
		seen, ids := map[string]int{}, map[string]bool{}
		for _, e := range list {
			seen[e.Content]++
			ids[e.ID] = true
		}
		if seen["clone 0 learned its own thing"] != 1 || seen["clone 1 learned its own thing"] != 1 || seen["both clones learned the same fact"] != 1 || len(ids) != len(list) {
			t.Errorf("clone %d after the syncs: %+v", i, list)
		}
		for _, id := range facts {
			if out := memsyncIn(t, env, c, "show", id); !strings.Contains(out, "both clones learned the same fact") {
				t.Errorf("clone %d: show %s:\n%s", i, id, out)
			}
		}
	}
}

// TestSyncNothingNewAsksGitLittle: a sync with nothing new starts no git
// merge-base (the sync before recorded which fetched snapshots its result
// holds), and the next sync after another clone's push still merges it.
func TestSyncNothingNewAsksGitLittle(t *testing.T) {
	env, root, remote := bareRemote(t)
	var clones [2]string
	for i := range clones {
		clones[i] = filepath.Join(root, fmt.Sprintf("clone%d", i))
		gitRun(t, env, root, "clone", "-q", remote, clones[i])
	}
	a, b := clones[0], clones[1]
	memsyncIn(t, env, a, "add", "learned in a")
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "add", "learned in b")
	memsyncIn(t, env, b, "sync")
	memsyncIn(t, env, a, "sync")
	gitCommands := func(dir string) []string {
		t.Helper()
		trace := filepath.Join(t.TempDir(), "trace")
		memsyncIn(t, append(slices.Clone(env), "GIT_TRACE2_EVENT="+trace), dir, "sync")
		data, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		var cmds []string
		for _, line := range strings.Split(string(data), "\n") {
			var ev struct {
				Event string   `json:"event"`
				Argv  []string `json:"argv"`
			}
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "start" {
				cmds = append(cmds, strings.Join(ev.Argv, " "))
			}
		}
		return cmds
	}
	for _, c := range gitCommands(a) {
		if strings.Contains(c, " merge-base ") {
			t.Errorf("a sync with nothing new ran %s", c)
		}
	}
	memsyncIn(t, env, b, "add", "learned in b later")
	memsyncIn(t, env, b, "sync")
	gitCommands(a)
	if out := memsyncIn(t, env, a, "list"); !strings.Contains(out, "learned in b later") {
		t.Fatalf("a after b's push:\n%s", out)
	}
}
