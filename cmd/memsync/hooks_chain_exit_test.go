package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestChainedHookKeepsExitStatus: a post-commit hook that was there before
// memsync's (it exits 3) is chained by 'memsync hooks install'. The installed
// script runs it, then memsync's handler (a snapshot is taken), and exits
// with the chained hook's status, not memsync's. A real 'git commit' runs
// both too.
func TestChainedHookKeepsExitStatus(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsyncIn(t, env, repo, "init")
	memsyncIn(t, env, repo, "add", "a fact worth a snapshot")
	hook := filepath.Join(repo, ".git", "hooks", "post-commit")
	mark := filepath.Join(repo, ".git", "chained-ran")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho ran >> '"+mark+"'\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	memsyncIn(t, env, repo, "hooks", "install")

	cmd := exec.Command(hook)
	cmd.Dir, cmd.Env = repo, env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("the chained hook exits 3; the installed script returned %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(mark); string(b) != "ran\n" {
		t.Fatalf("chained hook runs: %q", b)
	}
	if got := strings.TrimSpace(gitRun(t, env, repo, "rev-list", "--count", "refs/memsync/snapshots")); got != "1" {
		t.Fatalf("memsync's handler did not snapshot after the chained hook: %s snapshots", got)
	}

	memsyncIn(t, env, repo, "add", "another fact")
	gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", "second")
	if b, _ := os.ReadFile(mark); string(b) != "ran\nran\n" {
		t.Fatalf("git commit did not run the chained hook: %q", b)
	}
	if got := strings.TrimSpace(gitRun(t, env, repo, "rev-list", "--count", "refs/memsync/snapshots")); got != "2" {
		t.Fatalf("git commit did not snapshot: %s snapshots", got)
	}
}
