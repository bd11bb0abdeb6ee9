package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// memsyncRun runs the real memsync and returns its stdout, its stderr and
// its exit code.
func memsyncRun(t *testing.T, env []string, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}

// regexpFind tells whether the regular expression re matches in s.
func regexpFind(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// gitCode runs git and returns its combined output and exit code.
func gitCode(t *testing.T, env []string, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return string(out), 0
}

// removeObjects deletes objects from the repository as a 'git gc
// --prune=now' that raced a snapshot does: every pack is unpacked into loose
// objects first, so each object is one file, then the given ones go.
func removeObjects(t *testing.T, env []string, repo string, hashes ...string) {
	t.Helper()
	objects := filepath.Join(repo, ".git", "objects")
	packs, err := filepath.Glob(filepath.Join(objects, "pack", "pack-*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	aside := t.TempDir()
	for _, p := range packs {
		moved := filepath.Join(aside, filepath.Base(p))
		if err := os.Rename(p, moved); err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(p, ".pack")
		for _, ext := range []string{".idx", ".rev", ".keep", ".mtimes"} {
			_ = os.Remove(base + ext)
		}
		f, err := os.Open(moved)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "unpack-objects", "-q")
		cmd.Dir, cmd.Env, cmd.Stdin = repo, env, f
		out, err := cmd.CombinedOutput()
		_ = f.Close()
		if err != nil {
			t.Fatalf("git unpack-objects: %v\n%s", err, out)
		}
	}
	for _, h := range hashes {
		h = strings.TrimSpace(h)
		if err := os.Remove(filepath.Join(objects, h[:2], h[2:])); err != nil {
			t.Fatal(err)
		}
	}
}

// historyRepo is a repository with hooks installed and three snapshots on
// refs/memsync/snapshots (first, second, third); it returns the repository
// and the three snapshot hashes.
func historyRepo(t *testing.T, env []string) (string, [3]string) {
	t.Helper()
	repo := newRepo(t, env)
	memsyncOut(t, env, repo, "init")
	memsyncOut(t, env, repo, "hooks", "install")
	var snaps [3]string
	for i, c := range []string{"first lesson", "second lesson", "third lesson"} {
		memsyncOut(t, env, repo, "add", c)
		gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", c)
		snaps[i] = strings.TrimSpace(gitRun(t, env, repo, "rev-parse", "refs/memsync/snapshots"))
	}
	if snaps[0] == snaps[1] || snaps[1] == snaps[2] {
		t.Fatalf("the commits took no snapshots: %v", snaps)
	}
	return repo, snaps
}

// expectDamage checks what a damaged snapshot ref does before the repair:
// doctor reports it (exit 1), a snapshot fails and names the fix, a commit
// still succeeds and its hook says the same.
func expectDamage(t *testing.T, env []string, repo string) {
	t.Helper()
	out, _, code := memsyncRun(t, env, repo, "doctor")
	if code != 1 || !regexpFind(`history +problem .*refs/memsync/snapshots points at [0-9a-f]{12}, whose objects the repository lacks`, out) || !strings.Contains(out, "memsync doctor --fix") {
		t.Fatalf("doctor on a damaged history: exit %d\n%s", code, out)
	}
	memsyncOut(t, env, repo, "add", "written while the history is damaged")
	_, stderr, code := memsyncRun(t, env, repo, "snapshot")
	if code == 0 || !strings.Contains(stderr, "memsync doctor --fix") {
		t.Fatalf("snapshot on a damaged history: exit %d\n%s", code, stderr)
	}
	out, code = gitCode(t, env, repo, "commit", "--allow-empty", "-m", "while damaged")
	if code != 0 || !strings.Contains(out, "memsync doctor --fix") {
		t.Fatalf("commit on a damaged history: exit %d\n%s", code, out)
	}
}

// expectRepaired checks the state after doctor --fix: doctor is clean, the
// next snapshot holds every live entry, git gc and git fsck are clean, and
// the log reads.
func expectRepaired(t *testing.T, env []string, repo string) {
	t.Helper()
	if out, _, code := memsyncRun(t, env, repo, "doctor"); code != 0 || strings.Contains(out, "history") {
		t.Fatalf("doctor after the repair: exit %d\n%s", code, out)
	}
	memsyncOut(t, env, repo, "add", "written after the repair")
	memsyncOut(t, env, repo, "snapshot")
	tip := snapFile(t, env, repo, "refs/memsync/snapshots:memories.md")
	for _, c := range []string{"first lesson", "second lesson", "third lesson", "written while the history is damaged", "written after the repair"} {
		if !strings.Contains(tip, c) {
			t.Fatalf("the newest snapshot lacks %q:\n%s", c, tip)
		}
	}
	if out, code := gitCode(t, env, repo, "gc", "--prune=now", "--quiet"); code != 0 {
		t.Fatalf("git gc after the repair: exit %d\n%s", code, out)
	}
	expectSane(t, env, repo)
	memsyncOut(t, env, repo, "log")
}

// The newest snapshot's tree is gone (its commit is there): doctor --fix
// moves the ref back along the parents to the newest whole snapshot and
// snapshots the live memory on top.
func TestDoctorRepairsMissingSnapshotTree(t *testing.T) {
	env := testGitEnv(t)
	repo, snaps := historyRepo(t, env)
	tree := gitRun(t, env, repo, "rev-parse", snaps[2]+"^{tree}")
	removeObjects(t, env, repo, tree)
	if out, code := gitCode(t, env, repo, "gc", "--prune=now", "--quiet"); code == 0 {
		t.Fatalf("git gc passed on the damaged history:\n%s", out)
	}
	expectDamage(t, env, repo)
	out, _, code := memsyncRun(t, env, repo, "doctor", "--fix")
	if code != 0 || !regexpFind(`history +fixed .*moved it back to `+snaps[1][:12]+`, the newest whole snapshot \(found in its parents\); 1 snapshot is lost from history; the live memory is snapshotted on top as [0-9a-f]{12}`, out) {
		t.Fatalf("doctor --fix: exit %d\n%s", code, out)
	}
	if parent := strings.TrimSpace(gitRun(t, env, repo, "rev-parse", "refs/memsync/snapshots~1")); parent != snaps[1] {
		t.Fatalf("the snapshot on top has parent %s, want %s", parent, snaps[1])
	}
	expectRepaired(t, env, repo)
}

// The newest snapshot's commit is gone: with a reflog of the ref (git keeps
// one where core.logAllRefUpdates=always), the ref goes back to its newest
// whole value; without one, a new root snapshot of the live memory is made.
func TestDoctorRepairsMissingSnapshotCommit(t *testing.T) {
	for _, reflog := range []bool{true, false} {
		t.Run(map[bool]string{true: "reflog", false: "rebuilt"}[reflog], func(t *testing.T) {
			env := testGitEnv(t)
			repo, snaps := historyRepo(t, env)
			if reflog {
				gitRun(t, env, repo, "update-ref", "--create-reflog", "refs/memsync/snapshots", snaps[1], snaps[2])
				gitRun(t, env, repo, "update-ref", "--create-reflog", "refs/memsync/snapshots", snaps[2], snaps[1])
			}
			removeObjects(t, env, repo, snaps[2])
			if out, code := gitCode(t, env, repo, "gc", "--prune=now", "--quiet"); code == 0 || !strings.Contains(out, "refs/memsync/snapshots") {
				t.Fatalf("git gc on the damaged history: exit %d\n%s", code, out)
			}
			expectDamage(t, env, repo)
			out, _, code := memsyncRun(t, env, repo, "doctor", "--fix")
			want := `history +fixed .*moved it back to ` + snaps[1][:12] + `, the newest whole snapshot \(found in its reflog\); the snapshots after it are lost from history; the live memory is snapshotted on top`
			if !reflog {
				want = `history +fixed .*no whole snapshot was left: made a new root snapshot [0-9a-f]{12} of the live memory; all earlier history is lost`
			}
			if code != 0 || !regexpFind(want, out) {
				t.Fatalf("doctor --fix: exit %d\n%s", code, out)
			}
			expectRepaired(t, env, repo)
		})
	}
}

// A remote's fetched snapshot ref that points at a missing commit is
// reported and, with no whole value to go back to, deleted (the next sync
// fetches it again).
func TestDoctorRepairsRemoteSnapshotRef(t *testing.T) {
	env := testGitEnv(t)
	repo, _ := historyRepo(t, env)
	remote := filepath.Join(repo, ".git", "refs", "memsync", "remotes", "origin", "snapshots")
	if err := os.MkdirAll(filepath.Dir(remote), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(remote, []byte("1234567890123456789012345678901234567890\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := memsyncRun(t, env, repo, "doctor")
	if code != 1 || !strings.Contains(out, "refs/memsync/remotes/origin/snapshots points at 123456789012") {
		t.Fatalf("doctor: exit %d\n%s", code, out)
	}
	out, _, code = memsyncRun(t, env, repo, "doctor", "--fix")
	if code != 0 || !strings.Contains(out, "deleted it (the next memsync sync fetches it again)") {
		t.Fatalf("doctor --fix: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(remote); !os.IsNotExist(err) {
		t.Fatalf("the remote's damaged ref is still there: %v", err)
	}
	expectSane(t, env, repo)
}

// TestSnapshotsRaceGitGC: snapshots in a loop (real memsync processes)
// while `git gc --prune=now` runs in a loop. gc never finds a snapshot ref
// that points at a pruned object, and afterwards git fsck is clean, the ref
// is whole, doctor finds nothing, and the next snapshot holds every entry.
func TestSnapshotsRaceGitGC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git gc and memsync in loops for some seconds")
	}
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsyncOut(t, env, repo, "init")
	memsyncOut(t, env, repo, "add", "before the race")
	memsyncOut(t, env, repo, "snapshot")
	deadline := time.Now().Add(4 * time.Second)
	var acked []string
	snaps, gcs := 0, 0
	var gcErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for time.Now().Before(deadline) {
			out, code := gitCode(t, env, repo, "gc", "--prune=now", "--quiet")
			gcs++
			if code != 0 && strings.Contains(out, "bad object") {
				gcErr = fmt.Errorf("git gc: exit %d\n%s", code, out)
				return
			}
		}
	}()
	for i := 0; time.Now().Before(deadline); i++ {
		c := fmt.Sprintf("lesson %d learned during gc", i)
		if _, _, code := memsyncRun(t, env, repo, "add", c); code == 0 {
			acked = append(acked, c)
		}
		if _, stderr, code := memsyncRun(t, env, repo, "snapshot"); code == 0 {
			snaps++
		} else if strings.Contains(stderr, "doctor --fix") {
			t.Errorf("snapshot %d found the history damaged:\n%s", i, stderr)
			break
		}
	}
	<-done
	t.Logf("%d snapshots, %d git gc runs", snaps, gcs)
	if gcErr != nil {
		t.Fatal(gcErr)
	}
	if snaps < 10 || gcs < 3 {
		t.Fatalf("too little raced: %d snapshots, %d git gc runs", snaps, gcs)
	}
	expectSane(t, env, repo)
	if out, code := gitCode(t, env, repo, "rev-list", "--objects", "--missing=print", "refs/memsync/snapshots"); code != 0 || strings.Contains(out, "\n?") {
		t.Fatalf("refs/memsync/snapshots is not whole: exit %d\n%s", code, out)
	}
	if out, _, code := memsyncRun(t, env, repo, "doctor"); code != 0 {
		t.Fatalf("doctor after the race: exit %d\n%s", code, out)
	}
	memsyncOut(t, env, repo, "snapshot")
	tip := snapFile(t, env, repo, "refs/memsync/snapshots:memories.md")
	for _, c := range acked {
		if !strings.Contains(tip, c) {
			t.Fatalf("the newest snapshot lacks %q", c)
		}
	}
	if n := strings.Count(gitRun(t, env, repo, "log", "--format=%H", "refs/memsync/snapshots"), "\n"); n < snaps {
		t.Fatalf("the history holds %d snapshots, %d were taken", n, snaps)
	}
}
