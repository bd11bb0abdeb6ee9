package history

import (
	"bufio"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// openStorage opens go-git's object storage over the common git dir, where
// a repository's objects and shared refs live. go-git's PlainOpen would
// refuse a repository with extensions.worktreeConfig; the storage does not.
func openStorage(commonDir string) *filesystem.Storage {
	return filesystem.NewStorage(bufferedFS{osfs.New(commonDir)}, cache.NewObjectLRUDefault())
}

// bufferedFS buffers writes to the temporary files go-git writes objects
// into. go-git hands them straight to its zlib writer, which writes every
// 240 bytes: thousands of system calls for a large memory.
type bufferedFS struct{ billy.Filesystem }

// TempFile is the file system's temporary file, with buffered writes.
func (fs bufferedFS) TempFile(dir, prefix string) (billy.File, error) {
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
