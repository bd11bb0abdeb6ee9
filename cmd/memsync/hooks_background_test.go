package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/lock"
)

// backgroundEnv is testGitEnv with the hooks that only snapshot running
// in the background, as users run them.
func backgroundEnv(tb testing.TB) []string {
	var env []string
	for _, kv := range testGitEnv(tb) {
		if !strings.HasPrefix(kv, "MEMSYNC_HOOKS_WAIT=") {
			env = append(env, kv)
		}
	}
	return env
}

// backgroundRepo is a repository with memsync's hooks installed and one entry.
func backgroundRepo(tb testing.TB, env []string) string {
	tb.Helper()
	repo := newRepo(tb, env)
	memsyncIn(tb, env, repo, "init")
	memsyncIn(tb, env, repo, "hooks", "install")
	memsyncIn(tb, env, repo, "add", "the pool size is set where the config is loaded")
	return repo
}

// snapshotted is the memory file the last snapshot holds, "" when there
// is none.
func snapshotted(tb testing.TB, env []string, repo string) string {
	tb.Helper()
	cmd := exec.Command("git", "rev-parse", "-q", "--verify", "refs/memsync/snapshots")
	cmd.Dir, cmd.Env = repo, env
	if cmd.Run() != nil {
		return ""
	}
	return snapFile(tb, env, repo, "refs/memsync/snapshots:memories.md")
}

// waitSnapshotted waits until the last snapshot holds the live memory.
func waitSnapshotted(tb testing.TB, env []string, repo string, d time.Duration) {
	tb.Helper()
	for end := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		live, err := os.ReadFile(filepath.Join(repo, ".agent", "memories.md"))
		if err != nil {
			tb.Fatal(err)
		}
		if snapshotted(tb, env, repo) == string(live) {
			return
		}
		if time.Now().After(end) {
			tb.Fatalf("no snapshot of the live memory within %s", d)
		}
	}
}

// needProc skips a test that reads processes from /proc, which only Linux
// has (elsewhere it would see no process at all).
func needProc(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		tb.Skip("reads processes from /proc, which only Linux has; skipped here")
	}
}

// waitNoProcessIn waits until no process works in dir (its working
// directory there, as git runs hooks): the background hooks have ended.
func waitNoProcessIn(tb testing.TB, dir string, d time.Duration) {
	tb.Helper()
	needProc(tb)
	for end := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		var left []string
		procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
		for _, p := range procs {
			cwd, err := os.Readlink(p)
			cwd = strings.TrimSuffix(cwd, " (deleted)") // a folder removed under the process
			if err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/")) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(end) {
			tb.Fatalf("processes still at work in %s after %s: %v", dir, d, left)
		}
	}
}

