package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
)

// discRepo creates a repository with one commit at path.
func discRepo(tb testing.TB, path string) string { return testgit.Repo(tb, path) }

func discMkdir(tb testing.TB, path string) string {
	tb.Helper()
	if err := os.MkdirAll(path, 0o777); err != nil {
		tb.Fatal(err)
	}
	return path
}

func discResolve(tb testing.TB, p string) string {
	tb.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// gitView is what git itself says about a directory.
type gitView struct {
	gitDir, commonDir, top string
	primary                string // first entry of git worktree list
	bare                   bool   // that entry is marked bare
}

func discAskGit(tb testing.TB, dir string) gitView {
	tb.Helper()
	lines := strings.Split(testgit.Git(tb, dir, "rev-parse", "--path-format=absolute",
		"--git-dir", "--git-common-dir", "--is-inside-work-tree"), "\n")
	if len(lines) != 3 {
		tb.Fatalf("unexpected rev-parse output %q", lines)
	}
	v := gitView{gitDir: discResolve(tb, lines[0]), commonDir: discResolve(tb, lines[1])}
	if lines[2] == "true" {
		v.top = discResolve(tb, testgit.Git(tb, dir, "rev-parse", "--show-toplevel"))
	}
	list := testgit.Git(tb, dir, "worktree", "list", "--porcelain")
	first, _, _ := strings.Cut(list, "\n\n")
	for _, l := range strings.Split(first, "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok {
			v.primary = discResolve(tb, p)
		}
		if l == "bare" {
			v.bare = true
		}
	}
	return v
}

// discCheck compares r with want, field by field.
func discCheck(tb testing.TB, r *Repo, want Repo) {
	tb.Helper()
	if want.Layout == "" { // the layout has tests of its own (layout_test.go)
		want.Layout, want.LayoutWhy = r.Layout, r.LayoutWhy
	}
	if *r != want {
		tb.Errorf("Discover mismatch:\n got  %+v\n want %+v", *r, want)
	}
	if r.MemoryFile() != filepath.Join(want.Home, "memories.md") {
		tb.Errorf("MemoryFile = %s", r.MemoryFile())
	}
	if r.ArchiveFile() != filepath.Join(want.Home, "archive", "memories.md") {
		tb.Errorf("ArchiveFile = %s", r.ArchiveFile())
	}
}

// discAgree checks r against git's own view of dir: rev-parse, and the
// first entry of git worktree list.
func discAgree(tb testing.TB, r *Repo, dir string) {
	tb.Helper()
	v := discAgreeRevParse(tb, r, dir)
	if r.Bare != v.bare {
		tb.Errorf("%s: Bare = %v, git worktree list says bare=%v", dir, r.Bare, v.bare)
	}
	if !v.bare && r.Primary != v.primary {
		tb.Errorf("%s: Primary = %s, git worktree list says %s", dir, r.Primary, v.primary)
	}
}

// discAgreeRevParse checks r against git rev-parse only, for layouts where
// git worktree list misreports the main worktree.
func discAgreeRevParse(tb testing.TB, r *Repo, dir string) gitView {
	tb.Helper()
	v := discAskGit(tb, dir)
	if r.GitDir != v.gitDir {
		tb.Errorf("%s: GitDir = %s, git says %s", dir, r.GitDir, v.gitDir)
	}
	if r.CommonDir != v.commonDir {
		tb.Errorf("%s: CommonDir = %s, git says %s", dir, r.CommonDir, v.commonDir)
	}
	if r.WorkTree != v.top {
		tb.Errorf("%s: WorkTree = %q, git says %q", dir, r.WorkTree, v.top)
	}
	return v
}

func discMust(tb testing.TB, dir string) *Repo {
	tb.Helper()
	r, err := Discover(dir)
	if err != nil {
		tb.Fatalf("Discover(%s): %v", dir, err)
	}
	return r
}

// discFixture is a primary repository with a few linked worktrees.
type discFixture struct {
	root, primary string
	linked        map[string]string // worktree name (as in .git/worktrees) -> top
}

