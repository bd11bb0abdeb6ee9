// Package worktree manages the worktrees that share a repository's memory:
// it links each one's memory file to the memory home, inspects, lists,
// repairs and removes them, folds a copy that diverged, and keeps the
// memory files out of git status. Discover finds the repository and its
// memory home (Repo).
package worktree

import "github.com/memsync/memsync/internal/gitrepo"

// Repo is a git repository as Discover found it, with where its memory
// lives: the memory home, the layout, the primary and current worktrees.
// Every operation of this package takes one.
type Repo = gitrepo.Repo

// Layout is where a worktree keeps the memory file.
type Layout = gitrepo.Layout

// The layouts, and the git config keys that choose where the memory lives.
const (
	// LayoutAgent is memsync's own: <worktree>/.agent/memories.md.
	LayoutAgent = gitrepo.LayoutAgent
	// LayoutRalph is ralph-orchestrator's (v2.3.0 on):
	// <worktree>/.ralph/agent/memories.md.
	LayoutRalph = gitrepo.LayoutRalph
	// LayoutKey chooses the layout (agent or ralph); unset, Discover works
	// it out from the primary worktree.
	LayoutKey = gitrepo.LayoutKey
	// HomeKey says where the memory lives: "gitdir" (<common git
	// dir>/memsync, the default) or "worktree" (the primary worktree's
	// file, which branches track). memsync pins it the first time it writes.
	HomeKey = gitrepo.HomeKey
)

// ErrNotRepo is returned (wrapped, so use errors.Is) when no git repository
// can be found for a directory.
var ErrNotRepo = gitrepo.ErrNotRepo

// Discover finds the git repository containing dir ("" means the current
// directory) and its memory home, without running git, the way git does
// (GIT_DIR, GIT_COMMON_DIR, GIT_WORK_TREE, GIT_CEILING_DIRECTORIES); see
// gitrepo.Discover. When no repository is found the error wraps ErrNotRepo.
func Discover(dir string) (*Repo, error) { return gitrepo.Discover(dir) }

// ParseLayout checks a layout's name.
func ParseLayout(s string) (Layout, error) { return gitrepo.ParseLayout(s) }

// ExcludePatterns returns the patterns that keep the memory files out of git
// status in every worktree of the .agent/ layout (a fresh slice each call);
// Repo.Excludes gives those of a repository's layout. They go into the
// common info/exclude (see EnsureExclude), anchored at each worktree's top.
func ExcludePatterns() []string { return gitrepo.ExcludePatterns() }
