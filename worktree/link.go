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
	"github.com/memsync/memsync/internal/gitrepo"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/internal/words"
	"github.com/memsync/memsync/memfile"
)

// State is how a worktree's .agent/memories.md relates to the memory home.
type State string

// The memory states of a worktree.
const (
	StatePrimary       State = "primary"        // the primary worktree holds the memory itself (memsync.home=worktree)
	StateLinked        State = "linked"         // a symlink that resolves to the home's memories.md
	StateMissing       State = "missing"        // no .agent/memories.md
	StateBroken        State = "broken"         // a dangling symlink
	StateWrongTarget   State = "wrong-target"   // a symlink to another file inside the home, or a folder in the way
	StateCopyIdentical State = "copy-identical" // a regular file with the same bytes as the home's
	StateCopyDiverged  State = "copy-diverged"  // a regular file that differs from the home's
	StateUnsafe        State = "unsafe"         // resolves outside the memory home
	StatePrunable      State = "prunable"       // git reports the worktree as prunable (its folder is gone)
	StateOtherRepo     State = "other-repo"     // git lists it here, but its .git names another repository (this one a copy of that one)
	StateCopy          State = "copy"           // a regular file identical to the home's where core.symlinks=false, or what Link made where symlinks are impossible
	StateLockUnshared  State = "lock-unshared"  // ralph's layout: linked, but the lock ralph opens there (<file>.lock) is not the memory's lock
	StateTypechange    State = "typechange"     // ralph's layout: linked over a file the branch tracks, without skip-worktree (git status shows a typechange)
)

