package memsync

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
)

const conflicted = `# Memories

## Common
- ID: common
- Content: common

<<<<<<< HEAD
## Ours
- ID: ours
- Content: ours only
=======
## Theirs
- ID: theirs
- Content: theirs only
>>>>>>> side
`

func checkOf(t *testing.T, r DoctorReport, name string) Check {
	t.Helper()
	for _, ch := range r.Checks {
		if ch.Check == name {
			return ch
		}
	}
	t.Fatalf("no %s check in %+v", name, r.Checks)
	return Check{}
}

// initedMemory is the memory of a new repository after memsync init.
func initedMemory(t *testing.T) (*Memory, context.Context) {
	t.Helper()
	dir := testgit.Isolate(t)
	testgit.Git(t, dir, "init", "-q")
	m, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.Init(ctx, InitOptions{}); err != nil {
		t.Fatal(err)
	}
	return m, ctx
}

// Doctor reports a memory file with git conflict markers as a problem it
// can fix; with Fix it merges the two sides by entry and keeps a backup.
func TestDoctorConflictMarkers(t *testing.T) {
	m, ctx := initedMemory(t)
	if err := os.WriteFile(m.Path(), []byte(conflicted), 0o644); err != nil {
		t.Fatal(err)
	}

	rep, err := m.Doctor(ctx, DoctorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mem := checkOf(t, rep, "memory")
	if rep.OK || mem.Status != checkProblem || !mem.Fixable || !strings.Contains(mem.Detail, "conflict marker") {
		t.Fatalf("Doctor = %+v", rep)
	}
	if left, fixable := rep.Problems(); left != 1 || !fixable {
		t.Fatalf("Problems = %d, %v: %+v", left, fixable, rep)
	}
	if ch := checkOf(t, rep, "worktree"); ch.Status != checkOK {
		t.Fatalf("worktree check: %+v", ch)
	}
	data, err := json.Marshal(rep)
	if err != nil || !strings.HasPrefix(string(data), `{"ok":false,"checks":[{"check":"memory","status":"problem","detail":`) {
		t.Fatalf("JSON: %s, %v", data, err)
	}

	rep, err = m.Doctor(ctx, DoctorOptions{Fix: true})
	if err != nil {
		t.Fatal(err)
	}
	mem = checkOf(t, rep, "memory")
	if !rep.OK || mem.Status != checkFixed || mem.Backup == "" {
		t.Fatalf("Doctor --fix = %+v", rep)
	}
	all, err := m.List(ctx, View{})
	if err != nil || len(all) != 3 {
		t.Fatalf("after the fix: %+v, %v", all, err)
	}
	if b, err := os.ReadFile(mem.Backup); err != nil || !strings.Contains(string(b), "<<<<<<< HEAD") {
		t.Fatalf("backup %s: %v", mem.Backup, err)
	}
}

// Doctor names damage it cannot repair (a NUL byte) with the edit to make
// by hand, and reports a worktree whose memory is not linked.
func TestDoctorDamageAndWorktree(t *testing.T) {
	primary, parent, m := newWorktreeRepo(t)
	ctx := context.Background()
	if _, err := m.Add(ctx, Entry{Content: "fine"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(m.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("\n## Broken\n- Content: a \x00 byte\n")
	_ = f.Close()
	testgit.Git(t, primary, "worktree", "add", "-q", "-b", "loop", filepath.Join(parent, "loop"))

	rep, err := m.Doctor(ctx, DoctorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mem := checkOf(t, rep, "memory")
	if mem.Status != checkProblem || mem.Fixable || !strings.Contains(mem.Fix, "by hand") {
		t.Fatalf("memory check: %+v", mem)
	}
	wt := checkOf(t, rep, "worktree")
	if wt.Status != checkProblem || !wt.Fixable || !strings.Contains(wt.Detail, "missing") {
		t.Fatalf("worktree check: %+v", wt)
	}

	rep, err = m.Doctor(ctx, DoctorOptions{Fix: true})
	if err != nil {
		t.Fatal(err)
	}
	if wt := checkOf(t, rep, "worktree"); wt.Status != checkFixed {
		t.Fatalf("worktree check after the fix: %+v", wt)
	}
	if left, _ := rep.Problems(); left != 1 {
		t.Fatalf("left: %+v", rep)
	}
}

// TestDoctorRefspec: a remote whose fetch refspec maps refs/memsync/ onto
// this clone's (+refs/*:refs/*) is a problem doctor names; --fix adds the
// negative refspec, after which a plain git fetch leaves this clone's
// snapshots alone. Refspecs that map elsewhere are no problem.
func TestDoctorRefspec(t *testing.T) {
	ctx := context.Background()
	m, dir := openRepo(t, Options{})
	bare := filepath.Join(t.TempDir(), "remote.git")
	testgit.Git(t, dir, "init", "-q", "--bare", bare)
	testgit.Git(t, dir, "remote", "add", "origin", bare)
	testgit.Git(t, dir, "remote", "add", "other", bare) // +refs/heads/*:refs/remotes/other/*
	testgit.Git(t, dir, "config", "--add", "remote.other.fetch", "+refs/*:refs/remotes/other/all/*")
	add(t, m, "a fact of this clone")
	if _, err := m.Snapshot(ctx, SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, dir, "push", "-q", bare, "HEAD:refs/heads/main", "HEAD:refs/memsync/snapshots") // the remote's differs from ours
	refspecChecks := func(r DoctorReport) (out []Check) {
		for _, ch := range r.Checks {
			if ch.Check == "refspec" {
				out = append(out, ch)
			}
		}
		return out
	}
	r, err := m.Doctor(ctx, DoctorOptions{})
	if err != nil || len(refspecChecks(r)) != 0 {
		t.Fatalf("default refspecs: %+v, %v", refspecChecks(r), err)
	}
	testgit.Git(t, dir, "config", "--add", "remote.origin.fetch", "+refs/*:refs/*")
	r, err = m.Doctor(ctx, DoctorOptions{})
	if chs := refspecChecks(r); err != nil || r.OK || len(chs) != 1 || chs[0].Status != checkProblem || !strings.Contains(chs[0].Detail, "remote origin") {
		t.Fatalf("mirror refspec: %+v, %v", chs, err)
	}
	r, err = m.Doctor(ctx, DoctorOptions{Fix: true})
	if chs := refspecChecks(r); err != nil || len(chs) != 1 || chs[0].Status != checkFixed {
		t.Fatalf("--fix: %+v, %v", chs, err)
	}
	ours := testgit.Git(t, dir, "rev-parse", "refs/memsync/snapshots")
	testgit.Git(t, dir, "fetch", "-q", "origin")
	if got := testgit.Git(t, dir, "rev-parse", "refs/memsync/snapshots"); got != ours {
		t.Fatalf("git fetch moved this clone's snapshots from %s to %s", ours, got)
	}
	if r, err = m.Doctor(ctx, DoctorOptions{}); err != nil || len(refspecChecks(r)) != 0 {
		t.Fatalf("after --fix: %+v, %v", refspecChecks(r), err)
	}
}

// TestMapRef: refspecs map refs as git maps them.
func TestMapRef(t *testing.T) {
	for _, c := range []struct {
		src, dst, ref, want string
		ok                  bool
	}{
		{"refs/*", "refs/*", "refs/memsync/snapshots", "refs/memsync/snapshots", true},
		{"refs/heads/*", "refs/remotes/o/*", "refs/memsync/snapshots", "", false},
		{"refs/memsync/*", "refs/x/*", "refs/memsync/clones/a", "refs/x/clones/a", true},
		{"refs/memsync/snapshots", "refs/memsync/snapshots", "refs/memsync/snapshots", "refs/memsync/snapshots", true},
		{"refs/*/snapshots", "refs/*/s", "refs/memsync/snapshots", "refs/memsync/s", true},
		{"refs/*/snapshots", "refs/*/s", "refs/snapshots", "", false},
	} {
		if got, ok := mapRef(c.src, c.dst, c.ref); got != c.want || ok != c.ok {
			t.Errorf("mapRef(%q, %q, %q) = %q, %v", c.src, c.dst, c.ref, got, ok)
		}
	}
	if spec, _ := overwrites([]string{"+refs/*:refs/*", "^refs/memsync/*"}); spec != "" {
		t.Errorf("a negative refspec did not count: %q", spec)
	}
}