func newDiscFixture(tb testing.TB) discFixture {
	tb.Helper()
	w := testgit.NewWorktrees(tb)
	return discFixture{root: w.Root, primary: w.Primary, linked: w.Linked}
}

func (f discFixture) primaryRepo() Repo {
	git := filepath.Join(f.primary, ".git")
	return Repo{GitDir: git, CommonDir: git, WorkTree: f.primary, Primary: f.primary, Home: filepath.Join(git, "memsync")}
}

func (f discFixture) linkedRepo(name string) Repo {
	r := f.primaryRepo()
	r.GitDir = filepath.Join(r.CommonDir, "worktrees", name)
	r.WorkTree = f.linked[name]
	return r
}

func TestDiscoverPrimary(t *testing.T) {
	f := newDiscFixture(t)
	for _, dir := range []string{f.primary, filepath.Join(f.primary, "a"), filepath.Join(f.primary, "a", "b"), filepath.Join(f.primary, "trees")} {
		r := discMust(t, dir)
		discCheck(t, r, f.primaryRepo())
		discAgree(t, r, dir)
		if r.IsSecondary() {
			t.Errorf("%s: IsSecondary = true in the primary", dir)
		}
	}
}

func TestDiscoverLinkedWorktree(t *testing.T) {
	f := newDiscFixture(t)
	primary := discMust(t, f.primary)
	for name, top := range f.linked {
		for _, dir := range []string{top, filepath.Join(top, "a"), filepath.Join(top, "a", "b")} {
			r := discMust(t, dir)
			discCheck(t, r, f.linkedRepo(name))
			discAgree(t, r, dir)
			if !r.IsSecondary() {
				t.Errorf("%s: IsSecondary = false in a linked worktree", dir)
			}
			if r.CommonDir != primary.CommonDir || r.Primary != primary.Primary || r.Home != primary.Home || r.MemoryFile() != primary.MemoryFile() {
				t.Errorf("%s: shared fields differ from the primary's:\n %+v\n %+v", dir, *r, *primary)
			}
		}
	}
}

func TestDiscoverInsideGitDir(t *testing.T) {
	f := newDiscFixture(t)
	common := filepath.Join(f.primary, ".git")
	for _, tc := range []struct{ dir, gitDir string }{
		{common, common},
		{filepath.Join(common, "objects"), common},
		{filepath.Join(common, "refs", "heads"), common},
		{filepath.Join(common, "worktrees"), common},
		{filepath.Join(common, "worktrees", "wt1"), filepath.Join(common, "worktrees", "wt1")},
		{filepath.Join(common, "worktrees", "wt1", "logs"), filepath.Join(common, "worktrees", "wt1")},
	} {
		r := discMust(t, tc.dir)
		want := f.primaryRepo()
		want.GitDir, want.WorkTree = tc.gitDir, ""
		discCheck(t, r, want)
		discAgree(t, r, tc.dir)
		if r.IsSecondary() {
			t.Errorf("%s: IsSecondary = true inside the git dir", tc.dir)
		}
	}
}

