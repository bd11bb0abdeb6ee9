package memsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/memsync/memsync/worktree"
)

// ErrGlobalLayer is what a repository operation (the worktree operations,
// init's merge driver) returns on the global layer.
var ErrGlobalLayer = errors.New("the global layer has no repository")

// Git is where the git a worktree operation spawns runs, and where its output
// goes.
type Git struct {
	// Dir is where git runs and what relative paths are relative to; "" is
	// the working directory.
	Dir string
	// Stdout and Stderr receive git's output; nil discards it, but for its
	// standard error, which a failing git's error (a *worktree.GitError,
	// carrying git's exit status) then holds.
	Stdout, Stderr io.Writer
}

// WorktreeAddOptions are the arguments of `git worktree add` that memsync
// passes on.
type WorktreeAddOptions struct {
	Git
	CommitIsh   string // what to check out ("" for git's default)
	Branch      string // -b: a new branch
	ResetBranch string // -B: a new branch, or reset an existing one
	Detach      bool   // --detach
	Force       bool   // --force
	Quiet       bool   // --quiet
}

// args are git's arguments after "worktree add" for path.
func (o *WorktreeAddOptions) args(path string) []string {
	var args []string
	if o.Branch != "" {
		args = append(args, "-b", o.Branch)
	}
	if o.ResetBranch != "" {
		args = append(args, "-B", o.ResetBranch)
	}
	for _, f := range []struct {
		on   bool
		flag string
	}{{o.Detach, "--detach"}, {o.Force, "--force"}, {o.Quiet, "--quiet"}} {
		if f.on {
			args = append(args, f.flag)
		}
	}
	args = append(args, "--", path)
	if o.CommitIsh != "" {
		args = append(args, o.CommitIsh)
	}
	return args
}

// WorktreeRemoveOptions set up WorktreeRemove.
type WorktreeRemoveOptions struct {
	Git
	Force bool // --force: remove a worktree with changes git would keep
}

// WorktreeLinkResult is what WorktreeAdd and WorktreeLink did (the JSON of
// `memsync worktree add|link --json`).
type WorktreeLinkResult struct {
	Path    string `json:"path"`    // the worktree, as the caller named it
	State   string `json:"state"`   // primary, linked or copy
	Was     string `json:"was"`     // the state before
	Changed bool   `json:"changed"` // something on disk changed
	Added   int    `json:"added"`   // entries folded from a diverged copy into the memory
	Backup  string `json:"backup,omitempty"`
	Message string `json:"message"`
}

func linkResult(path string, res worktree.LinkResult) WorktreeLinkResult {
	return WorktreeLinkResult{Path: path, State: string(res.State), Was: string(res.Was), Changed: res.Changed,
		Added: res.Added, Backup: res.Backup, Message: res.Message}
}

// Worktree is one worktree of the repository and the state of its memory
// (the JSON of `memsync worktree list|doctor --json`); the fields after
// Detail are WorktreeDoctor's.
type Worktree struct {
	Path     string `json:"path"`
	Branch   string `json:"branch"`
	Head     string `json:"head"`
	Locked   bool   `json:"locked"`
	Prunable bool   `json:"prunable"`
	// State is the memory's state there: primary, linked, missing,
	// broken, wrong-target, copy-identical, copy-diverged, unsafe,
	// prunable, copy, lock-unshared or typechange (docs/commands.md: worktree list).
	State   string `json:"state"`
	File    string `json:"file"` // <worktree>/.agent/memories.md
	Link    string `json:"link,omitempty"`
	Target  string `json:"target,omitempty"`
	Tracked bool   `json:"tracked"`
	Detail  string `json:"detail"`
	// Fix is what repairs the worktree's memory, for people.
	Fix string `json:"fix,omitempty"`
	// Fixed is set when a repair was tried: whether it worked.
	Fixed *bool `json:"fixed,omitempty"`
	// Diff is how a diverged copy differed from the memory before its repair.
	Diff string `json:"diff,omitempty"`
	// Result is what the repair did; Backup and Added as in WorktreeLinkResult.
	Result  string `json:"result,omitempty"`
	Fixable *bool  `json:"fixable,omitempty"` // a repair can fix it
	Backup  string `json:"backup,omitempty"`
	Added   int    `json:"added,omitempty"`
}

