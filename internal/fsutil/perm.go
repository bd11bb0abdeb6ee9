package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Shared is a repository's core.sharedRepository as git encodes it (see
// git-config(1) and gitconfig.Config.SharedRepository): how the files and
// folders created in the repository are shared with other users. The zero
// value, SharedUmask, leaves modes to the process's umask; SharedGroup and
// SharedEverybody add group (and others') access; a negative value is
// -(0xxx), an exact mode. memsync gives the files and folders it creates the
// modes git gives its own (git's adjust_shared_perm): File and Dir.
type Shared int

// The values of core.sharedRepository that are no exact mode.
const (
	SharedUmask     Shared = 0     // "umask", "false": the umask decides
	SharedGroup     Shared = 0o660 // "group", "true": the group may read and write
	SharedEverybody Shared = 0o664 // "all", "world", "everybody": others may read too
)

// umask is the process's file mode creation mask, read once at start (the
// only way to read it sets it; at start no other goroutine creates files).
var umask = readUmask()

// File is the mode of a file created with perm: perm without the umask's
// bits, as open(2) gives it, then given the repository's sharing as git
// gives it to its files.
func (s Shared) File(perm os.FileMode) os.FileMode {
	return os.FileMode(s.adjust(int(perm.Perm()) &^ umask))
}

// Dir is the mode of a folder created with perm: as File, and where the
// repository is shared, every read bit also an execute bit, and setgid when
// the group gets access (new files then belong to the folder's group), as
// git makes its folders.
func (s Shared) Dir(perm os.FileMode) os.FileMode {
	mode := s.adjust(int(perm.Perm()) &^ umask)
	if s == SharedUmask {
		return os.FileMode(mode)
	}
	mode |= (mode & 0o444) >> 2
	m := os.FileMode(mode)
	if mode&0o060 != 0 {
		m |= os.ModeSetgid
	}
	return m
}

// adjust is git's calc_shared_perm.
func (s Shared) adjust(mode int) int {
	if s == SharedUmask {
		return mode
	}
	tweak := int(s)
	if tweak < 0 {
		tweak = -tweak
	}
	if mode&0o200 == 0 {
		tweak &^= 0o222 // a read-only file stays read-only
	}
	if mode&0o100 != 0 {
		tweak |= (tweak & 0o444) >> 2
	}
	if s < 0 {
		return mode&^0o777 | tweak
	}
	return mode | tweak
}

// OpenFile opens a file memsync writes: as os.OpenFile, but a symlink at
// path is refused (O_NOFOLLOW), and a file it creates (flag holds O_CREATE)
// gets exactly perm, whatever the umask (pass Shared.File's mode).
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	flag |= NoFollow
	if flag&os.O_CREATE == 0 {
		return os.OpenFile(path, flag, 0)
	}
	for {
		f, err := os.OpenFile(path, flag|os.O_EXCL, perm)
		if err == nil {
			if err := f.Chmod(perm); err != nil {
				_ = f.Close()
				return nil, err
			}
			return f, nil
		}
		if flag&os.O_EXCL != 0 || !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		f, err = os.OpenFile(path, flag&^os.O_CREATE, 0)
		if !errors.Is(err, fs.ErrNotExist) {
			return f, err
		}
		// Removed between the two opens: create it again.
	}
}

// MkdirAll creates the folder path and its missing parents, each with
// exactly perm (pass Shared.Dir's mode; setgid included), whatever the
// umask. Folders that exist keep their mode.
func MkdirAll(path string, perm os.FileMode) error {
	fi, err := os.Stat(path)
	if err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: path, Err: syscall.ENOTDIR}
		}
		return nil
	}
	if parent := filepath.Dir(path); parent != path {
		if err := MkdirAll(parent, perm); err != nil {
			return err
		}
	}
	if err := os.Mkdir(path, perm.Perm()); err != nil {
		if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
			return nil // made meanwhile by another process
		}
		return err
	}
	return os.Chmod(path, perm)
}
