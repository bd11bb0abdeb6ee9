package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestMaintainDetached: the snapshot that leaves packing due returns
// before the packing runs: `memsync maintain` runs on its own, detached,
// with its git pack-objects held by a git wrapper until the test lets it
// go, which it does only once the snapshot has returned. The packs are
// then rolled up, and git fsck finds the history whole.
func TestMaintainDetached(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	gitRun(t, env, repo, "config", "maintenance.autoDetach", "true") // over the tests' foreground default
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	wrap := t.TempDir()
	started, release := filepath.Join(wrap, "started"), filepath.Join(wrap, "go")
	script := fmt.Sprintf(`#!/bin/sh
for a in "$@"; do
  if [ "$a" = pack-objects ]; then
    : > %q
    i=0
    while [ ! -e %q ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
  fi
done
exec %q "$@"
`, started, release, realGit)
	if err := os.WriteFile(filepath.Join(wrap, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env = prependPath(env, wrap)
	bin := memsyncBinary(t)
	packs := func() int {
		m, err := filepath.Glob(filepath.Join(repo, ".git", "objects", "pack", "pack-*.pack"))
		if err != nil {
			t.Fatal(err)
		}
		return len(m)
	}
	for i := 0; packs() <= 8; i++ {
		if i == 40 {
			t.Fatalf("%d packs after %d snapshots", packs(), i)
		}
		memsyncIn(t, env, repo, "add", fmt.Sprintf("lesson %d: the pool size is set where the config is loaded", i))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin, "snapshot")
		cmd.Dir, cmd.Env = repo, env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("snapshot %d: %v (did it wait for the packing?)\n%s", i, err, out)
		}
	}
	waitFor(t, started, 30*time.Second)
	before := packs()
	if before <= 8 {
		t.Fatalf("%d packs while the packing is held", before)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// maintain waits for the one at work, then finds nothing due.
	if out := memsyncIn(t, env, repo, "maintain"); out != "nothing to pack\n" {
		t.Fatalf("maintain after the detached one: %q", out)
	}
	if after := packs(); after >= before-1 {
		t.Fatalf("%d packs after the detached packing, %d before", after, before)
	}
	gitRun(t, env, repo, "fsck", "--strict", "--no-dangling", "--no-progress")
}

// waitFor waits until path exists, failing the test after d.
func waitFor(t *testing.T, path string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear within %s", path, d)
}
