package history

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/memsync/memsync/internal/fsutil"
)

// openStorage opens go-git's object storage over the common git dir, where
// a repository's objects and shared refs live, for reading (snapshots are
// written as packs: pack.go). go-git's PlainOpen would refuse a repository
// with extensions.worktreeConfig; the storage does not. Pack files stay
// open once read (a merge reads a few objects from each of many packs;
// opening them again for every object cost more than the merge), until
// the storage is closed or reopened. A pack without its index is not
// there, and indexes are read through a buffer (indexedPacks).
func openStorage(commonDir string) *filesystem.Storage {
	fs := indexedPacks{osfs.New(commonDir)}
	return filesystem.NewStorageWithOptions(fs, cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
}

// reopen opens the storage again, to see the objects and packs another
// process (a fetch) just wrote, and closes the old one's files.
func (h *History) reopen() {
	if h.st != nil {
		_ = h.st.Close()
	}
	h.st = openStorage(h.Repo.CommonDir)
}

// indexedPacks is the common git dir as git sees its packs: go-git lists
// objects/pack/pack-*.pack and fails every read when one has no .idx, but
// git finds packs by their index and writes a pack before its index (and
// removes the index first), so a pack without one is one being moved into
// place or a leftover of a killed process, and is left out.
type indexedPacks struct{ billy.Filesystem }

// ReadDir lists a folder, leaving out of objects/pack the packs without an
// index.
func (fs indexedPacks) ReadDir(path string) ([]os.FileInfo, error) {
	infos, err := fs.Filesystem.ReadDir(path)
	if err != nil || filepath.ToSlash(filepath.Clean(path)) != "objects/pack" {
		return infos, err
	}
	idx := map[string]bool{}
	for _, fi := range infos {
		if base, ok := strings.CutSuffix(fi.Name(), ".idx"); ok {
			idx[base] = true
		}
	}
	kept := infos[:0]
	for _, fi := range infos {
		if base, ok := strings.CutSuffix(fi.Name(), ".pack"); !ok || idx[base] {
			kept = append(kept, fi)
		}
	}
	return kept, nil
}

// Open opens name, through a buffer when it is a pack index: go-git's
// decoder reads an index a few bytes at a time, one system call each,
// thousands for a pack of a few thousand objects.
func (fs indexedPacks) Open(name string) (billy.File, error) {
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

// Capabilities are the underlying filesystem's.
func (fs indexedPacks) Capabilities() billy.Capability { return billy.Capabilities(fs.Filesystem) }

// orphanPackAge is the age past which a pack without an index or a .keep
// is a leftover: git renames a pack's index into place right after the
// pack.
const orphanPackAge = 10 * time.Minute

// removeOrphanPacks removes what killed processes left in the pack folder,
// once older than orphanPackAge: a .keep that a snapshot wrote (a
// snapshot killed before its ref moved; its pack becomes an ordinary one,
// which Maintain rolls up and git gc prunes), and packs without an index
// or a .keep (a process killed between removing a rolled-up pack's index
// and the pack): nothing reads them, and they hold no object another pack
// does not. Other .keep files (git's, a person's) are never touched.
func (h *History) removeOrphanPacks() error {
	dir := filepath.Join(h.Repo.CommonDir, "objects", "pack")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, e := range entries {
		have[e.Name()] = true
		if strings.HasSuffix(e.Name(), ".keep") && staleSnapshotKeep(filepath.Join(dir, e.Name())) {
			if os.Remove(filepath.Join(dir, e.Name())) == nil {
				have[e.Name()] = false
			}
		}
	}
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".pack")
		if !ok || have[base+".idx"] || have[base+".keep"] {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > orphanPackAge {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}

// staleSnapshotKeep tells whether path is a .keep a snapshot wrote
// (writePack's "memsync snapshot (pid N)") older than orphanPackAge: a
// snapshot moves its ref within its hook's time, so one that old was
// killed before it did.
func staleSnapshotKeep(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || time.Since(fi.ModTime()) <= orphanPackAge {
		return false
	}
	data, err := fsutil.ReadFile(path, 256)
	return err == nil && bytes.HasPrefix(data, []byte(snapshotKeep))
}
