package history

import (
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// openStorage opens go-git's object storage over the common git dir, where
// a repository's objects and shared refs live, for reading (snapshots are
// written as packs: pack.go). go-git's PlainOpen would refuse a repository
// with extensions.worktreeConfig; the storage does not.
func openStorage(commonDir string) *filesystem.Storage {
	return filesystem.NewStorage(osfs.New(commonDir), cache.NewObjectLRUDefault())
}