// Errors a caller can test for with errors.Is.
var (
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
	Tracked bool   // git tracks the file
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
// a path outside this repository's worktrees is refused. A .agent file the
// branch tracks (a branch that committed its memory) is folded into the
// memory and left as the branch has it: git owns it, and a link in its
// place would make git checkout refuse to switch. In ralph's layout
// (Repo.Layout) the file is <wt>/.ralph/agent/memories.md, a tracked one
// (ralph's default) is linked with the skip-worktree bit (see shareRalph),
// and the lock ralph opens beside it becomes a link to the memory's lock. The primary
// worktree is linked like any other: the memory itself lives in the
// home, inside the git dir (see Heal). s is the memory's store (the memory
// home's file is created, and a copy folded, through it).
func Link(r *Repo, s *store.Store, wt string) (LinkResult, error) {
	top, err := gitrepo.WorktreeTop(r, wt)
	if err != nil {
		return LinkResult{}, err
	}
	if _, err := EnsureExclude(r, r.Excludes()); err != nil {
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
	if done, err := linkDone(r, s, wt, top, st, &res); done {
		return res, err
	}
	if st.State == StateCopyDiverged {
		if err := foldCopy(r, s, top, st, &res); err != nil {
			return res, err
		}
	}
	if st.Tracked && r.Layout != LayoutRalph {
		// git owns a file its branch tracks: a link in its place would stop
		// git checkout ("local changes would be overwritten"). Its entries
		// are in the memory now; the file stays as the branch has it.
		res.State, res.Changed = st.State, res.Added > 0
		res.Message = fmt.Sprintf("%s is tracked by the branch: folded %d entr%s from it into the memory; left as the branch has it (%s)",
			st.Path, res.Added, words.Plural(res.Added, "y", "ies"), trackedDetail(r))
		return res, nil
	}
	return res, linkPlace(r, s, top, st, copyMode, &res)
}

// linkDone is Link's plan for the states that need no new link: done
// reports that Link ends there, with err or with res saying why (already
// linked, the primary's own file, a lock or index bit fixed in place; a
// worktree gone, or an unsafe path or wrong file Link does not replace).
func linkDone(r *Repo, s *store.Store, wt, top string, st Status, res *LinkResult) (done bool, err error) {
	switch st.State {
	case StatePrimary:
		res.State, res.Message = StatePrimary, "the primary worktree holds the memory itself"
		return true, nil
	case StateLinked:
		res.Message = "already linked: " + st.Path + " -> " + st.Link
		return true, nil
	case StateCopy:
		res.State, res.Message = StateCopy, "already a copy of the memory (core.symlinks=false): "+st.Path
		return true, nil
	case StatePrunable:
		return true, fmt.Errorf("worktree: %s is gone (prunable); run git worktree prune", wt)
	case StateLockUnshared, StateTypechange:
		msg, err := shareRalph(r, s, top, st.Path)
		if err != nil {
			return true, err
		}
		res.Changed, res.Message = true, "already linked: "+st.Path+" -> "+st.Link+msg
		return true, nil
	}
	if st.State == StateUnsafe && st.Link == "" {
		return true, fmt.Errorf("%w: %s", ErrUnsafe, st.Detail)
	}
	if st.State == StateWrongTarget && st.Link == "" {
		return true, fmt.Errorf("worktree: %s", st.Detail)
	}
	return false, nil
}

// foldCopy folds a diverged copy into the memory, until the copy stays as
// folded (a tool may still write to it), and counts its entries in res.
func foldCopy(r *Repo, s *store.Store, top string, st Status, res *LinkResult) error {
	edits := !st.Tracked && newer(st.Path, s.Path())
	for range 3 {
		fr, err := fold(s, st.Path, "", edits, writer(r, top))
		if err != nil {
			return err
		}
		res.Added += fr.Added + fr.Edited
		if fr.Backup != "" {
			res.Backup = fr.Backup
		}
		if now, err := os.ReadFile(st.Path); err == nil && bytes.Equal(now, fr.folded) {
			break
		}
	}
	return nil
}

// linkPlace is Link's last step: the link (or the copy) goes in place, the
// lock of ralph's layout is shared, and res says what it did.
func linkPlace(r *Repo, s *store.Store, top string, st Status, copyMode bool, res *LinkResult) error {
	if err := place(r, s, st.Path, copyMode, res); err != nil {
		return err
	}
	res.Changed = true
	if res.State == StateLinked {
		msg, err := shareRalph(r, s, top, st.Path)
		if err != nil {
			return err
		}
		res.Message += msg
	}
	if res.Added > 0 || res.Backup != "" {
		res.Message += fmt.Sprintf(" (folded %d entr%s from the copy into the memory; the copy is kept as %s)", res.Added, words.Plural(res.Added, "y", "ies"), res.Backup)
	}
	return nil
}

// place puts the link (or, failing that, a copy) at path, replacing what is
// there atomically.
func place(r *Repo, s *store.Store, path string, copyMode bool, res *LinkResult) error {
	if err := fsutil.MkdirAll(filepath.Dir(path), s.DirPerm()); err != nil {
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
	if err := fsutil.WriteFile(path, data, s.FilePerm()); err != nil {
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
// s is the memory's store, whose home is r.Home. It finds the worktree and
// the memory home, then looks at what the worktree's memory path is
// (inspectFile).
func Inspect(r *Repo, s *store.Store, wt string) (Status, error) {
	st := Status{}
	real, err := filepath.EvalSymlinks(wt)
	if errors.Is(err, fs.ErrNotExist) {
		st.State, st.Path, st.Detail = StatePrunable, r.WorktreeFile(wt), "the worktree's folder is gone"
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("worktree: %w", err)
	}
	st.Path = r.WorktreeFile(real)
	home, homeErr := s.Resolve(s.Path())
	if homeErr != nil && !errors.Is(homeErr, store.ErrUnsafePath) {
		return st, homeErr
	}
	st.Primary = !r.Bare && real == r.Primary
	if st.Primary && r.InWorktree {
		inspectHome(r, real, homeErr, &st)
		return st, nil
	}
	if homeErr != nil {
		st.State, st.Detail = StateUnsafe, homeErr.Error()
		return st, nil
	}
	if agent := leadsOut(real, filepath.Dir(st.Path)); agent != "" {
		st.State, st.Detail = StateUnsafe, fmt.Sprintf("%s leads outside the worktree, to %s", filepath.Dir(st.Path), agent)
		return st, nil
	}
	if done, err := inspectFile(r, s, real, home, &st); done || err != nil {
		return st, err
	}
	st.Tracked = gitrepo.Tracked(r, real)
	if st.Tracked {
		st.Detail += "; " + trackedDetail(r)
	}
	return st, nil
}

// leadsOut returns where dir, a folder memsync would write in (or create)
// in the worktree whose resolved top is top, lands when that is outside
// top, else "". Its symlinks are resolved also where dir does not exist
// yet (a .ralph that links out of the worktree, the agent folder under it
// not made yet): a folder made there would land outside.
func leadsOut(top, dir string) string {
	if d := fsutil.ResolveDir("", dir); !gitrepo.PathWithin(d, top) {
		return d
	}
	return ""
}

// inspectHome is Inspect of the primary worktree whose file is the memory
// home (memsync.home=worktree); homeErr is why the home is unsafe, if it is.
func inspectHome(r *Repo, real string, homeErr error, st *Status) {
	st.State, st.Detail = StatePrimary, "holds the memory home "+r.Home
	if homeErr != nil {
		st.Link, _ = os.Readlink(st.Path)
		st.State, st.Detail = StateUnsafe, homeErr.Error()
	}
	if _, err := os.Lstat(st.Path); err == nil && gitrepo.Tracked(r, real) {
		st.Tracked = true
		st.Detail += "; " + trackedDetail(r)
	}
}

// inspectFile sets st's state from what the memory path of the worktree
// whose top is real is: missing, a symlink (inspectLink), a copy of the
// memory home's file home (inspectCopy) or something else. done reports a
// state that needs no more checks (missing, linked): else Inspect asks git
// whether the file is tracked.
func inspectFile(r *Repo, s *store.Store, real, home string, st *Status) (done bool, err error) {
	fi, err := os.Lstat(st.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		st.State, st.Detail = StateMissing, "no memory file"
		return true, nil
	case errors.Is(err, syscall.ENOTDIR):
		st.State, st.Detail = StateWrongTarget, filepath.Dir(st.Path)+" is not a folder"
		return true, nil
	case err != nil:
		return true, fmt.Errorf("worktree: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return inspectLink(r, s, real, home, st)
	case fi.Mode().IsRegular():
		return false, inspectCopy(r, home, st)
	}
	st.State, st.Detail = StateWrongTarget, st.Path+" is not a file or symlink"
	return false, nil
}

// inspectLink is inspectFile of a symlink: linked to the memory home's file
// home (then inspectLinked), dangling, unsafe or pointing elsewhere.
func inspectLink(r *Repo, s *store.Store, real, home string, st *Status) (done bool, err error) {
	if st.Link, err = os.Readlink(st.Path); err != nil {
		return true, fmt.Errorf("worktree: %w", err)
	}
	target, rerr := s.Resolve(st.Path)
	_, serr := os.Stat(st.Path)
	switch {
	case rerr == nil && target == home:
		st.State, st.Target, st.Detail = StateLinked, target, "-> "+st.Link
		inspectLinked(r, s, real, st)
		return true, nil
	case serr != nil:
		st.State, st.Detail = StateBroken, "dangling link -> "+st.Link
	case errors.Is(rerr, store.ErrUnsafePath):
		st.Target, _ = filepath.EvalSymlinks(st.Path)
		st.State, st.Detail = StateUnsafe, fmt.Sprintf("link -> %s resolves outside the memory home, to %s", st.Link, st.Target)
	case rerr != nil:
		return true, rerr
	default:
		st.State, st.Target, st.Detail = StateWrongTarget, target, fmt.Sprintf("link -> %s resolves to %s, not %s", st.Link, target, home)
	}
	return false, nil
}

// inspectCopy is inspectFile of a regular file: a copy of the memory home's
// file home, identical or not.
func inspectCopy(r *Repo, home string, st *Status) error {
	mine, err := os.ReadFile(st.Path)
	if err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	theirs, err := os.ReadFile(home)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("worktree: %w", err)
	}
	switch {
	case bytes.Equal(mine, theirs) && !symlinksEnabled(r):
		st.State, st.Detail = StateCopy, "a copy of the memory, as core.symlinks=false asks"
	case bytes.Equal(mine, theirs):
		st.State, st.Detail = StateCopyIdentical, "a regular file identical to the memory"
	default:
		st.State, st.Detail = StateCopyDiverged, "a regular file that differs from the memory"
	}
	return nil
}

// trackedDetail says what to do about a tracked memory file.
func trackedDetail(r *Repo) string {
	if r.Layout == LayoutRalph {
		return "tracked by git (ralph's default; memsync links it with skip-worktree and folds a checked-out copy by entry)"
	}
	return "tracked by git (memsync folds its entries into the memory and leaves it to git; to stop tracking it: git rm --cached .agent/memories.md, then commit)"
}

// indexFlags asks git how the worktree's index holds the memory file:
// tracked, and with the skip-worktree bit.
func indexFlags(r *Repo, wt string) (tracked, skip bool) {
	out, err := gitcmd.Output(wt, "ls-files", "-v", "--", r.RelFile())
	if err != nil || len(out) == 0 {
		return false, false
	}
	return true, out[0] == 'S' || out[0] == 's'
}

// lockShared tells whether the lock ralph opens beside the worktree's
// memory file (path + ".lock", not resolved) is the memory's lock file.
func lockShared(s *store.Store, path string) (bool, string) {
	want, err := s.LockPath()
	if err != nil {
		return false, ""
	}
	got, err := s.Resolve(path + ".lock")
	return err == nil && got == want, want
}

// inspectLinked looks at what else a linked worktree needs: a file the
// branch tracks must carry the skip-worktree bit (else git status shows the
// symlink as a typechange), and in ralph's layout the lock ralph opens there
// must be the memory's.
func inspectLinked(r *Repo, s *store.Store, wt string, st *Status) {
	tracked, skip := indexFlags(r, wt)
	st.Tracked = tracked
	if tracked && !skip {
		st.State = StateTypechange
		st.Detail += "; the branch tracks " + r.RelFile() + " and git status shows the symlink as a typechange (memsync worktree link sets skip-worktree)"
		return
	}
	if r.Layout != LayoutRalph {
		if tracked {
			st.Detail += "; tracked, skip-worktree set"
		}
		return
	}
	if ok, want := lockShared(s, st.Path); !ok {
		st.State = StateLockUnshared
		st.Detail += "; ralph here would lock " + st.Path + ".lock, not the memory's lock " + want + " (memsync worktree link shares it)"
		return
	}
	if tracked {
		st.Detail += "; tracked, skip-worktree set"
	}
}

// shareRalph finishes a ralph-layout link in the worktree wt whose memory
// file path is a link to the memory: the lock ralph opens there (path +
// ".lock") becomes a relative symlink to the memory's lock file, and a file
// the branch tracks gets the skip-worktree bit, so git status stays clean
// and git add -A never commits the link (undo: git update-index
// --no-skip-worktree <file> && git checkout -- <file>). It returns what it
// did, as a clause for the link's message.
func shareRalph(r *Repo, s *store.Store, wt, path string) (string, error) {
	msg := ""
	if ok, want := lockShared(s, path); !ok && r.Layout == LayoutRalph {
		if want == "" {
			_, err := s.LockPath()
			return "", err
		}
		f, err := fsutil.OpenFile(want, os.O_RDONLY|os.O_CREATE, s.FilePerm())
		if err != nil {
			return "", fmt.Errorf("worktree: %w", err)
		}
		_ = f.Close()
		dir, err := filepath.EvalSymlinks(filepath.Dir(path))
		if err != nil {
			return "", fmt.Errorf("worktree: %w", err)
		}
		rel, err := filepath.Rel(dir, want)
		if err != nil {
			return "", fmt.Errorf("worktree: %w", err)
		}
		if err := replaceWithSymlink(path+".lock", rel); err != nil {
			return "", fmt.Errorf("worktree: share the lock: %w", err)
		}
		msg += "; lock " + path + ".lock -> " + rel
	}
	if tracked, skip := indexFlags(r, wt); tracked && !skip {
		if _, err := gitcmd.Output(wt, "update-index", "--skip-worktree", "--", r.RelFile()); err != nil {
			return msg, fmt.Errorf("worktree: set skip-worktree on %s: %w", r.RelFile(), err)
		}
		msg += "; skip-worktree set on the tracked " + r.RelFile() + " (undo: git update-index --no-skip-worktree " + r.RelFile() + " && git checkout -- " + r.RelFile() + ")"
	}
	return msg, nil
}

// ensureHomeFile creates the home and an empty memory file in it (under the
// writers' lock) if there is none, so that links never dangle.
func ensureHomeFile(s *store.Store) error {
	if err := fsutil.MkdirAll(s.Home, s.DirPerm()); err != nil {
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
func readHomeFile(s *store.Store) ([]byte, error) {
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
