package history

import (
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
	return filesystem.NewStorageWithOptions(osfs.New(commonDir), cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
}

// reopen opens the storage again, to see the objects and packs another
// process (a fetch) just wrote, and closes the old one's files.
func (h *History) reopen() {
	if h.st != nil {
		_ = h.st.Close()
	}
	h.st = openStorage(h.Repo.CommonDir)
}
