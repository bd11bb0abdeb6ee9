package worktree

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/gitconfig"
	"github.com/memsync/memsync/memfile"
)

// ExcludePatterns returns the patterns that keep the memory files out of git
// status in every worktree (a fresh slice each call). They go into the
// common info/exclude (see EnsureExclude), anchored at each worktree's top.
func ExcludePatterns() []string {
	return []string{
		"/.agent/memories.md",
		"/.agent/memories.md.*",
		"/.agent/.memories.md.tmp-*",
		"/.agent/archive/",
	}
}

// State is how a worktree's .agent/memories.md relates to the memory home.
type State string

// The memory states of a worktree.
const (
	StatePrimary       State = "primary"        // the worktree holds the memory home itself
	StateLinked        State = "linked"         // a symlink that resolves to the home's memories.md
	StateMissing       State = "missing"        // no .agent/memories.md
	StateBroken        State = "broken"         // a dangling symlink
	StateWrongTarget   State = "wrong-target"   // a symlink to another file inside the home, or a folder in the way
	StateCopyIdentical State = "copy-identical" // a regular file with the same bytes as the home's
	StateCopyDiverged  State = "copy-diverged"  // a regular file that differs from the home's
	StateUnsafe        State = "unsafe"         // resolves outside the memory home
	StatePrunable      State = "prunable"       // git reports the worktree as prunable (its folder is gone)
	StateCopy          State = "copy"           // a regular file identical to the home's where core.symlinks=false, or what Link made where symlinks are impossible
)

// Errors a caller can test for with errors.Is.
var (
	// ErrTracked: the worktree's branch tracks .agent/memories.md, so
	// replacing it would leave a typechange in git status.
	ErrTracked = errors.New(".agent/memories.md is tracked by git")
	// ErrUnsafe: the worktree's .agent folder leads outside the worktree.
	ErrUnsafe = errors.New("unsafe memory path")
)

// Status is what Inspect found in one worktree.
type Status struct {
	State   State
	Primary bool   // the worktree is the primary one
	Path    string // <worktree>/.agent/memories.md
	Link    string // the symlink's text, when it is one
	Target  string // where the symlink resolves, when it is one
	Tracked bool   // git tracks the file (only checked when it is not linked)
	Detail  string // a sentence for people
}

// LinkResult is what Link did.
type LinkResult struct {
	State   State  // StatePrimary, StateLinked or StateCopy
	Was     State  // the state before
	Changed bool   // something on disk changed
	Added   int    // entries folded from a diverged copy into the home
	Backup  string // where a replaced copy was kept
	Message string // a sentence for people
}

// Link makes the worktree at wt share the repository's memory: <wt>/.agent/memories.md becomes a
// relative symlink to the memory home's file (or a copy where symlinks are impossible). Idempotent.
//
// It creates .agent/ and the home's memories.md if missing, adds the ignore
// rules to the common info/exclude, and leaves other files in .agent/ alone.
// A dangling, wrong or unsafe symlink is replaced (never written through); an
// identical copy is replaced; a diverged copy is first folded into the home by
// entry ID (see Fold; it is kept as a backup beside itself when it holds
// anything the memory lacks). A path inside a worktree names that worktree;
// a path outside this repository's worktrees is refused. A file that git
// tracks is not touched: the error wraps ErrTracked and the fix is
// `git rm --cached .agent/memories.md`. s is the memory's store (the
// memory home's file is created, and a copy folded, through it).
func Link(r *Repo, s *memfile.Store, wt string) (LinkResult, error) {
	top, err := worktreeTop(r, wt)
	if err != nil {
		return LinkResult{}, err
	}
	if _, err := EnsureExclude(r, ExcludePatterns()); err != nil {
		return LinkResult{}, err
	}
	if err := ensureHomeFile(s); err != nil {
		return LinkResult{}, err
	}
	st, err := Inspect(r, s, top)
	if err != nil {
		return LinkResult{}, err
	}
	res := LinkResult{State: StateLinked, Was: st.State}
	copyMode := !symlinksEnabled(r)
	switch st.State {
	case StatePrimary:
		res.State, res.Message = StatePrimary, "the primary worktree holds the memory itself"
		return res, nil
	case StateLinked:
		res.Message = "already linked: " + st.Path + " -> " + st.Link
		return res, nil
	case StateCopy:
		res.State, res.Message = StateCopy, "already a copy of the memory (core.symlinks=false): "+st.Path
		return res, nil
	case StatePrunable:
		return res, fmt.Errorf("worktree: %s is gone (prunable); run git worktree prune", wt)
	}
	if st.Tracked {
		return res, fmt.Errorf("%w in %s; replacing it would change the branch", ErrTracked, st.Path)
	}
	if st.State == StateUnsafe && st.Link == "" {
		return res, fmt.Errorf("%w: %s", ErrUnsafe, st.Detail)
	}
	if st.State == StateWrongTarget && st.Link == "" {
		return res, fmt.Errorf("worktree: %s", st.Detail)
	}
	if st.State == StateCopyDiverged {
		// Fold until the copy stays as folded: a tool may still write to it.
		for range 3 {
			fr, err := Fold(s, st.Path, "")
			if err != nil {
				return res, err
			}
			res.Added += fr.Added
			if fr.Backup != "" {
				res.Backup = fr.Backup
			}
			if now, err := os.ReadFile(st.Path); err == nil && bytes.Equal(now, fr.folded) {
				break
			}
		}
	}
	if err := place(r, s, st.Path, copyMode, &res); err != nil {
		return res, err
	}
	res.Changed = true
	if res.Added > 0 || res.Backup != "" {
		res.Message += fmt.Sprintf(" (folded %d entr%s from the copy into the memory; the copy is kept as %s)", res.Added, plural(res.Added, "y", "ies"), res.Backup)
	}
	return res, nil
}

