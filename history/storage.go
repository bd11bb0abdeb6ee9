package history

import (
	"bufio"
	"os"
	"path/filepath"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/memsync/memsync/internal/fsutil"
)

// openStorage opens go-git's object storage over the common git dir, where
// a repository's objects and shared refs live. go-git's PlainOpen would
// refuse a repository with extensions.worktreeConfig; the storage does not.
// The objects and folders it writes get the modes git gives its own under
// core.sharedRepository (shared).
func openStorage(commonDir string, shared fsutil.Shared) *filesystem.Storage {
	return filesystem.NewStorage(bufferedFS{osfs.New(commonDir), shared}, cache.NewObjectLRUDefault())
}

// bufferedFS buffers writes to the temporary files go-git writes objects
// into. go-git hands them straight to its zlib writer, which writes every
// 240 bytes: thousands of system calls for a large memory. It also gives
// the files and folders go-git makes the repository's sharing: go-git makes
// folders 0755 and, through Chmod, an object 0444, where git (and another
// user of a group-shared repository) wants group-writable setgid folders.
type bufferedFS struct {
	billy.Filesystem
	shared fsutil.Shared
}

// Chmod sets the mode go-git asks for (0444 for an object), shared as git
// shares its objects. Without it go-git leaves an object with its temp
// file's 0600, which no other user can read.
func (fs bufferedFS) Chmod(name string, mode os.FileMode) error {
	return os.Chmod(fs.abs(name), fs.shared.File(mode))
}

// MkdirAll creates folders with the mode git gives its own.
func (fs bufferedFS) MkdirAll(name string, _ os.FileMode) error {
	return fsutil.MkdirAll(fs.abs(name), fs.shared.Dir(0o777))
}

// Rename creates the target's folder (an object's objects/xx) as MkdirAll
// does, then renames.
func (fs bufferedFS) Rename(from, to string) error {
	if err := fs.MkdirAll(filepath.Dir(to), 0); err != nil {
		return err
	}
	return fs.Filesystem.Rename(from, to)
}

func (fs bufferedFS) abs(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(fs.Root(), name)
}

// TempFile is the file system's temporary file, with buffered writes, in a
// folder made as MkdirAll makes it.
func (fs bufferedFS) TempFile(dir, prefix string) (billy.File, error) {
	if err := fs.MkdirAll(dir, 0); err != nil {
		return nil, err
	}
	f, err := fs.Filesystem.TempFile(dir, prefix)
	if err != nil {
		return nil, err
	}
	return &bufferedFile{File: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// bufferedFile buffers writes; everything else flushes them first.
type bufferedFile struct {
	billy.File
	w *bufio.Writer
}

func (f *bufferedFile) Write(p []byte) (int, error) { return f.w.Write(p) }

func (f *bufferedFile) Read(p []byte) (int, error) {
	if err := f.w.Flush(); err != nil {
		return 0, err
	}
	return f.File.Read(p)
}

func (f *bufferedFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.w.Flush(); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *bufferedFile) Seek(offset int64, whence int) (int64, error) {
	if err := f.w.Flush(); err != nil {
		return 0, err
	}
	return f.File.Seek(offset, whence)
}

func (f *bufferedFile) Truncate(size int64) error {
	if err := f.w.Flush(); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

func (f *bufferedFile) Close() error {
	err := f.w.Flush()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}
