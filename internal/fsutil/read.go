package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// TooLargeError is ReadFile's error for a file over its limit.
type TooLargeError struct {
	Path        string
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, larger than the %d bytes read here", e.Path, e.Size, e.Limit)
}

// ReadFile reads the regular file at path (a symlink to one is followed) of
// at most limit bytes. Anything else (a pipe, which would block the read
// until someone writes to it; a device such as /dev/zero, which never ends;
// a folder) is an error naming path, found before the file is opened, and
// again once it is (ReadOpen: one swapped in meanwhile is not read).
func ReadFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, fi, limit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadOpen(f, path, limit)
}

// ReadOwn reads a file memsync writes itself (a state file, a cache) of at
// most limit bytes: never through a symlink at path (O_NOFOLLOW), never a
// pipe or a device (opened with O_NONBLOCK, then ReadOpen's checks), so a
// state file someone replaced by a link to /dev/zero or a pipe, or by a
// huge file, is an error naming path, never a hang or an allocation past
// limit.
func ReadOwn(path string, limit int64) ([]byte, error) {
	f, err := OpenOwn(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadOpen(f, path, limit)
}

// OpenOwn opens for reading a file memsync writes itself, as ReadOwn does,
// for a caller that reads it as a stream: a regular file, never through a
// symlink; anything else is an error naming path.
func OpenOwn(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|NoFollow|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symlink, not a file of memsync's own: not read (remove the link): %w", path, syscall.ELOOP)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// ReadOpen reads f, opened at path with O_NONBLOCK (so that opening a pipe
// did not wait for a writer), when it is a regular file of at most limit
// bytes; anything else is ReadFile's error.
func ReadOpen(f *os.File, path string, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(path, fi, limit); err != nil {
		return nil, err
	}
	// Exactly the size seen: a file that grows meanwhile is read in part
	// (and fails its parse or checksum), never past limit.
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// regular is ReadFile's check of what is at path.
func regular(path string, fi os.FileInfo, limit int64) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if fi.Size() > limit {
		return &TooLargeError{path, fi.Size(), limit}
	}
	return nil
}

// OutsideError is ReadWithin's error for a path that leads out of its root.
type OutsideError struct {
	Path, Target, Root string
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%s leads outside %s, to %s: not read", e.Path, e.Root, e.Target)
}

// ReadWithin is ReadFile for a file that someone else controls (a cloned
// repository's, an import's): path, resolved through every symlink, must
// lie inside root (resolved too), else the error is an *OutsideError naming
// the path and where it leads; and it must be a regular file of at most
// limit bytes (a link to /dev/zero is refused before it is opened).
func ReadWithin(path, root string, limit int64) ([]byte, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil && !errors.As(err, new(*fs.PathError)) {
		// filepath.EvalSymlinks's errors of its own name no path: something
		// that is no folder on the way (ENOTDIR), or a loop of links (a
		// bare message, here ELOOP).
		if !errors.Is(err, syscall.ENOTDIR) {
			err = syscall.ELOOP
		}
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if err != nil {
		return nil, err
	}
	top, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(top, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, &OutsideError{Path: path, Target: real, Root: root}
	}
	return ReadFile(real, limit)
}

// ResolveDir resolves the symlinks of a folder that may not exist yet: its
// nearest existing ancestor is resolved and the rest joined to it, so a
// folder memsync would create under a symlink (also a dangling one) is
// judged where it would land. base, when not "", is a folder known to be
// resolved (the memory home's parent, for store.Store): under it only the
// rest of the path is looked at (evalBelow).
func ResolveDir(base, dir string) string {
	for range 40 {
		rest := ""
		d := dir
		for {
			if real, err := evalBelow(base, d); err == nil {
				return filepath.Join(real, rest)
			}
			if fi, err := os.Lstat(d); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				break // a dangling link: follow it by hand
			}
			if filepath.Dir(d) == d {
				return dir
			}
			rest = filepath.Join(filepath.Base(d), rest)
			d = filepath.Dir(d)
		}
		dest, err := os.Readlink(d)
		if err != nil {
			return dir
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(d), dest)
		}
		dir = filepath.Join(dest, rest)
	}
	return dir
}

// evalBelow is filepath.EvalSymlinks(path) for a path that may lie below
// base, a folder with no symlink on its way (or ""): below base, each
// folder is checked once, and only a symlink among them sends the whole
// path through filepath.EvalSymlinks. Without it every resolution walked
// every folder from the root again.
func evalBelow(base, path string) (string, error) {
	rel, err := filepath.Rel(base, path)
	if base == "" || err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.EvalSymlinks(path)
	}
	at := base
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		at = filepath.Join(at, part)
		fi, err := os.Lstat(at)
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return filepath.EvalSymlinks(path)
		}
	}
	return filepath.Clean(path), nil
}