// worktreeTop returns the top of the worktree that contains wt, which must
// be a worktree of r's repository. It reads files only, and ignores GIT_DIR
// and the like (a hook's variables describe another worktree).
func worktreeTop(r *Repo, wt string) (string, error) {
	real, err := filepath.EvalSymlinks(wt)
	if err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	found, top, inGitDir, err := walkUp(real, "")
	if err != nil {
		return "", err
	}
	if found.path == "" || inGitDir || top == "" {
		return "", fmt.Errorf("worktree: %s is not inside a worktree of %s", wt, r.CommonDir)
	}
	d := &discovery{known: []string{real}}
	common := d.resolve(found.path)
	if found.commondir != "" {
		common = d.resolve(rawJoin(common, found.commondir))
	}
	if common != r.CommonDir {
		return "", fmt.Errorf("worktree: %s belongs to another repository (%s, not %s)", wt, common, r.CommonDir)
	}
	return d.resolve(top), nil
}

// place puts the link (or, failing that, a copy) at path, replacing what is
// there atomically.
func place(r *Repo, s *memfile.Store, path string, copyMode bool, res *LinkResult) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	rel, err := relLink(r, path)
	if err != nil {
		return err
	}
	var linkErr error
	if !copyMode {
		if linkErr = replaceWithSymlink(path, rel); linkErr == nil {
			res.State, res.Message = StateLinked, "linked "+path+" -> "+rel
			return nil
		}
	}
	data, err := readHomeFile(s)
	if err != nil {
		return err
	}
	if err := fsutil.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	why := "core.symlinks=false"
	if linkErr != nil {
		why = "cannot make a symlink: " + linkErr.Error()
	}
	res.State, res.Message = StateCopy, fmt.Sprintf("copied the memory to %s (%s); memsync worktree doctor --fix folds its new entries back", path, why)
	return nil
}

