package worktree

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/gitconfig"
	"github.com/memsync/memsync/internal/gitrepo"
	"github.com/memsync/memsync/internal/provenance"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/lock"
	"github.com/memsync/memsync/memfile"
)

// The durability invariant (DESIGN "Durability: what survives what").
//
// The memory lives in the memory home, <common git dir>/memsync/ (Repo.Home):
// memories.md, archive/memories.md and the lock. git's own commands never
// delete or overwrite anything there: git clean, git stash --all and a
// checkout act on the worktree, and the memory files in a worktree are only
// links to the home (the primary worktree's too, and its archive). So a
// command of git can take away a link or put a branch's copy where a link
// was, never an acknowledged entry: Heal, which every memsync command and
// hook runs first, puts the links back, folds a copy found in a link's place
// into the memory by entry (ralph's writes, a branch's tracked file), and
// says what it did. A vanished link is never read as an empty memory: the
// store reads the home, never the worktree.

// Heal checks the links of the primary worktree (memory file and archive)
// and of the current worktree, and repairs what git or another tool did to
// them: a missing link is put back, a regular file where a link belongs is
// folded into the memory (kept as a backup beside itself when it holds
// anything the memory lacks) and replaced by the link, a dangling or wrong
// link is replaced, a file the branch tracks gets the skip-worktree bit. A
// memory file of an older memsync in the primary (a regular file, no memory
// in the home yet) is moved into the home byte for byte, under the lock
// both tools take. With create, the links are made even where the home has
// no memory yet (the first write); without it, a repository without memory
// is left alone. It also pins the layout (git config memsync.layout) when
// it creates or moves the memory. The messages say what it repaired, one
// line each; nothing is said when all is well, which costs a few lstat and
// readlink calls.
func Heal(r *Repo, s *store.Store, create bool) []string {
	var msgs []string
	exists := fileExists(s.Path())
	fresh := !exists || create // a new memory, or a write (Open healed first): its first links are no repair
	var tops []string
	if !r.Bare && !r.InWorktree {
		tops = append(tops, r.Primary)
	}
	if r.IsSecondary() {
		tops = append(tops, r.WorkTree)
	}
	for _, top := range tops {
		path := r.WorktreeFile(top)
		if linkedTo(path, r.MemoryFile()) && (r.Layout != LayoutRalph || isLink(path+".lock")) {
			continue
		}
		fi, err := os.Lstat(path)
		if err == nil && fi.Mode().IsRegular() && !exists && top == r.Primary {
			msg, err := adopt(s, path)
			if err != nil {
				msgs = append(msgs, "cannot move the memory "+path+" into "+s.Home+": "+err.Error())
				continue
			}
			msgs = append(msgs, msg)
			exists = true
		}
		if !exists {
			if create && errors.Is(err, fs.ErrNotExist) && symlinksEnabled(r) && leadsOut(realTop(top), filepath.Dir(path)) == "" {
				// The first write: the link waits for the file the write makes.
				if err := fsutil.MkdirAll(filepath.Dir(path), s.DirPerm()); err == nil {
					_ = replaceWithSymlink(path, relTo(path, s.Path()))
				}
			}
			continue // no memory here yet
		}
		if errors.Is(err, fs.ErrNotExist) && stashed(r, top, path, r.MemoryFile()) {
			continue // git stash pop puts it back
		}
		res, err := Link(r, s, top)
		if err != nil {
			msgs = append(msgs, "cannot link "+path+" to the memory: "+err.Error()+" ('memsync doctor' tells more)")
			continue
		}
		exists = true
		firstLink := fresh && res.Was == StateMissing // a new memory's first link is no repair
		if res.Changed && !firstLink || res.Added > 0 {
			msgs = append(msgs, healMessage(path, res))
		}
	}
	if !r.Bare && !r.InWorktree {
		if msg, err := linkArchive(r, s, create); err != nil {
			msgs = append(msgs, "cannot link the archive: "+err.Error())
		} else if msg != "" {
			msgs = append(msgs, msg)
		}
	}
	if len(msgs) > 0 || create {
		if err := Pin(r, s); err != nil {
			msgs = append(msgs, err.Error()+"; the next write tries again")
		}
	}
	return msgs
}

// healMessage says what Link repaired at path.
func healMessage(path string, res LinkResult) string {
	if res.State != StateLinked {
		return res.Message
	}
	switch res.Was {
	case StateMissing:
		return "linked " + path + " to the memory (it was missing: git clean and git stash --all remove ignored files; the memory itself is kept in the git dir, nothing was lost)"
	case StateCopyDiverged, StateCopyIdentical:
		return "replaced the copy at " + path + " (a branch's tracked file, or a file written where git had removed the link) by the link to the memory; " + res.Message
	}
	return "repaired " + path + ": " + res.Message
}