func TestDiscoverGitDirEnv(t *testing.T) {
	f := newDiscFixture(t)
	wt1 := f.linked["wt1"]
	linkedGitDir := filepath.Join(f.primary, ".git", "worktrees", "wt1")

	t.Run("relative in primary", func(t *testing.T) {
		// Like a hook: cwd is the worktree top and GIT_DIR=.git.
		t.Chdir(f.primary)
		t.Setenv("GIT_DIR", ".git")
		r := discMust(t, "")
		discCheck(t, r, f.primaryRepo())
		discAgree(t, r, f.primary)
		// A subfolder (git itself would call the cwd the top).
		r = discMust(t, filepath.Join(f.primary, "a"))
		discCheck(t, r, f.primaryRepo())
	})
	t.Run("no upward search", func(t *testing.T) {
		t.Setenv("GIT_DIR", filepath.Join(f.primary, ".git"))
		r := discMust(t, filepath.Join(wt1, "a"))
		if r.GitDir != filepath.Join(f.primary, ".git") || r.CommonDir != r.GitDir {
			t.Errorf("GIT_DIR ignored: %+v", *r)
		}
	})
	t.Run("relative in linked worktree", func(t *testing.T) {
		t.Chdir(wt1)
		t.Setenv("GIT_DIR", "../proj/.git/worktrees/wt1")
		r := discMust(t, "")
		discCheck(t, r, f.linkedRepo("wt1"))
		discAgree(t, r, wt1)
	})
	t.Run("absolute linked gitdir", func(t *testing.T) {
		t.Chdir(wt1)
		t.Setenv("GIT_DIR", linkedGitDir)
		r := discMust(t, "")
		discCheck(t, r, f.linkedRepo("wt1"))
		discAgree(t, r, wt1)
		// From a subfolder git would take the cwd as the top; Discover
		// prefers the worktree the git dir belongs to.
		r = discMust(t, filepath.Join(wt1, "a"))
		discCheck(t, r, f.linkedRepo("wt1"))
	})
	t.Run("gitfile", func(t *testing.T) {
		t.Chdir(wt1)
		t.Setenv("GIT_DIR", filepath.Join(wt1, ".git"))
		r := discMust(t, "")
		discCheck(t, r, f.linkedRepo("wt1"))
		discAgree(t, r, wt1)
	})
	t.Run("with GIT_WORK_TREE and GIT_COMMON_DIR", func(t *testing.T) {
		t.Chdir(filepath.Join(wt1, "a"))
		t.Setenv("GIT_DIR", linkedGitDir)
		t.Setenv("GIT_COMMON_DIR", filepath.Join(f.primary, ".git"))
		t.Setenv("GIT_WORK_TREE", "..")
		r := discMust(t, "")
		discCheck(t, r, f.linkedRepo("wt1"))
		discAgree(t, r, ".")
	})
	t.Run("not a git dir", func(t *testing.T) {
		t.Chdir(f.primary)
		t.Setenv("GIT_DIR", "a")
		if _, err := Discover(""); !errors.Is(err, ErrNotRepo) {
			t.Errorf("Discover with GIT_DIR=a: err = %v, want ErrNotRepo", err)
		}
	})
}

func TestDiscoverBare(t *testing.T) {
	root := testgit.Isolate(t)
	src := discRepo(t, filepath.Join(root, "src"))
	bare := filepath.Join(root, "repo.git")
	testgit.Git(t, root, "clone", "-q", "--bare", src, bare)
	testgit.Git(t, bare, "worktree", "add", "-q", "../wt1")
	testgit.Git(t, bare, "worktree", "add", "-q", "-b", "other", "../wt2")
	wt1 := filepath.Join(root, "wt1")
	discMkdir(t, filepath.Join(wt1, "sub"))

	check := func(t *testing.T, agree func(testing.TB, *Repo, string)) {
		t.Helper()
		home := filepath.Join(bare, "memsync")
		for _, dir := range []string{wt1, filepath.Join(wt1, "sub")} {
			r := discMust(t, dir)
			discCheck(t, r, Repo{GitDir: filepath.Join(bare, "worktrees", "wt1"), CommonDir: bare, WorkTree: wt1, Bare: true, Home: home})
			agree(t, r, dir)
			if !r.IsSecondary() {
				t.Errorf("%s: IsSecondary = false", dir)
			}
		}
		wt2 := filepath.Join(root, "wt2")
		discCheck(t, discMust(t, wt2), Repo{GitDir: filepath.Join(bare, "worktrees", "wt2"), CommonDir: bare, WorkTree: wt2, Bare: true, Home: home})
		for _, dir := range []string{bare, filepath.Join(bare, "refs")} {
			r := discMust(t, dir)
			discCheck(t, r, Repo{GitDir: bare, CommonDir: bare, Bare: true, Home: home})
			discAgree(t, r, dir)
			if r.IsSecondary() {
				t.Errorf("%s: IsSecondary = true in the bare repository", dir)
			}
		}
	}
	t.Run("plain", func(t *testing.T) { check(t, discAgree) })
	t.Run("worktreeConfig", func(t *testing.T) {
		// git-worktree(1): with extensions.worktreeConfig, core.bare belongs
		// in the bare repository's config.worktree.
		testgit.Git(t, bare, "config", "extensions.worktreeConfig", "true")
		testgit.Git(t, bare, "config", "--unset", "core.bare")
		testgit.Git(t, bare, "config", "--worktree", "core.bare", "true")
		testgit.Git(t, wt1, "config", "--worktree", "some.key", "x")
		// From wt1, git worktree list now calls the bare repository a
		// non-bare main worktree (it looks for core.bare in wt1's own
		// config.worktree), so only rev-parse is compared.
		check(t, func(tb testing.TB, r *Repo, dir string) { discAgreeRevParse(tb, r, dir) })
	})
}

