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
