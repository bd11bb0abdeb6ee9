package memsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
)

// newWorktreeRepo makes a repository with one commit and returns its
// folder, a folder beside it for worktrees, and its memory.
func newWorktreeRepo(t *testing.T) (primary, parent string, m *Memory) {
	t.Helper()
	parent = testgit.Isolate(t)
	primary = filepath.Join(parent, "repo")
	testgit.Git(t, parent, "init", "-q", primary)
	testgit.Git(t, primary, "commit", "-q", "--allow-empty", "-m", "init")
	m, err := Open(primary, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return primary, parent, m
}

// WorktreeLink makes the worktree's memory file a relative symlink to the
// memory's, and the list shows it linked; git status stays clean.
func TestWorktreeLink(t *testing.T) {
	primary, parent, m := newWorktreeRepo(t)
	ctx := context.Background()
	wt := filepath.Join(parent, "loop")
	testgit.Git(t, primary, "worktree", "add", "-q", "-b", "loop", wt)
	if _, err := m.Add(ctx, Entry{Content: "shared by every worktree"}); err != nil {
		t.Fatal(err)
	}

	res, err := m.WorktreeLink(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != "linked" || res.Was != "missing" || !res.Changed || res.Path != wt {
		t.Fatalf("WorktreeLink = %+v", res)
	}
	file := filepath.Join(wt, ".agent", "memories.md")
	link, err := os.Readlink(file)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.IsAbs(link) || link != filepath.Join("..", "..", "repo", ".git", "memsync", "memories.md") {
		t.Fatalf("link %q, want the relative path to the memory", link)
	}
	data, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(data), "shared by every worktree") {
		t.Fatalf("through the link: %q, %v", data, err)
	}
	again, err := m.WorktreeLink(ctx, wt)
	if err != nil || again.Changed {
		t.Fatalf("a second link changed something: %+v, %v", again, err)
	}

	list, err := m.Worktrees(ctx)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, w := range list {
		states[filepath.Base(w.Path)] = w.State
	}
	if states["repo"] != "linked" || states["loop"] != "linked" || len(list) != 2 {
		t.Fatalf("Worktrees = %+v", list)
	}
	for _, dir := range []string{primary, wt} {
		if st := testgit.Git(t, dir, "status", "--porcelain"); st != "" {
			t.Fatalf("git status in %s: %s", dir, st)
		}
	}
}

// WorktreeAdd runs git worktree add and links the new worktree; git's
// failure comes back with git's message.
func TestWorktreeAdd(t *testing.T) {
	primary, parent, m := newWorktreeRepo(t)
	ctx := context.Background()
	res, err := m.WorktreeAdd(ctx, filepath.Join(parent, "new"), WorktreeAddOptions{Git: Git{Dir: primary}, Branch: "new"})
	if err != nil || res.State != "linked" {
		t.Fatalf("WorktreeAdd = %+v, %v", res, err)
	}
	if fi, err := os.Lstat(filepath.Join(parent, "new", ".agent", "memories.md")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("no link: %v %v", fi, err)
	}
	_, err = m.WorktreeAdd(ctx, filepath.Join(parent, "again"), WorktreeAddOptions{Git: Git{Dir: primary}, Branch: "new"})
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("a branch that exists: %v", err)
	}
}

// A branch name that starts with "-" is refused before git runs: git
// worktree add passes -b's name on to git branch as it is, so `-b -D` with
// the commit-ish "feature" deleted the branch feature.
func TestWorktreeAddRefusesOptionBranch(t *testing.T) {
	primary, parent, m := newWorktreeRepo(t)
	ctx := context.Background()
	testgit.Git(t, primary, "branch", "feature")
	for _, o := range []WorktreeAddOptions{{Branch: "-D"}, {ResetBranch: "-D"}, {Branch: "--force"}, {ResetBranch: "-m"}} {
		o.Git, o.CommitIsh = Git{Dir: primary}, "feature"
		_, err := m.WorktreeAdd(ctx, filepath.Join(parent, "wt"), o)
		if k, _ := Classify(err); k != KindUsage {
			t.Errorf("%+v: %v (kind %v), want a usage error", o, err, k)
		}
		if _, err := testgit.GitErr(primary, "rev-parse", "--verify", "-q", "refs/heads/feature"); err != nil {
			t.Fatalf("%+v: the branch feature is gone", o)
		}
		if _, err := os.Lstat(filepath.Join(parent, "wt")); err == nil {
			t.Fatalf("%+v: a worktree was made", o)
		}
	}
}

