package memsync

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/lock"
	"github.com/memsync/memsync/worktree"
)

func hookRepo(t *testing.T) *worktree.Repo {
	t.Helper()
	dir := testgit.Isolate(t)
	testgit.Git(t, dir, "init", "-q", ".")
	r, err := worktree.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunHookNeverFails: outside a repository, a warning; a branch switch, nothing;
// a lock that stays taken, a warning within the time bound.
func TestRunHookNeverFails(t *testing.T) {
	var out bytes.Buffer
	RunHook(context.Background(), t.TempDir(), "post-commit", nil, HookOptions{Stderr: &out})
	if !strings.HasPrefix(out.String(), "memsync: warning: post-commit hook: ") || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("outside a repository: %q", out.String())
	}

	r := hookRepo(t)
	out.Reset()
	RunHook(context.Background(), r.WorkTree, "post-checkout", []string{"1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222", "1"}, HookOptions{Stderr: &out})
	if out.Len() != 0 {
		t.Fatalf("branch switch printed %q", out.String())
	}
	if _, err := os.Lstat(filepath.Join(r.WorkTree, ".agent")); err == nil {
		t.Fatal("a branch switch in the primary touched .agent")
	}

	if err := os.MkdirAll(r.Home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.MemoryFile(), []byte("# Memories\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := lock.Exclusive(context.Background(), lock.PathFor(r.MemoryFile()), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release() }()
	out.Reset()
	start := time.Now()
	RunHook(context.Background(), r.WorkTree, "post-commit", nil, HookOptions{Stderr: &out, LockTimeout: 700 * time.Millisecond, Timeout: 200 * time.Millisecond})
	if d := time.Since(start); d > 600*time.Millisecond {
		t.Fatalf("took %s", d)
	}
	time.Sleep(time.Second) // the abandoned handler's lock wait ends (a process would have exited)
	if !strings.Contains(out.String(), "gave up after 200ms") || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("time bound: %q", out.String())
	}
	out.Reset()
	RunHook(context.Background(), r.WorkTree, "post-commit", nil, HookOptions{Stderr: &out, LockTimeout: 50 * time.Millisecond})
	if !strings.Contains(out.String(), "snapshot skipped: ") || !strings.Contains(out.String(), "timed out") {
		t.Fatalf("lock timeout: %q", out.String())
	}
}

// TestRunHookPostCheckoutLinks: after `git worktree add` (old HEAD all zeros) the
// new worktree's memory is linked to the shared file, relative; in a
// repository without memory nothing is created.
func TestRunHookPostCheckoutLinks(t *testing.T) {
	r := hookRepo(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = r.WorkTree
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("commit", "-q", "--allow-empty", "-m", "init")
	zeros := []string{strings.Repeat("0", 40), strings.Repeat("1", 40), "1"}
	wt1 := filepath.Join(filepath.Dir(r.WorkTree), "wt1")
	git("worktree", "add", "-q", wt1)
	var out bytes.Buffer
	RunHook(context.Background(), wt1, "post-checkout", zeros, HookOptions{Stderr: &out})
	if _, err := os.Lstat(filepath.Join(wt1, ".agent")); err == nil || out.Len() > 0 {
		t.Fatalf("a repository without memory got a link (%q)", out.String())
	}

	if err := os.MkdirAll(r.Home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.MemoryFile(), []byte("# Memories\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wt2 := filepath.Join(filepath.Dir(r.WorkTree), "deeper", "wt2")
	git("worktree", "add", "-q", wt2)
	RunHook(context.Background(), wt2, "post-checkout", zeros, HookOptions{Stderr: &out})
	link := filepath.Join(wt2, ".agent", "memories.md")
	dest, err := os.Readlink(link)
	if err != nil || out.Len() > 0 {
		t.Fatalf("no link: %v (%q)", err, out.String())
	}
	if want, _ := filepath.Rel(filepath.Join(wt2, ".agent"), r.MemoryFile()); dest != want || filepath.IsAbs(dest) {
		t.Fatalf("link to %s, want %s", dest, want)
	}
	// Again (a second checkout hook run): the link is left as it is.
	RunHook(context.Background(), wt2, "post-checkout", zeros, HookOptions{Stderr: &out})
	if d2, _ := os.Readlink(link); d2 != dest || out.Len() > 0 {
		t.Fatalf("second run changed the link or warned: %s %q", d2, out.String())
	}
}

// TestRunHookBackgroundTurnTimeout: a background hook whose turn does not
// come (the hook before it never ends) says so in hooks.log, which the
// next Open reports: the snapshot it and the hooks that left their turn to
// it did not take is not lost silently.
func TestRunHookBackgroundTurnTimeout(t *testing.T) {
	r := hookRepo(t)
	held, err := lock.Exclusive(context.Background(), filepath.Join(r.GitDir, "memsync-hook-run.lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Release() }()
	RunHook(context.Background(), r.WorkTree, "post-commit", nil, HookOptions{Background: true, Timeout: 100 * time.Millisecond})
	var said []string
	m, err := Open(r.WorkTree, Options{Warn: func(s string) { said = append(said, s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	if len(said) != 1 || !strings.Contains(said[0], "post-commit hook: snapshot skipped: the hook before it did not end") {
		t.Fatalf("Open said %q", said)
	}
}

// TestHookLogHostile: a link at hooks.log is never read through (a file
// it leads to is not printed) nor written through, and a pipe there
// neither blocks the hook that writes its warning nor the Open that reads.
func TestHookLogHostile(t *testing.T) {
	r := hookRepo(t)
	state := filepath.Join(r.CommonDir, "memsync", "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(state, hookLogName)
	private := filepath.Join(t.TempDir(), "private")
	if err := os.WriteFile(private, []byte("a private line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(private, log); err != nil {
		t.Fatal(err)
	}
	saveHookWarnings(r, "memsync: warning: post-commit hook: snapshot skipped: x")
	var said []string
	m, err := Open(r.WorkTree, Options{Warn: func(s string) { said = append(said, s) }})
	if err != nil {
		t.Fatal(err)
	}
	_ = m.Close()
	if b, _ := os.ReadFile(private); string(b) != "a private line\n" || strings.Contains(strings.Join(said, "\n"), "private") {
		t.Fatalf("through the link: file %q, said %q", b, said)
	}
	_ = os.Remove(log)
	if err := syscall.Mkfifo(log, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		saveHookWarnings(r, "memsync: warning: post-commit hook: snapshot skipped: y")
		if m, err := Open(r.WorkTree, Options{}); err == nil {
			_ = m.Close()
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		if f, err := os.OpenFile(log, os.O_RDWR, 0); err == nil { // let a blocked open go
			_ = f.Close()
		}
		t.Fatal("a pipe at hooks.log blocked")
	}
}

// TestHookLogSaysARepeatOnce: background hooks that each gave up for the
// same reason (a rebase's hooks while an entry holds a secret, or while a
// removal waits to be accepted) leave one line each in hooks.log; the next
// Open says each warning once, with how many times it came, not once per
// commit.
func TestHookLogSaysARepeatOnce(t *testing.T) {
	r := hookRepo(t)
	for range 60 {
		saveHookWarnings(r, "memsync: warning: post-commit hook: snapshot skipped: the memory lost 30 of 31 entries")
	}
	saveHookWarnings(r, "memsync: warning: post-rewrite hook: snapshot skipped: other")
	var said []string
	m, err := Open(r.WorkTree, Options{Warn: func(s string) { said = append(said, s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	if len(said) != 2 || !strings.HasPrefix(said[0], "post-commit hook: snapshot skipped: the memory lost 30 of 31 entries (in the background, 60 times, ") ||
		!strings.HasPrefix(said[1], "post-rewrite hook: snapshot skipped: other (in the background at ") {
		t.Fatalf("Open said %d lines: %q", len(said), said)
	}
}