// The popular "bare repo in .bare, .git file next to the worktrees" layout.
func TestDiscoverDotBareLayout(t *testing.T) {
	root := testgit.Isolate(t)
	src := discRepo(t, filepath.Join(root, "src"))
	proj := discMkdir(t, filepath.Join(root, "proj"))
	testgit.Git(t, proj, "clone", "-q", "--bare", src, ".bare")
	if err := os.WriteFile(filepath.Join(proj, ".git"), []byte("gitdir: ./.bare\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, proj, "worktree", "add", "-q", "main")
	bare := filepath.Join(proj, ".bare")
	home := filepath.Join(bare, "memsync")

	r := discMust(t, proj)
	discCheck(t, r, Repo{GitDir: bare, CommonDir: bare, Bare: true, Home: home})
	discAgree(t, r, proj)

	main := filepath.Join(proj, "main")
	r = discMust(t, main)
	discCheck(t, r, Repo{GitDir: filepath.Join(bare, "worktrees", "main"), CommonDir: bare, WorkTree: main, Bare: true, Home: home})
	discAgree(t, r, main)
}

func TestDiscoverWorktreeConfig(t *testing.T) {
	f := newDiscFixture(t)
	testgit.Git(t, f.primary, "config", "extensions.worktreeConfig", "true")
	testgit.Git(t, f.primary, "config", "--worktree", "some.key", "x")
	testgit.Git(t, f.linked["wt1"], "config", "--worktree", "some.key", "y")
	// The primary's per-worktree config lives in the common dir.
	if _, err := os.Stat(filepath.Join(f.primary, ".git", "config.worktree")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.primary, ".git", "worktrees", "wt1", "config.worktree")); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{f.primary, filepath.Join(f.primary, "a")} {
		r := discMust(t, dir)
		discCheck(t, r, f.primaryRepo())
		discAgree(t, r, dir)
	}
	for _, dir := range []string{f.linked["wt1"], filepath.Join(f.linked["wt1"], "a", "b")} {
		r := discMust(t, dir)
		discCheck(t, r, f.linkedRepo("wt1"))
		discAgree(t, r, dir)
	}

	// core.bare=false moved to the primary's config.worktree still reads
	// as a non-bare repository.
	testgit.Git(t, f.primary, "config", "--unset", "core.bare")
	testgit.Git(t, f.primary, "config", "--worktree", "core.bare", "false")
	discCheck(t, discMust(t, f.linked["wt1"]), f.linkedRepo("wt1"))
}

func TestDiscoverOutsideRepo(t *testing.T) {
	root := testgit.Isolate(t)
	dir := discMkdir(t, filepath.Join(root, "plain", "sub"))
	// Keep both git and Discover from looking above root, in case the
	// temp dir itself lies inside some repository.
	t.Setenv("GIT_CEILING_DIRECTORIES", root)
	if _, err := testgit.GitErr(dir, "rev-parse", "--git-dir"); err == nil {
		t.Fatal("git finds a repository in a fresh temp dir")
	}
	_, err := Discover(dir)
	if !errors.Is(err, ErrNotRepo) {
		t.Fatalf("Discover(%s): err = %v, want ErrNotRepo", dir, err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q does not name %s", err, dir)
	}

	// The ceiling itself is not searched, so a repository at root is
	// invisible from below it, exactly as for git.
	discRepo(t, root)
	if _, err := testgit.GitErr(dir, "rev-parse", "--git-dir"); err == nil {
		t.Error("git looked past GIT_CEILING_DIRECTORIES")
	}
	if _, err := Discover(dir); !errors.Is(err, ErrNotRepo) {
		t.Errorf("Discover looked past GIT_CEILING_DIRECTORIES: err = %v", err)
	}
	// ...but the start directory is always searched, even when it is the
	// ceiling.
	if r := discMust(t, root); r.WorkTree != root {
		t.Errorf("WorkTree = %s, want %s", r.WorkTree, root)
	} else {
		discAgree(t, r, root)
	}

	if _, err := Discover(filepath.Join(root, "missing")); err == nil || errors.Is(err, ErrNotRepo) {
		t.Errorf("Discover(missing dir): err = %v, want a not-exist error", err)
	}
}

func TestDiscoverBrokenGitFile(t *testing.T) {
	f := newDiscFixture(t)
	wt1 := f.linked["wt1"]
	if err := os.RemoveAll(filepath.Join(f.primary, ".git", "worktrees", "wt1")); err != nil {
		t.Fatal(err)
	}
	if _, err := Discover(wt1); !errors.Is(err, ErrNotRepo) {
		t.Errorf("Discover in a pruned worktree: err = %v, want ErrNotRepo", err)
	}
	if err := os.WriteFile(filepath.Join(wt1, ".git"), []byte("garbage\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := Discover(wt1); !errors.Is(err, ErrNotRepo) {
		t.Errorf("Discover with a garbage .git file: err = %v, want ErrNotRepo", err)
	}
}

func TestDiscoverThroughSymlink(t *testing.T) {
	root := testgit.Isolate(t)
	real := discMkdir(t, filepath.Join(root, "real"))
	proj := discRepo(t, filepath.Join(real, "proj"))
	discMkdir(t, filepath.Join(proj, "sub"))
	testgit.Git(t, proj, "worktree", "add", "-q", "../wt1")
	link := filepath.Join(root, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	primary := Repo{GitDir: filepath.Join(proj, ".git"), CommonDir: filepath.Join(proj, ".git"), WorkTree: proj, Primary: proj, Home: filepath.Join(proj, ".git", "memsync")}
	for _, dir := range []string{filepath.Join(link, "proj"), filepath.Join(link, "proj", "sub")} {
		r := discMust(t, dir)
		discCheck(t, r, primary)
		discAgree(t, r, dir)
	}
	wt := filepath.Join(real, "wt1")
	r := discMust(t, filepath.Join(link, "wt1"))
	linked := primary
	linked.GitDir, linked.WorkTree = filepath.Join(proj, ".git", "worktrees", "wt1"), wt
	discCheck(t, r, linked)
	if !r.IsSecondary() {
		t.Error("IsSecondary = false through a symlink")
	}

	// A relative dir, and "" for the working directory, reached through
	// the symlink too.
	t.Chdir(filepath.Join(link, "proj"))
	discCheck(t, discMust(t, "sub"), primary)
	discCheck(t, discMust(t, ""), primary)
}

func TestDiscoverSubmodule(t *testing.T) {
	root := testgit.Isolate(t)
	lib := discRepo(t, filepath.Join(root, "lib"))
	super := discRepo(t, filepath.Join(root, "super"))
	testgit.Git(t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	sub := filepath.Join(super, "lib")
	gitDir := filepath.Join(super, ".git", "modules", "lib")
	r := discMust(t, sub)
	discCheck(t, r, Repo{GitDir: gitDir, CommonDir: gitDir, WorkTree: sub, Primary: sub, Home: filepath.Join(gitDir, "memsync")})
	// git worktree list ignores core.worktree and names the git dir as the
	// main worktree, so only rev-parse is compared.
	discAgreeRevParse(t, r, sub)
}

// git init --separate-git-dir: git records nowhere where the primary worktree
// is. Found from the primary, it is the folder whose .git file leads to the
// git dir; a linked worktree learns it from memsync.primary (worktree.Pin
// records it), believed only while that folder's .git leads to the git dir;
// until then the repository counts as bare there.
func TestDiscoverSeparateGitDir(t *testing.T) {
	root := testgit.Isolate(t)
	gitDir := filepath.Join(root, "store.git")
	wt := discMkdir(t, filepath.Join(root, "wt"))
	testgit.Git(t, wt, "init", "-q", "-b", "main", "--separate-git-dir", gitDir)
	testgit.Git(t, wt, "commit", "-q", "--allow-empty", "-m", "init")
	testgit.Git(t, wt, "worktree", "add", "-q", "../wt2")
	home := filepath.Join(gitDir, "memsync")
	wt2 := filepath.Join(root, "wt2")
	wt2Dir := filepath.Join(gitDir, "worktrees", "wt2")

	r := discMust(t, wt)
	discCheck(t, r, Repo{GitDir: gitDir, CommonDir: gitDir, WorkTree: wt, Primary: wt, Home: home, record: true})
	discCheck(t, discMust(t, wt2), Repo{GitDir: wt2Dir, CommonDir: gitDir, WorkTree: wt2, Bare: true, Home: home})

	testgit.Git(t, wt, "config", PrimaryKey, wt)
	r = discMust(t, wt2)
	discCheck(t, r, Repo{GitDir: wt2Dir, CommonDir: gitDir, WorkTree: wt2, Primary: wt, Home: home, record: true})
	if !r.IsSecondary() {
		t.Error("IsSecondary = false in the linked worktree")
	}

	// A record naming a folder whose .git leads elsewhere (another
	// repository, the linked worktree) or nowhere is not believed.
	other := discRepo(t, filepath.Join(root, "other"))
	for _, p := range []string{other, wt2, filepath.Join(root, "gone"), "relative/path"} {
		testgit.Git(t, wt, "config", PrimaryKey, p)
		discCheck(t, discMust(t, wt2), Repo{GitDir: wt2Dir, CommonDir: gitDir, WorkTree: wt2, Bare: true, Home: home})
	}
}

// git clone --separate-git-dir makes the same layout as git init's.
func TestDiscoverCloneSeparateGitDir(t *testing.T) {
	root := testgit.Isolate(t)
	src := discRepo(t, filepath.Join(root, "src"))
	gitDir := filepath.Join(root, "clone.git")
	wt := filepath.Join(root, "clone")
	testgit.Git(t, root, "clone", "-q", "--separate-git-dir", gitDir, src, wt)
	discCheck(t, discMust(t, wt), Repo{GitDir: gitDir, CommonDir: gitDir, WorkTree: wt, Primary: wt, Home: filepath.Join(gitDir, "memsync"), record: true})
}

func TestResolve(t *testing.T) {
	root := testgit.Isolate(t)
	real := discMkdir(t, filepath.Join(root, "real", "x", "y"))
	if err := os.Symlink(filepath.Join(root, "real", "x"), filepath.Join(root, "link")); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	for _, known := range [][]string{nil, {real}, {root}} {
		d := &discovery{known: known}
		for in, want := range map[string]string{
			root + "/link/y":              real,
			root + "/link/y/":             real,
			root + "/link/../x/y":         real, // ".." after a symlink is physical
			root + "/./real/x/../x/y/.":   real,
			root + "/real/x/y/../../..":   root,
			root + "/link/missing/../a":   filepath.Join(root, "real", "x", "a"),
			root + "/real/missing/../z/w": filepath.Join(root, "real", "z", "w"),
		} {
			if got := d.resolve(in); got != want {
				t.Errorf("known %q: resolve(%s) = %s, want %s", known, in, got, want)
			}
		}
	}
}

func BenchmarkDiscover(b *testing.B) {
	root := testgit.Isolate(b)
	proj := discRepo(b, filepath.Join(root, "proj"))
	testgit.Git(b, proj, "worktree", "add", "-q", "../wt1")
	dir := discMkdir(b, filepath.Join(root, "wt1", "a", "b", "c"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Discover(dir); err != nil {
			b.Fatal(err)
		}
	}
}
