package hooks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/lock"
	"github.com/memsync/memsync/worktree"
)

func testRepo(t *testing.T) *worktree.Repo {
	t.Helper()
	dir := testgit.Isolate(t)
	testgit.Git(t, dir, "init", "-q", ".")
	r, err := worktree.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type fileState struct {
	mode os.FileMode
	data []byte
	link string
}

func state(t *testing.T, path string) fileState {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	s := fileState{mode: fi.Mode()}
	if fi.Mode()&os.ModeSymlink != 0 {
		s.link, _ = os.Readlink(path)
		return s
	}
	s.data, _ = os.ReadFile(path)
	return s
}

// TestInstallUninstallRestoresExactly: a hook file with an unusual mode and
// a hook that is a symlink are chained, and come back exactly.
func TestInstallUninstallRestoresExactly(t *testing.T) {
	r := testRepo(t)
	dir := filepath.Join(r.CommonDir, "hooks")
	commit := filepath.Join(dir, "post-commit")
	if err := os.WriteFile(commit, []byte("#!/bin/sh\necho mine\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(commit, 0o701); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(t.TempDir(), "shared-hook")
	if err := os.WriteFile(shared, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	merge := filepath.Join(dir, "post-merge")
	if err := os.Symlink(shared, merge); err != nil {
		t.Fatal(err)
	}
	before := map[string]fileState{commit: state(t, commit), merge: state(t, merge)}

	got, hs, err := Install(r, "/usr/local/bin/memsync")
	if err != nil || got != dir || len(hs) != len(Names()) {
		t.Fatalf("Install: %s %v %v", got, hs, err)
	}
	for path, st := range before {
		if s := state(t, path+OrigSuffix); s.mode != st.mode || !bytes.Equal(s.data, st.data) || s.link != st.link {
			t.Fatalf("%s kept as %+v, was %+v", path, s, st)
		}
	}
	rep, err := Report(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range rep.Hooks {
		want := StateInstalled
		if h.Name == "post-commit" || h.Name == "post-merge" {
			want = StateChained
		}
		if h.State != want {
			t.Fatalf("%s is %s, want %s", h.Name, h.State, want)
		}
	}
	// Again: nothing changes.
	snap := state(t, commit)
	if _, hs, err := Install(r, "/usr/local/bin/memsync"); err != nil || hs[0].Action != "unchanged" {
		t.Fatalf("second install: %v %v", hs, err)
	}
	if s := state(t, commit); !bytes.Equal(s.data, snap.data) {
		t.Fatal("second install changed the script")
	}

	if _, _, err := Uninstall(r); err != nil {
		t.Fatal(err)
	}
	for path, st := range before {
		if s := state(t, path); s.mode != st.mode || !bytes.Equal(s.data, st.data) || s.link != st.link {
			t.Fatalf("%s restored as %+v, was %+v", path, s, st)
		}
		if _, err := os.Lstat(path + OrigSuffix); err == nil {
			t.Fatalf("%s left behind", path+OrigSuffix)
		}
	}
	for _, n := range []string{"post-rewrite", "post-checkout"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			t.Fatalf("%s not removed", n)
		}
	}
}

// TestScriptWithoutMemsync: with memsync gone, a hook prints one line,
// still runs the chained hook and keeps its exit status.
func TestScriptWithoutMemsync(t *testing.T) {
	r := testRepo(t)
	dir := filepath.Join(r.CommonDir, "hooks")
	if err := os.WriteFile(filepath.Join(dir, "post-checkout"), []byte("#!/bin/sh\necho chained \"$@\"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Install(r, "/nonexistent/memsync"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"post-commit": 0, "post-checkout": 3} {
		cmd := exec.Command(filepath.Join(dir, name), "a", "b", "1")
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Fatalf("%s exited %d, want %d", name, code, want)
		}
		if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "memsync not found") {
			t.Fatalf("%s stderr: %q", name, stderr.String())
		}
		if name == "post-checkout" && stdout.String() != "chained a b 1\n" {
			t.Fatalf("chained hook output %q", stdout.String())
		}
	}
}

// TestRunNeverFails: outside a repository, a warning; a branch switch, nothing;
// a lock that stays taken, a warning within the time bound.
func TestRunNeverFails(t *testing.T) {
	var out bytes.Buffer
	Run("post-commit", nil, Options{Dir: t.TempDir(), Stderr: &out})
	if !strings.HasPrefix(out.String(), "memsync: warning: post-commit hook: ") || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("outside a repository: %q", out.String())
	}

	r := testRepo(t)
	out.Reset()
	Run("post-checkout", []string{"1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222", "1"}, Options{Dir: r.WorkTree, Stderr: &out})
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
	Run("post-commit", nil, Options{Dir: r.WorkTree, Stderr: &out, LockTimeout: 700 * time.Millisecond, Timeout: 200 * time.Millisecond})
	if d := time.Since(start); d > 600*time.Millisecond {
		t.Fatalf("took %s", d)
	}
	time.Sleep(time.Second) // the abandoned handler's lock wait ends (a process would have exited)
	if !strings.Contains(out.String(), "gave up after 200ms") || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("time bound: %q", out.String())
	}
	out.Reset()
	Run("post-commit", nil, Options{Dir: r.WorkTree, Stderr: &out, LockTimeout: 50 * time.Millisecond})
	if !strings.Contains(out.String(), "snapshot skipped: ") || !strings.Contains(out.String(), "timed out") {
		t.Fatalf("lock timeout: %q", out.String())
	}
}

func TestDirHooksPath(t *testing.T) {
	r := testRepo(t)
	for _, c := range [][2]string{
		{"", filepath.Join(r.CommonDir, "hooks")},
		{".githooks", filepath.Join(r.WorkTree, ".githooks")},
		{"../elsewhere/x", filepath.Join(filepath.Dir(r.WorkTree), "elsewhere", "x")},
		{"/abs/olute/hooks/", "/abs/olute/hooks"},
	} {
		value, want := c[0], c[1]
		if value != "" {
			if out, err := exec.Command("git", "-C", r.WorkTree, "config", "core.hooksPath", value).CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
		}
		if got := Dir(r); got != want {
			t.Errorf("core.hooksPath %q: %s; want %s", value, got, want)
		}
	}
}

// TestDirReadsConfigFiles: Dir finds core.hooksPath in the global config
// ("~/" expanded) and in a linked worktree's config.worktree, without
// spawning git (git is off PATH).
func TestDirReadsConfigFiles(t *testing.T) {
	r := testRepo(t)
	home := os.Getenv("HOME")
	testgit.Git(t, r.WorkTree, "config", "--global", "core.hooksPath", "~/global-hooks")
	testgit.Git(t, r.WorkTree, "commit", "-q", "--allow-empty", "-m", "init")
	linkedTop := filepath.Join(filepath.Dir(r.WorkTree), "linked")
	testgit.Git(t, r.WorkTree, "worktree", "add", "-q", linkedTop)
	testgit.Git(t, r.WorkTree, "config", "extensions.worktreeConfig", "true")
	testgit.Git(t, linkedTop, "config", "--worktree", "core.hooksPath", "wt-hooks")
	linked, err := worktree.Discover(linkedTop)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	if got, want := Dir(r), filepath.Join(home, "global-hooks"); got != want {
		t.Errorf("global ~/ value: %s, want %s", got, want)
	}
	if got, want := Dir(linked), filepath.Join(linkedTop, "wt-hooks"); got != want {
		t.Errorf("linked worktree's config.worktree: %s, want %s", got, want)
	}
}

// TestPostCheckoutLinks: after `git worktree add` (old HEAD all zeros) the
// new worktree's memory is linked to the shared file, relative; in a
// repository without memory nothing is created.
func TestPostCheckoutLinks(t *testing.T) {
	r := testRepo(t)
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
	Run("post-checkout", zeros, Options{Dir: wt1, Stderr: &out})
	if _, err := os.Lstat(filepath.Join(wt1, ".agent")); err == nil || out.Len() > 0 {
		t.Fatalf("a repository without memory got a link (%q)", out.String())
	}

	if err := os.MkdirAll(r.Home, 0o755); err != nil {
		t.Fatal(err)
	}
	wt2 := filepath.Join(filepath.Dir(r.WorkTree), "deeper", "wt2")
	git("worktree", "add", "-q", wt2)
	Run("post-checkout", zeros, Options{Dir: wt2, Stderr: &out})
	link := filepath.Join(wt2, ".agent", "memories.md")
	dest, err := os.Readlink(link)
	if err != nil || out.Len() > 0 {
		t.Fatalf("no link: %v (%q)", err, out.String())
	}
	if want, _ := filepath.Rel(filepath.Join(wt2, ".agent"), r.MemoryFile()); dest != want || filepath.IsAbs(dest) {
		t.Fatalf("link to %s, want %s", dest, want)
	}
	// Again (a second checkout hook run): the link is left as it is.
	Run("post-checkout", zeros, Options{Dir: wt2, Stderr: &out})
	if d2, _ := os.Readlink(link); d2 != dest || out.Len() > 0 {
		t.Fatalf("second run changed the link or warned: %s %q", d2, out.String())
	}
}