// TestHookBackground: a commit does not wait for its snapshot. With the
// memory's lock held by another process, `git commit` returns (and its
// output pipes close) while the snapshot waits; once the lock is let go
// the snapshot of the live memory arrives. Were the hook in the
// foreground, or did its child keep git's pipes, the commit would return
// only when the hook gave up on the lock, and no snapshot would come.
func TestHookBackground(t *testing.T) {
	env := backgroundEnv(t)
	repo := backgroundRepo(t, env)
	held, err := lock.Exclusive(context.Background(), filepath.Join(repo, ".git", "memsync", "memories.md.lock"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "commit", "-q", "--allow-empty", "-m", "one")
	cmd.Dir, cmd.Env = repo, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
	if strings.TrimSpace(string(out)) != "" {
		t.Fatalf("git commit said: %s", out)
	}
	live, err := os.ReadFile(filepath.Join(repo, ".agent", "memories.md"))
	if err != nil {
		t.Fatal(err)
	}
	if snapshotted(t, env, repo) == string(live) {
		t.Fatal("the snapshot was made while the lock was held")
	}
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	waitSnapshotted(t, env, repo, 20*time.Second)
	waitNoProcessIn(t, repo, 20*time.Second)
	if out := gitRun(t, env, repo, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("git status:\n%s", out)
	}
}

// TestHookBackgroundWarning: what a background hook would have said on
// git's stderr (here: it gave up waiting for the lock) is said by the
// next memsync command in the repository, once.
func TestHookBackgroundWarning(t *testing.T) {
	env := append(backgroundEnv(t), "MEMSYNC_LOCK_TIMEOUT=200ms")
	repo := backgroundRepo(t, env)
	held, err := lock.Exclusive(context.Background(), filepath.Join(repo, ".git", "memsync", "memories.md.lock"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", "one")
	waitFor(t, filepath.Join(repo, ".git", "memsync", "state", "hooks.log"), 20*time.Second)
	waitNoProcessIn(t, repo, 20*time.Second)
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	_, stderr := memsyncOut(t, env, repo, "list")
	if !strings.Contains(stderr, "warning: post-commit hook: snapshot skipped") || !strings.Contains(stderr, "(in the background at ") {
		t.Fatalf("the next command's stderr:\n%s", stderr)
	}
	if _, again := memsyncOut(t, env, repo, "list"); strings.Contains(again, "post-commit") {
		t.Fatalf("said twice:\n%s", again)
	}
}

// TestHookBackgroundBurst: commits in quick succession, each after a
// memory change, as a rebase or a script makes them: the background hooks
// that come while one waits end at once, and none of the changes is left
// out: once the hooks are done, the last snapshot is the live memory, the
// snapshot ref is one chain, and git fsck is clean.
func TestHookBackgroundBurst(t *testing.T) {
	env := backgroundEnv(t)
	repo := backgroundRepo(t, env)
	const commits = 30
	for i := range commits {
		memsyncIn(t, env, repo, "add", fmt.Sprintf("lesson %d: retry the request when the cache is cold", i))
		gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", fmt.Sprint(i))
	}
	waitSnapshotted(t, env, repo, 60*time.Second)
	waitNoProcessIn(t, repo, 30*time.Second)
	waitSnapshotted(t, env, repo, time.Second) // and nothing came after
	snaps := strings.Fields(gitRun(t, env, repo, "rev-list", "--first-parent", "refs/memsync/snapshots"))
	if all := strings.Fields(gitRun(t, env, repo, "rev-list", "refs/memsync/snapshots")); len(all) != len(snaps) || len(snaps) > commits+1 {
		t.Fatalf("%d snapshots on the first-parent chain, %d in all, for %d commits", len(snaps), len(all), commits)
	}
	gitRun(t, env, repo, "fsck", "--strict")
	t.Logf("%d snapshots for %d commits", len(snaps), commits)
}

// TestHookBackgroundRepositoryRemoved: a repository removed right after a
// commit, as a test's temp dir is, stays removed: the background hook
// makes nothing again where it was.
func TestHookBackgroundRepositoryRemoved(t *testing.T) {
	env := backgroundEnv(t)
	for i := range 10 {
		repo := backgroundRepo(t, env)
		memsyncIn(t, env, repo, "add", fmt.Sprintf("lesson %d: the pool size is set where the config is loaded", i))
		gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", "one")
		if i%2 == 1 {
			time.Sleep(time.Duration(i) * time.Millisecond) // the hook further along
		}
		_ = os.RemoveAll(repo) // may meet a file the hook is writing
		waitNoProcessIn(t, repo, 20*time.Second)
		if err := os.RemoveAll(repo); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		if _, err := os.Lstat(repo); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("round %d: %s is there again (%v)", i, repo, err)
		}
	}
}

// TestHookBackgroundManagers: through husky's lines, lefthook's command and
// pre-commit's legacy hook, as with memsync's own script, a commit returns
// while the memory's lock is held and its snapshot arrives once the lock
// is let go; hooks status calls none of them outdated.
func TestHookBackgroundManagers(t *testing.T) {
	for _, tool := range []string{"husky", "lefthook", "pre-commit"} {
		t.Run(tool, func(t *testing.T) {
			h := newHookTest(t)
			h.env = backgroundEnv(t)
			switch tool {
			case "husky":
				h.run("node", filepath.Join(huskyPackage(t), "bin.js"))
			case "lefthook":
				lh := lefthookBinary(t)
				h.env = append(h.env, "LEFTHOOK_BIN="+lh)
				h.lefthookConfig(filepath.Join(t.TempDir(), "lefthook-ran"))
				h.run(lh, "install")
			case "pre-commit":
				pc := preCommitBinary(t)
				if err := os.WriteFile(filepath.Join(h.repo, ".pre-commit-config.yaml"), []byte("repos: []\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				h.run("git", "add", ".pre-commit-config.yaml")
				h.run("git", "commit", "-q", "-m", "pre-commit")
				h.run(pc, "install", "--hook-type", "post-commit")
			}
			h.run(h.bin, "init")
			h.run(h.bin, "hooks", "install")
			var st struct {
				Hooks []struct {
					Name, Manager string
					Outdated      bool
				}
			}
			if err := json.Unmarshal([]byte(h.run(h.bin, "hooks", "status", "--json")), &st); err != nil {
				t.Fatal(err)
			}
			through := false
			for _, hk := range st.Hooks {
				through = through || hk.Name == "post-commit" && hk.Manager == tool
				if hk.Outdated {
					t.Fatalf("%s outdated right after install", hk.Name)
				}
			}
			if !through {
				t.Fatalf("post-commit does not go through %s: %+v", tool, st.Hooks)
			}
			h.run(h.bin, "add", "the pool size is set where the config is loaded")
			held, err := lock.Exclusive(context.Background(), filepath.Join(h.repo, ".git", "memsync", "memories.md.lock"), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			h.run("git", "commit", "-q", "--allow-empty", "-m", "one")
			live, err := os.ReadFile(filepath.Join(h.repo, ".agent", "memories.md"))
			if err != nil {
				t.Fatal(err)
			}
			if snapshotted(t, h.env, h.repo) == string(live) {
				t.Fatal("the snapshot was made while the lock was held")
			}
			if err := held.Release(); err != nil {
				t.Fatal(err)
			}
			waitSnapshotted(t, h.env, h.repo, 20*time.Second)
			waitNoProcessIn(t, h.repo, 20*time.Second)
		})
	}
}

// TestHookBackgroundTerminal: git run as the leader of a session on a
// terminal (an interactive shell's `bash -c`, `ssh -t`, lefthook's
// pseudo-terminal) makes the kernel hang up its process group when it
// exits, which the background hook is in: the hook ignores the hangup
// from the start, and the snapshot is made.
func TestHookBackgroundTerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is absent (util-linux / bsdutils): it runs git on a terminal of its own")
	}
	env := backgroundEnv(t)
	repo := backgroundRepo(t, env)
	cmd := exec.Command(script, "-qec", "git commit -q --allow-empty -m one", "/dev/null")
	cmd.Dir, cmd.Env = repo, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit on a terminal: %v\n%s", err, out)
	}
	waitSnapshotted(t, env, repo, 20*time.Second)
	waitNoProcessIn(t, repo, 20*time.Second)
}

// TestHookBackgroundKeepsTheLog: a hook does not take what earlier
// background hooks left in hooks.log (it would write it back nested in
// its own warning): the log stays for the next memsync command, which
// says it once, as it was written.
func TestHookBackgroundKeepsTheLog(t *testing.T) {
	env := backgroundEnv(t)
	repo := backgroundRepo(t, env)
	log := filepath.Join(repo, ".git", "memsync", "state", "hooks.log")
	const seeded = "post-commit hook: snapshot skipped: a test's warning (in the background at 2026-11-25 08:00:00)\n"
	if err := os.WriteFile(log, []byte(seeded), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", "one")
	waitSnapshotted(t, env, repo, 20*time.Second)
	waitNoProcessIn(t, repo, 20*time.Second)
	if b, err := os.ReadFile(log); err != nil || string(b) != seeded {
		t.Fatalf("hooks.log after a hook: %q, %v", b, err)
	}
	_, stderr := memsyncOut(t, env, repo, "list")
	if strings.Count(stderr, "a test's warning") != 1 || strings.Count(stderr, "post-commit hook:") != 1 {
		t.Fatalf("the next command said:\n%s", stderr)
	}
}

// TestHookBackgroundProvenance: the background snapshot names the branch
// and commit it was made for, read as the hook starts, even when the
// next git command moved HEAD while the hook waited for its turn.
func TestHookBackgroundProvenance(t *testing.T) {
	env := backgroundEnv(t)
	repo := backgroundRepo(t, env)
	turn, err := lock.Exclusive(context.Background(), filepath.Join(repo, ".git", "memsync-hook-run.lock"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, repo, "checkout", "-q", "-b", "feature")
	gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", "on feature")
	commit := strings.TrimSpace(gitRun(t, env, repo, "rev-parse", "HEAD"))
	queue := filepath.Join(repo, ".git", "memsync-hook-queue.lock")
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		l, err := lock.TryExclusive(queue)
		if err == nil && l == nil {
			break // the hook waits for its turn
		}
		if l != nil {
			_ = l.Release()
		}
		if time.Now().After(end) {
			t.Fatal("the background hook never queued")
		}
	}
	gitRun(t, env, repo, "checkout", "-q", "-b", "other")
	if err := turn.Release(); err != nil {
		t.Fatal(err)
	}
	waitSnapshotted(t, env, repo, 20*time.Second)
	waitNoProcessIn(t, repo, 20*time.Second)
	msg := gitRun(t, env, repo, "log", "-1", "--format=%B", "refs/memsync/snapshots")
	if !strings.Contains(msg, "Memsync-Branch: feature\n") || !strings.Contains(msg, "Memsync-Source-Commit: "+commit) {
		t.Fatalf("the snapshot does not name the feature branch's commit %s:\n%s", commit, msg)
	}
}