func worktreeOf(w worktree.Worktree) Worktree {
	st := w.Status
	return Worktree{Path: w.Path, Branch: w.Branch, Head: w.Head, Locked: w.Locked, Prunable: w.Prunable,
		State: string(st.State), File: st.Path, Link: st.Link, Target: st.Target, Tracked: st.Tracked, Detail: st.Detail}
}

// WorktreeRemoval is what WorktreeRemove did (the JSON of `memsync worktree
// remove --json`).
type WorktreeRemoval struct {
	Path    string `json:"path"`
	Removed bool   `json:"removed"`
	Added   int    `json:"added"` // entries folded from the worktree's copy into the memory
	Backup  string `json:"backup,omitempty"`
}

// repoFor is the repository of a repository operation.
func (m *Memory) repoFor(ctx context.Context) (*worktree.Repo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if m.repo == nil {
		return nil, ErrGlobalLayer
	}
	return m.repo, nil
}

// WorktreeAdd runs the user's `git worktree add` (with its hooks and
// filters) for path, then links the new worktree's memory (WorktreeLink).
// When git fails the error is a *worktree.GitError carrying git's exit
// status. A new worktree whose branch tracks the memory file is linked
// too: its copy folded in, the link set skip-worktree. A branch name that
// starts with "-" is a ConfigError (git would take it for an option), and
// so is an o.Dir (git runs there) outside the memory's repository.
func (m *Memory) WorktreeAdd(ctx context.Context, path string, o WorktreeAddOptions) (WorktreeLinkResult, error) {
	for _, b := range []string{o.Branch, o.ResetBranch} {
		if strings.HasPrefix(b, "-") { // git worktree add hands it to git branch as an option
			return WorktreeLinkResult{}, &ConfigError{fmt.Errorf("a branch name cannot start with '-': %q", b)}
		}
	}
	r, err := m.repoFor(ctx)
	if err != nil {
		return WorktreeLinkResult{}, err
	}
	if err := runsHere(r, o.Dir); err != nil {
		return WorktreeLinkResult{}, err
	}
	if err := m.beforeWrite(); err != nil {
		return WorktreeLinkResult{}, err
	}
	res, err := worktree.Add(ctx, r, m.st(ctx), o.Dir, path, o.args(path), o.Stdout, o.Stderr)
	if errors.As(err, new(*worktree.GitError)) && m.isWorktree(ctx, worktree.AbsIn(o.Dir, path)) {
		err = &WorktreeExistsError{Path: path, Err: err}
	}
	return linkResult(path, res), err
}

// WorktreeExistsError is WorktreeAdd's error when git refused a path that
// is a worktree of the repository already: an interrupted add (killed after
// git made the worktree) leaves it so, not linked; WorktreeLink links it.
// It wraps git's error (a *worktree.GitError).
type WorktreeExistsError struct {
	Path string // as the caller named it
	Err  error
}

func (e *WorktreeExistsError) Error() string { return e.Err.Error() }
func (e *WorktreeExistsError) Unwrap() error { return e.Err }

// runsHere refuses a Git.Dir ("" the working directory) that is not in
// the memory's repository r: git worktree would add to, or remove from,
// another repository than the one whose memory it links or folds.
func runsHere(r *worktree.Repo, dir string) error {
	d, err := worktree.Discover(dir)
	if err != nil {
		return &ConfigError{fmt.Errorf("git runs in %q, which is in no git repository (the memory's is %s): %w", dir, r.CommonDir, err)}
	}
	if d.CommonDir != r.CommonDir {
		return &ConfigError{fmt.Errorf("git runs in %q, which is in another repository (%s) than the memory's (%s)", dir, d.CommonDir, r.CommonDir)}
	}
	return nil
}

// isWorktree tells whether abs is a worktree of the repository.
func (m *Memory) isWorktree(ctx context.Context, abs string) bool {
	abs, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false
	}
	list, err := m.Worktrees(ctx)
	if err != nil {
		return false
	}
	for _, w := range list {
		if p, err := filepath.EvalSymlinks(w.Path); err == nil && p == abs {
			return true
		}
	}
	return false
}