// stashed tells whether the newest stash entry (git stash --all), the one
// git stash pop applies, holds, at path in the worktree top, the link to
// target that Heal would put back: git stash pop puts it back with the
// rest of what the stash holds, and would fail (".agent/memories.md
// already exists, no checkout", keeping the stash) where Heal had put it
// back first. It is asked only for a missing link, and spawns git only
// where the stash has entries (a reflog of refs/stash); once that entry is
// popped or dropped, or a newer one stashed, Heal links again.
func stashed(r *Repo, top, path, target string) bool {
	log, err := fsutil.ReadFile(filepath.Join(r.CommonDir, "logs", "refs", "stash"), gitrepo.MaxGitFile)
	if err != nil || len(log) == 0 {
		return false
	}
	rel, err := filepath.Rel(top, path)
	if err != nil {
		return false
	}
	want, err := filepath.Rel(filepath.Dir(path), target)
	if err != nil {
		return false
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	f := strings.Fields(lines[len(lines)-1]) // the newest entry: stash@{0}
	if len(f) < 2 || !objectName(f[1]) {
		return false
	}
	in := fmt.Sprintf("%s^3:%s\n", f[1], filepath.ToSlash(rel)) // the entry's untracked and ignored files
	cmd := gitcmd.Command(r.CommonDir, "--git-dir="+r.CommonDir, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.StdoutPipe()
	if err != nil || cmd.Start() != nil {
		return false
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	br := bufio.NewReader(out)
	head, err := br.ReadString('\n')
	if f := strings.Fields(head); err != nil || len(f) != 3 || f[1] != "blob" || f[2] != strconv.Itoa(len(want)) {
		return false // missing, or not the link: its content is not read
	}
	body := make([]byte, len(want))
	_, err = io.ReadFull(br, body)
	return err == nil && string(body) == want
}

// objectName tells a full object name (SHA-1 or SHA-256, in hex).
func objectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// realTop is the worktree top with its symlinks resolved (as given when it
// cannot be).
func realTop(top string) string {
	if real, err := filepath.EvalSymlinks(top); err == nil {
		return real
	}
	return top
}

// fileExists tells whether path exists (a dangling link does not).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// isLink tells whether path is a symlink.
func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// linkedTo tells, cheaply, whether path is a symlink whose text is the
// relative path from path's folder to target, as Link makes it.
func linkedTo(path, target string) bool {
	text, err := os.Readlink(path)
	if err != nil {
		return false
	}
	want, err := filepath.Rel(filepath.Dir(path), target)
	return err == nil && text == want
}

// adopt moves the memory file of an older memsync (a regular file at path,
// the primary's) into the empty home, byte for byte, holding both the
// memory's lock and the lock beside path (the one ralph and older memsync
// versions take), so no writer of either kind is lost while it moves; that
// lock file moves into the home too, with its inode (see package lock: a
// waiter whose lock file was replaced takes the new one). The caller then
// links path.
func adopt(s *store.Store, path string) (string, error) {
	old, err := lock.Exclusive(context.Background(), lock.PathFor(path), s.LockTimeout)
	if err != nil {
		return "", err
	}
	defer func() { _ = old.Release() }()
	moved := false
	err = s.WithLock(func() error {
		if fileExists(s.Path()) {
			return nil // another process moved it first
		}
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("worktree: %w", err)
		}
		if err := fsutil.WriteFile(s.Path(), data, fi.Mode().Perm()); err != nil {
			return fmt.Errorf("worktree: move the memory into %s: %w", s.Home, err)
		}
		moved = true
		if err := replaceWithSymlink(path, relTo(path, s.Path())); err != nil {
			return err
		}
		return moveLock(lock.PathFor(path), lock.PathFor(s.Path()))
	})
	if err != nil || !moved {
		return "", err
	}
	return "moved the memory " + path + " into " + s.Home + " (where git clean, stash and checkout cannot reach it); " + path + " is now a link to it", nil
}

// moveLock moves the lock file oldLock (ralph's, an older memsync's) to
// newLock, keeping its inode, and leaves a link to it at oldLock: a writer
// that opened it (ralph) and waits for it then holds the memory's lock. The
// old path names that inode at every moment (a hard link at newLock first,
// then the link swapped in by a rename), so a writer starting meanwhile
// never creates a lock file of its own there and writes beside the others.
// On a file system without hard links it is renamed, leaving that moment.
func moveLock(oldLock, newLock string) error {
	fi, err := os.Lstat(oldLock)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	tmp := newLock + ".move"
	_ = os.Remove(tmp) // left by a process that died here
	if err := os.Link(oldLock, tmp); err == nil {
		lockMoveStep()
		err = os.Rename(tmp, newLock)
		if err != nil {
			_ = os.Remove(tmp)
			return fmt.Errorf("worktree: move the lock into %s: %w", filepath.Dir(newLock), err)
		}
	} else if err := os.Rename(oldLock, newLock); err != nil {
		return fmt.Errorf("worktree: move the lock into %s: %w", filepath.Dir(newLock), err)
	}
	lockMoveStep()
	return replaceWithSymlink(oldLock, relTo(oldLock, newLock))
}

// lockMoveStep is called between moveLock's steps (tests look there).
var lockMoveStep = func() {}

// relTo is the relative symlink text from path's folder to target.
func relTo(path, target string) string {
	dir := filepath.Dir(path)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	rel, err := filepath.Rel(dir, target)
	if err != nil {
		return target
	}
	return rel
}

// linkArchive keeps the primary's archive/memories.md a link to the home's
// archive: an archive of an older memsync (a regular file) is moved into the
// home when the home has none, else its entries the home's archive lacks
// are added to it (the file kept as a backup beside itself); a missing or
// wrong link is put back when the home has an archive (or with create).
func linkArchive(r *Repo, s *store.Store, create bool) (string, error) {
	path := filepath.Join(r.WorkDir(), "archive", "memories.md")
	home := s.ArchivePath()
	if linkedTo(path, home) {
		return "", nil
	}
	fi, err := os.Lstat(path)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", nil // no folder where one belongs: doctor says so
	case err != nil && !create && !fileExists(home):
		return "", nil
	case err != nil && stashed(r, r.Primary, path, home):
		return "", nil // git stash pop puts it back
	}
	if _, err := os.Stat(r.WorkDir()); err != nil || leadsOut(realTop(r.Primary), filepath.Dir(path)) != "" {
		return "", nil // a memory or archive folder that leads out of the worktree is never written: doctor reports it
	}
	if work, dir := fsutil.ResolveDir("", r.WorkDir()), fsutil.ResolveDir("", filepath.Dir(path)); dir == work || !gitrepo.PathWithin(dir, work) {
		// An archive folder that links back to the memory folder (its
		// archive/memories.md would be the memory's link) or elsewhere
		// (the git dir) is not the archive's place.
		return "", nil
	}
	msg := ""
	if fi != nil && fileExists(home) {
		msg = "linked " + path + " to the archive in " + s.Home
	}
	if fi != nil && fi.Mode().IsRegular() {
		m, err := moveArchive(s, path, fi.Mode().Perm())
		if err != nil {
			return "", err
		}
		msg = m
	}
	if err := fsutil.MkdirAll(filepath.Dir(path), s.DirPerm()); err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	if err := fsutil.MkdirAll(filepath.Dir(home), s.DirPerm()); err != nil { // the home's, shared as the repository is
		return "", fmt.Errorf("worktree: %w", err)
	}
	if err := replaceWithSymlink(path, relTo(path, home)); err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	return msg, nil
}

// moveArchive moves the regular archive file at path into the home's
// archive: byte for byte when the home has none, else by adding the
// entries the home's archive lacks (keeping the file as a backup beside
// itself first). It returns what it did.
func moveArchive(s *store.Store, path string, perm fs.FileMode) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	home := s.ArchivePath()
	moved := false
	err = s.WithLock(func() error {
		if fileExists(home) {
			return nil
		}
		if err := fsutil.MkdirAll(filepath.Dir(home), s.DirPerm()); err != nil {
			return fmt.Errorf("worktree: %w", err)
		}
		moved = true
		return fsutil.WriteFile(home, data, perm)
	})
	if err != nil {
		return "", fmt.Errorf("worktree: move the archive into %s: %w", s.Home, err)
	}
	if moved {
		return "moved the archive " + path + " into " + s.Home + "; " + path + " is now a link to it", nil
	}
	copied := memfile.Parse(data)
	n, backup := 0, ""
	err = s.UpdateArchive(func(f *memfile.File) error {
		if covered(f, copied) {
			return errNoChange
		}
		backup = path + ".bak-" + BackupStamp()
		if err := fsutil.WriteFile(backup, data, 0o644); err != nil {
			return fmt.Errorf("worktree: keep a backup of the archive copy: %w", err)
		}
		if n = union(f, copied, nil, provenance.Info{}); n == 0 {
			return errNoChange
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoChange) {
		return "", err
	}
	if n == 0 {
		return "linked " + path + " to the archive in " + s.Home, nil
	}
	return fmt.Sprintf("added %d archived entr%s from %s to the archive (the file is kept as %s); %s is now a link to it", n, plural(n), path, backup, path), nil
}

func plural(n int) string {
	if n == 1 {
		return "y"
	}
	return "ies"
}

// Pin records the layout and where the memory lives in the repository's
// git config (memsync.layout, memsync.home) when they are not set, and the
// primary worktree of a separate git dir (memsync.primary), so that
// a file of the other layout appearing later (a ralph run in the primary, a
// merged branch) never switches the memory silently. It reads the config
// files first: once pinned it costs no git process. The git config runs
// under the memory's lock s, so memsync processes writing at once never
// race on git's config lock.
func Pin(r *Repo, s *store.Store) error {
	home := "gitdir"
	if r.InWorktree {
		home = "worktree"
	}
	want := map[string]string{LayoutKey: string(r.Layout), HomeKey: home}
	keys := []string{LayoutKey, HomeKey}
	if r.Bare {
		keys = keys[:1] // a bare repository has no worktree of its own to keep the memory in
	}
	if gitrepo.RecordPrimary(r) { // a separate git dir: linked worktrees learn the primary from it
		keys, want[gitrepo.PrimaryKey] = append(keys, gitrepo.PrimaryKey), r.Primary
	}
	unset := func() []string {
		cfg := gitconfig.Repo(r.CommonDir, r.CommonDir)
		var missing []string
		for _, k := range keys {
			if v, ok := cfg.Get(k); !ok || k == gitrepo.PrimaryKey && v != want[k] {
				missing = append(missing, k)
			}
		}
		return missing
	}
	if gitrepo.Pinned(r) || len(unset()) == 0 {
		return nil
	}
	defer func() { gitrepo.SetPinned(r, len(unset()) == 0) }()
	return s.WithLock(func() error {
		for _, k := range unset() {
			if _, err := gitcmd.Output(r.CommonDir, "--git-dir="+r.CommonDir, "config", k, want[k]); err != nil {
				return fmt.Errorf("worktree: pin the memory (git config %s %s): %w", k, want[k], err)
			}
		}
		return nil
	})
}

// UseWorktreeHome makes the primary worktree's file the memory
// (memsync.home=worktree), for a memory that branches track (memsync init
// --merge-driver): the memory and archive in the git dir, if any, are moved
// byte for byte over the primary's links, under the memory's lock, and r
// and s then name the new home.
func UseWorktreeHome(r *Repo, s *store.Store) error {
	if r.Bare || r.InWorktree {
		return nil
	}
	home := filepath.Join(r.Primary, filepath.FromSlash(r.MemDir()))
	err := s.WithLock(func() error {
		for _, f := range []struct{ from, to string }{
			{s.Path(), filepath.Join(home, "memories.md")},
			{s.ArchivePath(), filepath.Join(home, "archive", "memories.md")},
		} {
			data, err := os.ReadFile(f.from)
			if errors.Is(err, fs.ErrNotExist) {
				if isLink(f.to) {
					_ = os.Remove(f.to) // a link to nothing
				}
				continue
			}
			if err != nil {
				return fmt.Errorf("worktree: %w", err)
			}
			if err := os.MkdirAll(filepath.Dir(f.to), 0o755); err != nil {
				return fmt.Errorf("worktree: %w", err)
			}
			if err := fsutil.WriteFile(f.to, data, 0o644); err != nil {
				return fmt.Errorf("worktree: move the memory to %s: %w", f.to, err)
			}
			if err := os.Remove(f.from); err != nil {
				return fmt.Errorf("worktree: %w", err)
			}
		}
		_, err := gitcmd.Output(r.CommonDir, "--git-dir="+r.CommonDir, "config", HomeKey, "worktree")
		return err
	})
	if err != nil {
		return err
	}
	r.InWorktree, r.Home, s.Home = true, home, home
	return nil
}

// OtherLayoutFile returns the memory file of the layout memsync does not use
// in the primary worktree when one is there and is not a link to the
// memory ("" otherwise): a ralph run in an .agent repository, or a merged
// branch that committed the other file. Doctor reports it; FoldOther folds it.
func OtherLayoutFile(r *Repo) string {
	if r.Bare {
		return ""
	}
	other := ".agent/memories.md"
	if r.Layout == LayoutAgent {
		other = ".ralph/agent/memories.md"
	}
	path := filepath.Join(r.Primary, filepath.FromSlash(other))
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return path
}

// FoldOther folds the entries of the other layout's file (OtherLayoutFile)
// into the memory and moves the file aside as a backup, so that what ralph
// or a branch wrote there is kept and nothing switches layout. The entries
// it adds record the primary worktree as where they were written.
func FoldOther(r *Repo, s *store.Store, path string) (FoldResult, error) {
	backup := path + ".bak-" + BackupStamp()
	res, err := fold(s, path, backup, false, writer(r, r.Primary))
	if err != nil {
		return res, err
	}
	if res.Backup == "" {
		if err := os.Rename(path, backup); err != nil {
			return res, fmt.Errorf("worktree: %w", err)
		}
		res.Backup = backup
		return res, nil
	}
	return res, os.Remove(path)
}
