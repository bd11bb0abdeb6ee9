package worktree

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/gitconfig"
	"github.com/memsync/memsync/memfile"
)

// HealLink repairs the memory link of the current worktree when it is a
// symlink that no longer reaches the memory (git worktree move to another
// depth breaks a relative link; ralph there would fail with ENOENT): the
// link is replaced by one that reaches it, never written through. It costs
// an lstat and a readlink when the link is good, and returns what it
// repaired ("" when nothing).
func HealLink(r *Repo, s *memfile.Store) (string, error) {
	if !r.IsSecondary() {
		return "", nil
	}
	path := r.WorktreeFile(r.WorkTree)
	if linkedTo(path, r.MemoryFile()) {
		return "", nil
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return "", nil // no link here: nothing was linked, or a copy doctor reports
	}
	if _, err := os.Stat(path); err == nil {
		return "", nil // a link that reaches a file: Inspect and doctor judge it
	}
	if _, err := os.Stat(r.MemoryFile()); err != nil {
		return "", nil
	}
	res, err := Link(r, s, r.WorkTree)
	if err != nil || !res.Changed {
		return "", err
	}
	return "repaired the memory link of this worktree (it no longer reached the memory, as after git worktree move): " + res.Message, nil
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

// PinLayout records the layout in the repository's git config
// (memsync.layout) when it is not set, so that a file of the other layout
// appearing later (a ralph run in the primary, a merged branch) never
// switches the memory silently. It reads the config files first: a set
// layout costs no git process. The git config runs under the memory's lock
// s, so memsync processes writing at once never race on git's config lock.
func PinLayout(r *Repo, s *memfile.Store) error {
	pinned := func() bool { _, ok := gitconfig.Repo(r.CommonDir, r.CommonDir).Get(LayoutKey); return ok }
	if pinned() {
		return nil
	}
	err := s.WithLock(func() error {
		if pinned() {
			return nil // another process pinned it first
		}
		_, err := gitcmd.Output(r.CommonDir, "--git-dir="+r.CommonDir, "config", LayoutKey, string(r.Layout))
		return err
	})
	if err != nil {
		return fmt.Errorf("worktree: pin the layout (git config %s %s): %w", LayoutKey, r.Layout, err)
	}
	r.LayoutWhy = "set by git config " + LayoutKey + "=" + string(r.Layout) + " (pinned when memsync first wrote)"
	return nil
}

// OtherLayoutFile returns the memory file of the layout memsync does not use
// when the primary worktree has one ("" otherwise): a ralph run in an
// .agent repository, or a merged branch that committed the other file.
// Doctor reports it; FoldOther folds it in.
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
// or a branch wrote there is kept and the layout does not switch.
func FoldOther(s *memfile.Store, path string) (FoldResult, error) {
	backup := path + ".bak-" + BackupStamp()
	res, err := Fold(s, path, backup)
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
