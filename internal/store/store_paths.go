package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/lock"
)

// Resolve returns the real path of a file in the home (symlinks followed,
// also a dangling one), and refuses one that lies outside the home or that
// exists and is no regular file (a folder, a pipe).
func (s *Store) Resolve(path string) (string, error) {
	target := path
	for range 40 {
		fi, err := os.Lstat(target)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		dest, err := os.Readlink(target)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(target), dest)
		}
		target = filepath.Clean(dest)
	}
	home := filepath.Clean(s.Home)
	target = filepath.Join(fsutil.ResolveDir(filepath.Dir(home), filepath.Dir(target)), filepath.Base(target))
	// The home's own parents are resolved too (where a caller passed them
	// unresolved), the home itself not: a .agent that is a link out of the
	// worktree leads outside. Only when needed: callers pass them resolved.
	if !within(home, target) && !within(filepath.Join(fsutil.ResolveDir("", filepath.Dir(home)), filepath.Base(home)), target) {
		return "", &PathError{Path: path, Target: target, Link: s.linkOn(path),
			Why: "resolves outside the memory home " + home + ", to " + target}
	}
	if fi, err := os.Stat(target); err == nil && !fi.Mode().IsRegular() {
		kind := "not a regular file"
		if fi.IsDir() {
			kind = "a directory"
		}
		return "", &PathError{Path: path, Target: target, notDir: true, Why: "is " + kind + ", not a memory file"}
	}
	return target, nil
}

// within tells whether path lies strictly inside dir (both clean).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// linkOn returns the first symlink on the way to path, from the memory home
// down (the home itself, a folder in it, the file), "" when there is none:
// the link to name when path resolves where it must not.
func (s *Store) linkOn(path string) string {
	home := filepath.Clean(s.Home)
	steps := []string{filepath.Dir(path), path}
	if rel, err := filepath.Rel(home, path); err == nil && !strings.HasPrefix(rel, "..") {
		steps = []string{home}
		for at, part := home, strings.Split(rel, string(filepath.Separator)); len(part) > 0 && rel != "."; part = part[1:] {
			at = filepath.Join(at, part[0])
			steps = append(steps, at)
		}
	}
	for _, p := range steps {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return p
		}
	}
	return ""
}

// paths are the files of a store, resolved and checked.
type paths struct{ memory, archive, lock string }

// PathProblems checks every path the store writes: the active file, the
// archive and the lock each resolve inside the home and are no folder, and
// no two of them are the same file. It returns one *PathError per problem.
func (s *Store) PathProblems() []error {
	_, errs := s.checkPaths()
	return errs
}

func (s *Store) checkPaths() (paths, []error) {
	var p paths
	var errs []error
	names := []string{s.Path(), s.ArchivePath(), ""}
	real := []*string{&p.memory, &p.archive, &p.lock}
	for i := range names {
		if i == 2 {
			if p.memory == "" {
				break // the lock is beside the resolved active file
			}
			names[2] = lock.PathFor(p.memory)
		}
		t, err := s.Resolve(names[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		*real[i] = t
	}
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if *real[i] == "" || *real[j] == "" || !sameFile(*real[i], *real[j]) {
				continue
			}
			a, b := names[i], names[j]
			if s.linkOn(b) != "" && s.linkOn(a) == "" {
				a, b = b, a
			}
			errs = append(errs, &PathError{Path: a, Other: b, Target: *real[i], Link: s.linkOn(a),
				Why: "and " + b + " are the same file (" + *real[i] + "); memsync never writes one through the other"})
		}
	}
	return p, errs
}

// sameFile tells whether two resolved paths are one file (one name, or hard links).
func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// resolvePaths is checkPaths' first problem as an error.
func (s *Store) resolvePaths() (paths, error) {
	p, errs := s.checkPaths()
	if len(errs) > 0 {
		return p, errs[0]
	}
	return p, nil
}

// LockPath is the one lock file of the home: beside the resolved active file,
// itself resolved. A symlink there is followed while it stays in the home (a
// worktree's lock link), and refused when it leaves the home or when the
// lock, the active file and the archive are not three files.
func (s *Store) LockPath() (string, error) {
	p, err := s.resolvePaths()
	return p.lock, err
}

// readLockPath is the lock a reader takes: beside the resolved active file,
// resolved inside the home, not the memory file itself. Unlike LockPath it
// does not judge the archive, so a bad archive link never stops a read of
// the active memory.
func (s *Store) readLockPath() (string, error) {
	mem, err := s.Resolve(s.Path())
	if err != nil {
		return "", err
	}
	lp, err := s.Resolve(lock.PathFor(mem))
	if err != nil {
		return "", err
	}
	if sameFile(lp, mem) {
		return s.LockPath() // names the alias
	}
	return lp, nil
}

// StaleTemps lists the temp files that killed rewrites left beside the
// active file and the archive (and their backups) and in StateDir: those no
// live process is writing (see fsutil.StaleTemps).
func (s *Store) StaleTemps() ([]string, error) {
	var out []string
	seen := map[string]bool{}
	dirs := []string{}
	for _, p := range []string{s.Path(), s.ArchivePath()} {
		if t, err := s.Resolve(p); err == nil {
			dirs = append(dirs, filepath.Dir(t))
		}
	}
	if fi, err := os.Lstat(s.StateDir); s.StateDir != "" && err == nil && fi.IsDir() {
		dirs = append(dirs, s.StateDir) // a link or a file there is doctor's "state" finding
	}
	for _, dir := range dirs {
		if seen[dir] {
			continue
		}
		seen[dir] = true
		stale, err := fsutil.StaleTemps(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, stale...)
	}
	return out, nil
}

// RemoveStaleTemps removes StaleTemps under the writers' lock, so no memsync
// rewrite is under way, and returns the files it removed.
func (s *Store) RemoveStaleTemps() ([]string, error) {
	var removed []string
	err := s.WithLock(func() error {
		stale, err := s.StaleTemps()
		for _, p := range stale {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			removed = append(removed, p)
		}
		return err
	})
	return removed, err
}
