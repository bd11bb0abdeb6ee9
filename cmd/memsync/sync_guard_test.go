package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// hugeRemote makes a bare remote whose snapshot holds a memories.md of size
// bytes (repeated well-formed entries), built with git's plumbing in a
// teammate's clone on top of the team's snapshot (whose entries it keeps) and pushed, and a victim
// clone that synced the team's three entries before. The remote streams
// large blobs (core.bigFileThreshold): its upload-pack is a child of the
// victim's fetch only because the remote is on this machine, and a
// server's memory is not the client's.
func hugeRemote(tb testing.TB, size int64) (env []string, victim, bomb string) {
	tb.Helper()
	env, root, remote := bareRemote(tb)
	gitRun(tb, env, remote, "config", "core.bigFileThreshold", "1m")
	victim = filepath.Join(root, "victim")
	gitRun(tb, env, root, "clone", "-q", remote, victim)
	for i := range 3 {
		memsyncIn(tb, env, victim, "add", fmt.Sprintf("team fact %d", i))
	}
	memsyncIn(tb, env, victim, "sync")
	mate := filepath.Join(root, "mate")
	gitRun(tb, env, root, "clone", "-q", remote, mate)
	memsyncIn(tb, env, mate, "sync")

	file := filepath.Join(tb.TempDir(), "memories.md")
	f, err := os.Create(file)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	_, _ = w.WriteString(gitRun(tb, env, mate, "show", "refs/memsync/snapshots:memories.md")) // the team's entries stay
	for i, n := 0, int64(0); n < size; i++ {
		k, _ := fmt.Fprintf(w, "\n## fact %d\n- Tags:\n- Date: 2026-01-01\n- ID: bomb%08d\n- Content: a remote's fact\n", i, i)
		n += int64(k)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	blob := strings.TrimSpace(gitRun(tb, env, mate, "hash-object", "-w", file))
	if err := os.Remove(file); err != nil {
		tb.Fatal(err)
	}
	tree := strings.TrimSpace(gitRunIn(tb, env, mate, "100644 blob "+blob+"\tmemories.md\n", "mktree"))
	parent := strings.TrimSpace(gitRun(tb, env, mate, "rev-parse", "refs/memsync/snapshots"))
	bomb = strings.TrimSpace(gitRun(tb, env, mate, "commit-tree", tree, "-p", parent, "-m", "memsync snapshot"))
	gitRun(tb, env, mate, "update-ref", "refs/memsync/snapshots", bomb)
	gitRun(tb, env, mate, "push", "-q", "origin", "refs/memsync/snapshots")
	return env, victim, bomb
}

// gitRunIn runs git with stdin.
func gitRunIn(tb testing.TB, env []string, dir, stdin string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// refusedSync runs memsync sync in dir and returns its exit code, stderr
// and peak RSS in KiB (of it and its git children: wait4's rusage).
func refusedSync(tb testing.TB, env []string, dir string) (code int, stderr string, maxRSS int64) {
	tb.Helper()
	cmd := exec.Command(memsyncBinary(tb), "sync")
	cmd.Dir, cmd.Env = dir, env
	var errb strings.Builder
	cmd.Stderr = &errb
	err := cmd.Run()
	return exitStatus(err), errb.String(), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
}

// TestSyncRefusesHugeRemote: a remote snapshot whose memories.md is 30 MB,
// with the memory's cap at 1 MB (MEMSYNC_MAX_BYTES), is refused before it
// is read: exit 5, a message naming the remote, its snapshot and both
// sizes, the local memory and its snapshots unchanged, and the sync's peak
// RSS (git's included) under 100 MB.
func TestSyncRefusesHugeRemote(t *testing.T) {
	env, victim, bomb := hugeRemote(t, 30<<20)
	memory := filepath.Join(victim, ".agent", "memories.md")
	before, err := os.ReadFile(memory)
	if err != nil {
		t.Fatal(err)
	}
	head := gitRun(t, env, victim, "rev-parse", "refs/memsync/snapshots")

	env = append(env, "MEMSYNC_MAX_BYTES=1048576")
	code, stderr, rss := refusedSync(t, env, victim)
	t.Logf("peak RSS of the refused sync of a 30 MB remote (cap 1 MB): %d MB\n%s", rss>>10, stderr)
	if code != 5 {
		t.Errorf("exit %d, want 5\n%s", code, stderr)
	}
	for _, want := range []string{"origin", bomb[:12], "memories.md is 30.0 MB", "2.0 MB", "hint:"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if rss > 100<<10 {
		t.Errorf("peak RSS %d MB, want under 100 MB", rss>>10)
	}
	if after, err := os.ReadFile(memory); err != nil || string(after) != string(before) {
		t.Errorf("the memory changed (%v):\n%.300s", err, after)
	}
	if now := gitRun(t, env, victim, "rev-parse", "refs/memsync/snapshots"); now != head {
		t.Errorf("refs/memsync/snapshots moved from %s to %s", head, now)
	}
	if out := memsyncIn(t, env, victim, "list"); strings.Count(out, "team fact") != 3 {
		t.Errorf("memsync list after the refusal:\n%s", out)
	}
	// The fetched snapshot is still in the object store: the other readers
	// of snapshots refuse it the same way.
	for _, args := range [][]string{{"diff", bomb}, {"rollback", bomb}} {
		cmd := exec.Command(memsyncBinary(t), args...)
		cmd.Dir, cmd.Env = victim, env
		out, err := cmd.CombinedOutput()
		if code := exitStatus(err); code != 5 || !strings.Contains(string(out), "memories.md is 30.0 MB") {
			t.Errorf("memsync %s: exit %d\n%s", args[0], code, out)
		}
	}
	if after, err := os.ReadFile(memory); err != nil || string(after) != string(before) {
		t.Errorf("the memory changed after diff and rollback (%v)", err)
	}
}

// BenchmarkSyncRefusedHugeRemote: the peak RSS (maxrss-MB, git's included)
// of a sync that refuses a remote snapshot holding a 300 MB memories.md
// with the default cap (issue 19's target: ≤ 100 MB).
func BenchmarkSyncRefusedHugeRemote(b *testing.B) {
	env, victim, _ := hugeRemote(b, 300<<20)
	var peak int64
	b.ResetTimer()
	for range b.N {
		code, stderr, rss := refusedSync(b, env, victim)
		if code != 5 {
			b.Fatalf("exit %d\n%s", code, stderr)
		}
		peak = max(peak, rss)
	}
	b.ReportMetric(float64(peak)/1024, "maxrss-MB")
}