// WorktreeAdd and WorktreeRemove run git in Git.Dir (the working directory
// when it is ""); a Dir in another repository than the memory's is
// refused before git runs. A Memory of one repository removed, with
// --force, a worktree of the repository the program's working directory
// was in, and added worktrees and branches to it.
func TestWorktreeOpsStayInTheRepository(t *testing.T) {
	_, parent, m := newWorktreeRepo(t)
	ctx := context.Background()
	other := testgit.Repo(t, filepath.Join(parent, "other"))
	wt := filepath.Join(parent, "other-loop")
	testgit.Git(t, other, "worktree", "add", "-q", "-b", "loop", wt)
	if err := os.WriteFile(filepath.Join(wt, "work.txt"), []byte("uncommitted work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := m.WorktreeRemove(ctx, wt, WorktreeRemoveOptions{Git: Git{Dir: other}, Force: true})
	if k, _ := Classify(err); k != KindUsage {
		t.Errorf("remove another repository's worktree: %v (kind %v), want a usage error", err, k)
	}
	if _, err := os.Stat(filepath.Join(wt, "work.txt")); err != nil {
		t.Fatalf("the other repository's worktree is gone: %v", err)
	}
	_, err = m.WorktreeAdd(ctx, filepath.Join(parent, "new"), WorktreeAddOptions{Git: Git{Dir: other}, Branch: "new"})
	if k, _ := Classify(err); k != KindUsage {
		t.Errorf("add in another repository: %v (kind %v), want a usage error", err, k)
	}
	if out := testgit.Git(t, other, "branch", "--list", "new"); out != "" {
		t.Fatalf("a branch was made in the other repository: %s", out)
	}
}

// A worktree's copy folded into the memory on remove is deduplicated as Add
// deduplicates: content the memory already holds (here under another ID) is
// not stored twice. Without the memory's store (the worktree package built
// its own, with no state dir) it was.
func TestWorktreeRemoveFoldDedups(t *testing.T) {
	primary, parent, m := newWorktreeRepo(t)
	ctx := context.Background()
	if _, err := m.Add(ctx, Entry{Content: "shared entry", Title: "Shared"}); err != nil {
		t.Fatal(err)
	}
	archived, err := m.Add(ctx, Entry{Content: "archived entry"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.store.Archive(archived.ID); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(parent, "loop")
	if _, err := m.WorktreeAdd(ctx, wt, WorktreeAddOptions{Git: Git{Dir: primary}, Branch: "loop"}); err != nil {
		t.Fatal(err)
	}
	// The loop's tool replaced the link with a file of its own: the same
	// contents under other IDs, and one new entry.
	file := filepath.Join(wt, ".agent", "memories.md")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	copied := "# Memories\n\n" +
		"## Shared\n- Tags:\n- Date: 2026-01-02\n- ID: 0000000000aa\n- Content: Shared   ENTRY\n\n" +
		"## archived entry\n- Tags:\n- Date: 2026-01-02\n- ID: 0000000000bb\n- Content: archived entry\n\n" +
		"## Only in the loop\n- Tags:\n- Date: 2026-01-02\n- ID: 0000000000cc\n- Content: only in the loop\n"
	if err := os.WriteFile(file, []byte(copied), 0o644); err != nil {
		t.Fatal(err)
	}

	res, err := m.WorktreeRemove(ctx, wt, WorktreeRemoveOptions{Git: Git{Dir: primary}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Removed || res.Added != 1 || res.Backup == "" {
		t.Fatalf("WorktreeRemove = %+v, want 1 entry folded and the copy kept", res)
	}
	all, err := m.List(ctx, View{})
	if err != nil {
		t.Fatal(err)
	}
	var contents []string
	for _, e := range all {
		contents = append(contents, e.Content)
	}
	if strings.Join(contents, "|") != "shared entry|only in the loop" {
		t.Fatalf("memory after the fold: %q", contents)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the worktree is still there: %v", err)
	}
}

// The global layer has no worktrees.
func TestWorktreesGlobal(t *testing.T) {
	t.Setenv("MEMSYNC_GLOBAL_DIR", t.TempDir())
	m, err := Open("", Options{Global: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Worktrees(context.Background()); !errors.Is(err, ErrGlobalLayer) {
		t.Fatalf("Worktrees on the global layer: %v", err)
	}
}

// WorktreeDoctor reports a diverged copy and, with fix, shows its diff,
// folds its new entry into the memory and links it.
func TestWorktreeDoctorFix(t *testing.T) {
	primary, parent, m := newWorktreeRepo(t)
	ctx := context.Background()
	wt := filepath.Join(parent, "loop")
	testgit.Git(t, primary, "worktree", "add", "-q", "-b", "loop", wt)
	if err := os.MkdirAll(filepath.Join(wt, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	copied := "# Memories\n\n## Mine\n- Tags:\n- Date: 2026-01-02\n- ID: 0000000000cc\n- Content: only in the loop\n"
	if err := os.WriteFile(filepath.Join(wt, ".agent", "memories.md"), []byte(copied), 0o644); err != nil {
		t.Fatal(err)
	}
	found, err := m.WorktreeDoctor(ctx, DoctorOptions{})
	if err != nil || len(found) != 1 || found[0].State != "copy-diverged" || found[0].Fixed != nil || !*found[0].Fixable {
		t.Fatalf("WorktreeDoctor = %+v, %v", found, err)
	}
	fixed, err := m.WorktreeDoctor(ctx, DoctorOptions{Fix: true})
	if err != nil || len(fixed) != 1 {
		t.Fatalf("WorktreeDoctor(fix) = %+v, %v", fixed, err)
	}
	w := fixed[0]
	if w.Fixed == nil || !*w.Fixed || w.Added != 1 || !strings.Contains(w.Diff, "\n+- Content: only in the loop") {
		t.Fatalf("WorktreeDoctor(fix) = %+v", w)
	}
	if found, err := m.WorktreeDoctor(ctx, DoctorOptions{}); err != nil || len(found) != 0 {
		t.Fatalf("after the fix: %+v, %v", found, err)
	}
}