// replaceWithSymlink makes path a symlink to target: a symlink under a
// temporary name, renamed over whatever is at path (never written through).
func replaceWithSymlink(path, target string) error {
	var b [6]byte
	_, _ = rand.Read(b[:])
	tmp := path + ".link-" + hex.EncodeToString(b[:])
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// relLink is the relative symlink text from path's folder to the home's
// memories.md, computed from real paths.
func relLink(r *Repo, path string) (string, error) {
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	rel, err := filepath.Rel(dir, r.MemoryFile())
	if err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	return rel, nil
}

// Inspect reports the memory state of the worktree at wt. Only reads files;
// git is asked whether the file is tracked when it exists and is not linked.
// s is the memory's store, whose home is r.Home.
func Inspect(r *Repo, s *memfile.Store, wt string) (Status, error) {
	st := Status{}
	real, err := filepath.EvalSymlinks(wt)
	if errors.Is(err, fs.ErrNotExist) {
		st.State, st.Path, st.Detail = StatePrunable, filepath.Join(wt, ".agent", "memories.md"), "the worktree's folder is gone"
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("worktree: %w", err)
	}
	st.Path = filepath.Join(real, ".agent", "memories.md")
	home, homeErr := s.Resolve(s.Path())
	if homeErr != nil && !errors.Is(homeErr, memfile.ErrUnsafePath) {
		return st, homeErr
	}
	if !r.Bare && real == r.Primary {
		st.Primary = true
		st.State, st.Detail = StatePrimary, "holds the memory home "+r.Home
		if homeErr != nil {
			st.Link, _ = os.Readlink(st.Path)
			st.State, st.Detail = StateUnsafe, homeErr.Error()
		}
		if _, err := os.Lstat(st.Path); err == nil && isTracked(real) {
			st.Tracked = true
			st.Detail += "; " + trackedDetail
		}
		return st, nil
	}
	if agent, err := filepath.EvalSymlinks(filepath.Dir(st.Path)); err == nil && !pathWithin(agent, real) {
		st.State, st.Detail = StateUnsafe, fmt.Sprintf("%s leads outside the worktree, to %s", filepath.Dir(st.Path), agent)
		return st, nil
	}
	fi, err := os.Lstat(st.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		st.State, st.Detail = StateMissing, "no memory file"
		return st, nil
	case errors.Is(err, syscall.ENOTDIR):
		st.State, st.Detail = StateWrongTarget, filepath.Dir(st.Path)+" is not a folder"
		return st, nil
	case err != nil:
		return st, fmt.Errorf("worktree: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		if st.Link, err = os.Readlink(st.Path); err != nil {
			return st, fmt.Errorf("worktree: %w", err)
		}
		target, rerr := s.Resolve(st.Path)
		_, serr := os.Stat(st.Path)
		switch {
		case rerr == nil && homeErr == nil && target == home:
			st.State, st.Target, st.Detail = StateLinked, target, "-> "+st.Link
			return st, nil
		case serr != nil:
			st.State, st.Detail = StateBroken, "dangling link -> "+st.Link
		case errors.Is(rerr, memfile.ErrUnsafePath):
			st.Target, _ = filepath.EvalSymlinks(st.Path)
			st.State, st.Detail = StateUnsafe, fmt.Sprintf("link -> %s resolves outside the memory home, to %s", st.Link, st.Target)
		case rerr != nil:
			return st, rerr
		default:
			st.State, st.Target, st.Detail = StateWrongTarget, target, fmt.Sprintf("link -> %s resolves to %s, not %s", st.Link, target, home)
		}
	case fi.Mode().IsRegular():
		mine, err := os.ReadFile(st.Path)
		if err != nil {
			return st, fmt.Errorf("worktree: %w", err)
		}
		var theirs []byte
		if homeErr == nil {
			if theirs, err = os.ReadFile(home); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return st, fmt.Errorf("worktree: %w", err)
			}
		}
		switch {
		case bytes.Equal(mine, theirs) && !symlinksEnabled(r):
			st.State, st.Detail = StateCopy, "a copy of the memory, as core.symlinks=false asks"
		case bytes.Equal(mine, theirs):
			st.State, st.Detail = StateCopyIdentical, "a regular file identical to the memory"
		default:
			st.State, st.Detail = StateCopyDiverged, "a regular file that differs from the memory"
		}
	default:
		st.State, st.Detail = StateWrongTarget, st.Path+" is not a file or symlink"
	}
	st.Tracked = isTracked(real)
	if st.Tracked {
		st.Detail += "; " + trackedDetail
	}
	return st, nil
}

// trackedDetail says what to do about a tracked memory file.
const trackedDetail = "tracked by git (fix, in that worktree: git rm --cached .agent/memories.md, then commit)"

// isTracked asks git whether the worktree's index tracks the memory file.
func isTracked(wt string) bool {
	_, err := gitcmd.Output(wt, "ls-files", "--error-unmatch", "--", ".agent/memories.md")
	return err == nil
}

// ensureHomeFile creates the home and an empty memory file in it (under the
// writers' lock) if there is none, so that links never dangle.
func ensureHomeFile(s *memfile.Store) error {
	if err := os.MkdirAll(s.Home, 0o755); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	target, err := s.Resolve(s.Path())
	if err != nil {
		return err
	}
	if _, err := os.Stat(target); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return s.Update(func(*memfile.File) error { return nil })
}

// readHomeFile reads the home's memory file as it is on disk.
func readHomeFile(s *memfile.Store) ([]byte, error) {
	target, err := s.Resolve(s.Path())
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(target)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	return data, nil
}

// symlinksEnabled reads core.symlinks (default true) from the repository
// config, as git would for the primary worktree.
func symlinksEnabled(r *Repo) bool {
	v, ok := gitconfig.Repo(r.CommonDir, r.CommonDir).Bool("core.symlinks")
	return !ok || v
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
