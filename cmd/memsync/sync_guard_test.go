package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	_, _ = w.WriteString(snapFile(tb, env, mate, "refs/memsync/snapshots:memories.md")) // the team's entries stay
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
// and peak RSS in KiB (of it and its git children), measured by GNU time
// (-1 without /usr/bin/time). wait4's rusage of a child this process starts
// itself would not do: Go starts children with vfork, and Linux keeps the
// high-water RSS of the mm a child had before its exec, this test process's.
func refusedSync(tb testing.TB, env []string, dir string) (code int, stderr string, maxRSS int64) {
	tb.Helper()
	args := []string{memsyncBinary(tb), "sync"}
	rssFile := filepath.Join(tb.TempDir(), "maxrss")
	timed := false
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		args, timed = append([]string{"/usr/bin/time", "-f", "%M", "-o", rssFile}, args...), true
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	var errb strings.Builder
	cmd.Stderr = &errb
	code = exitStatus(cmd.Run())
	maxRSS = -1
	if timed {
		out, err := os.ReadFile(rssFile)
		if err != nil {
			tb.Fatal(err)
		}
		f := strings.Fields(string(out)) // "Command exited with non-zero status 5" comes first
		if maxRSS, err = strconv.ParseInt(f[len(f)-1], 10, 64); err != nil {
			tb.Fatalf("/usr/bin/time wrote %q", out)
		}
	}
	return code, errb.String(), maxRSS
}

// TestSyncRefusesHugeRemote: a remote snapshot whose memories.md is 30 MB,
// with the memory's cap at 1 MB (MEMSYNC_MAX_BYTES), is refused before it
// is read: exit 5, a message naming the remote, its snapshot and both
// sizes, the local memory and its snapshots unchanged, and the sync's peak
// RSS (git's included) under 100 MB; diff and rollback refuse it too.
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
	switch {
	case rss < 0:
		t.Log("no /usr/bin/time: the peak RSS is not checked")
	case rss > 100<<10:
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

// BenchmarkSyncRefusedHugeRemote: the peak RSS (maxrss-MB, git's included,
// from /usr/bin/time)
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

// TestRemovalGuard: a memory truncated by hand (an editor, a script) is
// neither snapshotted by 'memsync snapshot' nor by the post-commit hook (one
// warning line, the commit made) nor pushed by 'memsync sync': exit 5 with
// a hint, the snapshot ref and the remote unchanged. --accept-removal
// passes; 'memsync delete' of most entries passes without it.
func TestRemovalGuard(t *testing.T) {
	env, root, remote := bareRemote(t)
	repo := filepath.Join(root, "clone")
	gitRun(t, env, root, "clone", "-q", remote, repo)
	memsyncIn(t, env, repo, "hooks", "install")
	for i := range 6 {
		memsyncIn(t, env, repo, "add", fmt.Sprintf("fact number %d", i))
	}
	memsyncIn(t, env, repo, "sync")
	memory := filepath.Join(repo, ".agent", "memories.md")
	data, err := os.ReadFile(memory)
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Index(string(data), "\n## fact number 1")
	if err := os.WriteFile(memory, data[:cut+1], 0o644); err != nil { // only fact 0 is left
		t.Fatal(err)
	}
	ref := func(dir string) string { return gitRun(t, env, dir, "rev-parse", "refs/memsync/snapshots") }
	head, pushed := ref(repo), ref(remote)

	for _, args := range [][]string{{"snapshot"}, {"sync"}} {
		out, stderr := memsyncRefused(t, env, repo, args...)
		if !strings.Contains(stderr, "lost 5 of the 6 entries") || !strings.Contains(stderr, "--accept-removal") {
			t.Errorf("memsync %v: %s%s", args, out, stderr)
		}
	}
	commit := exec.Command("git", "commit", "-q", "--allow-empty", "-m", "work")
	commit.Dir, commit.Env = repo, env
	out, err := commit.CombinedOutput()
	if err != nil || strings.Count(string(out), "\n") != 1 || !strings.Contains(string(out), "snapshot skipped: the memory lost 5 of the 6") {
		t.Errorf("git commit with the hook: %v\n%s", err, out)
	}
	if ref(repo) != head || ref(remote) != pushed {
		t.Fatalf("a refused snapshot moved a ref")
	}

	memsyncIn(t, env, repo, "sync", "--accept-removal")
	if ref(remote) == pushed || len(snapshotIDs(t, env, remote)) != 1 {
		t.Fatalf("sync --accept-removal did not push the removal: %v", snapshotIDs(t, env, remote))
	}

	// memsync's own removals pass: delete 4 of 5, then snapshot and sync.
	for i := range 4 {
		memsyncIn(t, env, repo, "add", fmt.Sprintf("second fact %d", i))
	}
	memsyncIn(t, env, repo, "snapshot")
	var ids []string
	for id := range memoryIDs(t, repo) {
		ids = append(ids, id)
	}
	memsyncIn(t, env, repo, append([]string{"delete"}, ids[:4]...)...)
	memsyncIn(t, env, repo, "snapshot")
	memsyncIn(t, env, repo, "sync")
	if got := snapshotIDs(t, env, remote); len(got) != 1 {
		t.Errorf("the remote after memsync delete and sync: %v", got)
	}

	// --accept-removal on snapshot passes too.
	for i := range 4 {
		memsyncIn(t, env, repo, "add", fmt.Sprintf("third fact %d", i))
	}
	memsyncIn(t, env, repo, "snapshot")
	if err := os.WriteFile(memory, []byte("# Memories\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	memsyncRefused(t, env, repo, "snapshot")
	if out := memsyncIn(t, env, repo, "snapshot", "--accept-removal"); !strings.HasPrefix(out, "snapshot ") {
		t.Errorf("snapshot --accept-removal: %s", out)
	}
}

// memsyncRefused runs memsync in dir, which must refuse (exit 5), and
// returns its stdout and stderr.
func memsyncRefused(tb testing.TB, env []string, dir string, args ...string) (stdout, stderr string) {
	tb.Helper()
	cmd := exec.Command(memsyncBinary(tb), args...)
	cmd.Dir, cmd.Env = dir, env
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if got := exitStatus(err); got != exitRefused {
		tb.Errorf("memsync %v: exit %d, want %d\n%s%s", args, got, exitRefused, out, errb.String())
	}
	return string(out), errb.String()
}
