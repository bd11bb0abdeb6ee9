package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/gitrepo"
	"github.com/memsync/memsync/internal/store"
)

// Worktree is one worktree of the repository, as git lists it, with the state
// of its memory.
type Worktree struct {
	Path     string // as git records it
	Head     string // commit checked out
	Branch   string // short branch name; "" when detached
	Locked   bool
	Prunable bool
	Status   Status
}

// GitError is a git command that failed; its output went to the caller's
// streams (or, where the caller gave none, is in Stderr). Its Code is git's
// exit status, not one of memsync's exit codes.
type GitError = gitcmd.Error

// runGit runs the user's git in dir with the caller's streams; nil streams
// discard git's output, but for its standard error in a GitError.
func runGit(ctx context.Context, dir string, stdout, stderr io.Writer, args ...string) error {
	cmd := gitcmd.CommandContext(ctx, dir, args...)
	var kept bytes.Buffer
	if stderr == nil {
		stderr = &kept
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("worktree: git %s: %w", strings.Join(args, " "), ctx.Err())
	}
	if err = gitcmd.Wrap(args, err, kept.String()); errors.As(err, new(*GitError)) {
		return err
	}
	if err != nil {
		return fmt.Errorf("worktree: run git: %w", err)
	}
	return nil
}

// gitRunDir is where to run git for repository-wide commands.
func gitRunDir(r *Repo) string {
	if r.WorkTree != "" {
		return r.WorkTree
	}
	return r.GitDir
}

