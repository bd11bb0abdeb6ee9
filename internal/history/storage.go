package history

import (
	"bufio"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// openStorage opens go-git's object storage over the common git dir, where
// a repository's objects and shared refs live, for reading (snapshots are
// written as packs: pack.go). go-git's PlainOpen would refuse a repository
// with extensions.worktreeConfig; the storage does not. Pack files stay
// open once read (a merge reads a few objects from each of many packs;
// opening them again for every object cost more than the merge), until
// the storage is closed or reopened.
func openStorage(commonDir string) *filesystem.Storage {
	return filesystem.NewStorageWithOptions(bufferedIdx{osfs.New(commonDir)}, cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
}

// reopen opens the storage again, to see the objects and packs another
// process (a fetch) just wrote, and closes the old one's files.
func (h *History) reopen() {
	if h.st != nil {
		_ = h.st.Close()
	}
	h.st = openStorage(h.Repo.CommonDir)
}

// bufferedIdx is a file system whose pack indexes (.idx) are read through
// a buffer: go-git's decoder reads an index a few bytes at a time, one
// system call each, thousands for a pack of a few thousand objects.
type bufferedIdx struct{ billy.Filesystem }

// Open opens name, buffered for reading when it is a pack index.
func (fs bufferedIdx) Open(name string) (billy.File, error) {
	f, err := fs.Filesystem.Open(name)
	if err != nil || !strings.HasSuffix(name, ".idx") {
		return f, err
	}
	return &bufferedFile{File: f, r: bufio.NewReaderSize(f, 64<<10)}, nil
}

// bufferedFile is a file read through r; the decoder only reads it from
// start to end.
type bufferedFile struct {
	billy.File
	r *bufio.Reader
}

func (f *bufferedFile) Read(p []byte) (int, error) { return f.r.Read(p) }
