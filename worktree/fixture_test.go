package worktree

import (
	"os"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
)

// The repositories the tests of this package work in (as the tests of
// package gitrepo make them).

// discRepo creates a repository with one commit at path.
func discRepo(tb testing.TB, path string) string { return testgit.Repo(tb, path) }

func discMkdir(tb testing.TB, path string) string {
	tb.Helper()
	if err := os.MkdirAll(path, 0o777); err != nil {
		tb.Fatal(err)
	}
	return path
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

// wt returns the top of the named linked worktree.
func (f discFixture) wt(tb testing.TB, name string) string {
	tb.Helper()
	top, ok := f.linked[name]
	if !ok {
		tb.Fatalf("no linked worktree %q in the fixture", name)
	}
	return top
}