// List returns every worktree of the repository (the bare repository itself
// excepted), from `git worktree list --porcelain -z`, each inspected (s
// is the memory's store).
func List(ctx context.Context, r *Repo, s *store.Store) ([]Worktree, error) {
	var buf bytes.Buffer
	if err := runGit(ctx, gitRunDir(r), &buf, nil, "worktree", "list", "--porcelain", "-z"); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	out := buf.String()
	var (
		list []Worktree
		cur  Worktree
		bare bool
	)
	flush := func() error {
		if len(list) == 0 && !bare && r.Primary != "" && sameDir(cur.Path, r.CommonDir) {
			// The main worktree of a git dir with core.worktree (a
			// submodule's, under the superproject's .git/modules/): git
			// (2.39) names the git dir; the worktree is the primary.
			cur.Path = r.Primary
		}
		if cur.Path != "" && !bare {
			st, err := Inspect(r, s, cur.Path)
			if err != nil {
				return err
			}
			if cur.Prunable {
				st.State, st.Detail = StatePrunable, "git reports it prunable: "+st.Detail
			} else if _, err := gitrepo.WorktreeTop(r, cur.Path); !st.Primary && errors.Is(err, gitrepo.ErrOtherRepository) {
				st.State, st.Detail = StateOtherRepo, strings.TrimPrefix(err.Error(), "worktree: ")
			}
			cur.Status = st
			list = append(list, cur)
		}
		cur, bare = Worktree{}, false
		return nil
	}
	for _, field := range strings.Split(out, "\x00") {
		key, val, _ := strings.Cut(field, " ")
		switch key {
		case "":
			if err := flush(); err != nil {
				return nil, err
			}
		case "worktree":
			cur.Path = val
		case "HEAD":
			cur.Head = val
		case "branch":
			cur.Branch = strings.TrimPrefix(val, "refs/heads/")
		case "bare":
			bare = true
		case "locked":
			cur.Locked = true
		case "prunable":
			cur.Prunable = true
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return list, nil
}

// Add runs the user's `git worktree add` in dir with args (git's
// arguments after "worktree add": flags, "--", path, commit-ish), git's
// output going to stdout and stderr (git runs hooks and filters; go-git
// cannot make linked worktrees), then links the new worktree at path (as
// args name it) through the memory's store s. When git fails the error is
// a *GitError carrying git's exit status.
func Add(ctx context.Context, r *Repo, s *store.Store, dir, path string, args []string, stdout, stderr io.Writer) (LinkResult, error) {
	if _, err := EnsureExclude(r, r.Excludes()); err != nil {
		return LinkResult{}, err
	}
	if err := runGit(ctx, dir, stdout, stderr, append([]string{"worktree", "add"}, args...)...); err != nil {
		return LinkResult{}, err
	}
	res, err := Link(r, s, AbsIn(dir, path))
	if err == nil && res.Was == StateLinked {
		// memsync's post-checkout hook linked the worktree git has just
		// made, within this add: the link is this add's.
		res.Was, res.Changed = StateMissing, true
		res.Message = strings.Replace(res.Message, "already linked: ", "linked ", 1)
	}
	return res, err
}

// Remove folds any entries only in the worktree's copy of the memory into
// the memory home through its store s (see Fold; the copy is kept as
// memories.md.bak-<time>-<name> in the home, since the worktree goes away),
// then runs `git worktree remove`.
func Remove(ctx context.Context, r *Repo, s *store.Store, dir, path string, force bool, stdout, stderr io.Writer) (FoldResult, error) {
	var res FoldResult
	wt := AbsIn(dir, path)
	st, err := Inspect(r, s, wt)
	if err != nil {
		return res, err
	}
	if st.Primary {
		return res, fmt.Errorf("worktree: %s is the primary worktree; it cannot be removed", wt)
	}
	if st.State == StateCopyDiverged {
		backup := filepath.Join(r.Home, "memories.md.bak-"+BackupStamp()+"-"+filepath.Base(wt))
		if res, err = fold(s, st.Path, backup, false, writer(r, wt)); err != nil {
			return res, err
		}
	}
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	}
	return res, runGit(ctx, dir, stdout, stderr, append(args, "--", wt)...)
}

// Finding is a worktree whose memory needs attention, and what fixes it.
type Finding struct {
	Worktree Worktree
	Fix      string // what to do, for people
	Fixable  bool   // Repair can fix it
}

// Doctor returns a finding for every worktree whose memory is not shared as
// it should be: not linked (or, where symlinks are off, a copy that drifted),
// tracked by git, unsafe, or prunable.
func Doctor(ctx context.Context, r *Repo, s *store.Store) ([]Finding, error) {
	list, err := List(ctx, r, s)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, w := range list {
		st := w.Status
		f := Finding{Worktree: w, Fixable: true}
		switch {
		case st.State == StatePrimary:
			continue
		case st.Tracked && r.Layout != LayoutRalph && st.State != StateLinked:
			f.Fix, f.Fixable = "in "+w.Path+": git rm --cached .agent/memories.md, then commit (memsync keeps history on its own ref, and folds the tracked file's entries into the memory meanwhile)", false
		case st.State == StateLinked, st.Primary && st.State == StateMissing && !fileExists(s.Path()):
			continue
		case st.State == StateCopy:
			continue
		case st.State == StateMissing && stashed(r, w.Path, r.WorktreeFile(w.Path), r.MemoryFile()):
			continue // git stash --all took the link: git stash pop puts it back
		case st.State == StatePrunable:
			f.Fix = "git worktree prune"
		case st.State == StateOtherRepo:
			f.Fix, f.Fixable = "it is another repository's worktree (this repository a copy of that one?); to drop this repository's record of it (git's worktree prune keeps it, the folder exists): rm -r "+recordOf(r, w.Path), false
		case st.State == StateUnsafe && st.Link == "":
			f.Fix, f.Fixable = "remove the .agent symlink in "+w.Path+", then: memsync worktree link "+w.Path, false
		case st.State == StateWrongTarget && st.Link == "":
			f.Fix, f.Fixable = "move "+st.Path+" out of the way, then: memsync worktree link "+w.Path, false
		case st.State == StateCopyDiverged:
			f.Fix = "fold the copy's entries into the memory (the copy is kept as a backup), then link it"
		case st.State == StateLockUnshared:
			f.Fix = "share the memory's lock with ralph there: memsync worktree link " + w.Path
		case st.State == StateTypechange:
			f.Fix = "set skip-worktree on the linked file: memsync worktree link " + w.Path
		default:
			f.Fix = "link it: memsync worktree link " + w.Path
		}
		out = append(out, f)
	}
	return out, nil
}

// Repair fixes a finding that is Fixable: prunes git's records of a vanished
// worktree, or links the worktree (which folds a diverged copy first and
// replaces a bad link without writing through it).
func Repair(ctx context.Context, r *Repo, s *store.Store, f Finding, stdout, stderr io.Writer) (LinkResult, error) {
	if !f.Fixable {
		return LinkResult{}, fmt.Errorf("worktree: %s needs a manual fix: %s", f.Worktree.Path, f.Fix)
	}
	if f.Worktree.Status.State == StatePrunable {
		res := LinkResult{State: StatePrunable, Was: StatePrunable, Changed: true, Message: "pruned git's records of " + f.Worktree.Path}
		return res, runGit(ctx, gitRunDir(r), stdout, stderr, "worktree", "prune")
	}
	return Link(r, s, f.Worktree.Path)
}

// recordOf is the folder under the common git dir's worktrees/ where git
// records the linked worktree at wt (its gitdir file names wt's .git).
func recordOf(r *Repo, wt string) string {
	dirs, _ := filepath.Glob(filepath.Join(r.CommonDir, "worktrees", "*", "gitdir"))
	for _, file := range dirs {
		if data, err := fsutil.ReadFile(file, 64<<10); err == nil && sameDir(filepath.Dir(strings.TrimSpace(string(data))), wt) {
			return filepath.Dir(file)
		}
	}
	return filepath.Join(r.CommonDir, "worktrees", filepath.Base(wt))
}

// AbsIn makes p absolute against dir ("" is the working directory).
func AbsIn(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if dir == "" {
		dir, _ = os.Getwd()
	} else if !filepath.IsAbs(dir) {
		wd, _ := os.Getwd()
		dir = filepath.Join(wd, dir)
	}
	return filepath.Join(dir, p)
}

// sameDir tells whether two paths name the same existing folder.
func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