// WorktreeLink makes the worktree that contains path share the memory:
// its .agent/memories.md becomes a relative symlink to the memory's file (a
// copy where symlinks are impossible); a diverged copy is folded into the
// memory first, with the memory's dedup. Idempotent. A relative path is
// relative to the working directory. See worktree.Link.
func (m *Memory) WorktreeLink(ctx context.Context, path string) (WorktreeLinkResult, error) {
	r, err := m.repoFor(ctx)
	if err != nil {
		return WorktreeLinkResult{}, err
	}
	if err := m.beforeWrite(); err != nil {
		return WorktreeLinkResult{}, err
	}
	res, err := worktree.Link(r, m.st(ctx), worktree.AbsIn("", path))
	return linkResult(path, res), err
}

// Worktrees lists the worktrees of the repository and the state of their
// memory.
func (m *Memory) Worktrees(ctx context.Context) ([]Worktree, error) {
	r, err := m.repoFor(ctx)
	if err != nil {
		return nil, err
	}
	list, err := worktree.List(ctx, r, m.st(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]Worktree, 0, len(list))
	for _, w := range list {
		out = append(out, worktreeOf(w))
	}
	return out, nil
}

// WorktreeDoctor returns every worktree whose memory is not shared as it
// should be, with the fix. With o.Fix it repairs what it can (a diverged
// copy is folded into the memory, its Diff kept, then linked; a vanished
// worktree is pruned); a repair that fails is warned of (Options.Warn) and
// leaves Fixed false.
func (m *Memory) WorktreeDoctor(ctx context.Context, o DoctorOptions) ([]Worktree, error) {
	fix := o.Fix
	r, err := m.repoFor(ctx)
	if err != nil {
		return nil, err
	}
	if fix {
		if err := m.beforeWrite(); err != nil {
			return nil, err
		}
	}
	findings, err := worktree.Doctor(ctx, r, m.st(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]Worktree, 0, len(findings))
	for _, f := range findings {
		w := worktreeOf(f.Worktree)
		w.Fix, w.Fixable = f.Fix, &f.Fixable
		if fix && f.Fixable {
			if f.Worktree.Status.State == worktree.StateCopyDiverged {
				if w.Diff, err = worktree.Diff(m.st(ctx), f.Worktree.Status.Path); err != nil {
					return nil, err
				}
			}
			res, err := m.repair(ctx, f)
			fixed := err == nil
			w.Fixed = &fixed
			if err != nil {
				m.warn(fmt.Sprintf("%s: %v", f.Worktree.Path, err))
			} else {
				w.Result, w.Backup, w.Added = res.Message, res.Backup, res.Added
			}
		}
		out = append(out, w)
	}
	return out, nil
}

// repair fixes one finding of worktree.Doctor.
func (m *Memory) repair(ctx context.Context, f worktree.Finding) (worktree.LinkResult, error) {
	return worktree.Repair(ctx, m.repo, m.st(ctx), f, nil, nil)
}

// WorktreeRemove folds the entries only in the worktree's copy of the
// memory into the memory (with its dedup; the copy is kept in the memory
// home as memories.md.bak-<time>-<name>), then runs `git worktree remove`
// (--force with o.Force) in o.Dir. What was folded is returned even when
// git then fails (a *worktree.GitError). An o.Dir outside the memory's
// repository is a ConfigError, as in WorktreeAdd.
func (m *Memory) WorktreeRemove(ctx context.Context, path string, o WorktreeRemoveOptions) (WorktreeRemoval, error) {
	r, err := m.repoFor(ctx)
	if err != nil {
		return WorktreeRemoval{}, err
	}
	if err := runsHere(r, o.Dir); err != nil {
		return WorktreeRemoval{}, err
	}
	if err := m.beforeWrite(); err != nil {
		return WorktreeRemoval{}, err
	}
	res, err := worktree.Remove(ctx, r, m.st(ctx), o.Dir, path, o.Force, o.Stdout, o.Stderr)
	return WorktreeRemoval{Path: path, Removed: err == nil, Added: res.Added, Backup: res.Backup}, err
}
