package history

import (
	"compress/zlib"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	gitsync "github.com/go-git/go-git/v5/utils/sync"

	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/memfile"
)

// Result is what Take did.
type Result struct {
	Snapshot *Snapshot // the newest snapshot after Take; nil when there is none
	Created  bool      // a new snapshot was committed
	// Problems is the damage found in the active file (it is snapshotted as
	// it is, byte for byte).
	Problems []memfile.Problem
}

// Take snapshots the memory home: a commit on Ref whose tree holds the
// active file and the archive, with the previous snapshot as its parent and
// the provenance as trailers. When the tree is the same as the newest
// snapshot's, nothing is written. A repository whose memory home has no
// files and no snapshot yet is left alone (no lock file, no ref).
func (h *History) Take(msg string, p Provenance) (*Result, error) {
	if !h.hasMemory() {
		old, err := h.head()
		if err != nil || old.IsZero() {
			return &Result{}, err
		}
	}
	var res *Result
	err := h.Store.WithLock(func() error {
		var err error
		res, err = h.takeLocked(msg, p, "")
		return err
	})
	return res, err
}

// hasMemory tells whether the memory home has an active file or an archive.
func (h *History) hasMemory() bool {
	for _, p := range []string{h.Store.Path(), h.Store.ArchivePath()} {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	return false
}

// takeLocked is Take with the writers' lock held by the caller.
func (h *History) takeLocked(msg string, p Provenance, rollback string) (*Result, error) {
	files, err := h.readLiveLocked()
	if err != nil {
		return nil, err
	}
	res := &Result{}
	old, err := h.head()
	if err != nil {
		return nil, err
	}
	var oldTree plumbing.Hash
	if !old.IsZero() {
		c, err := readCommit(h.st, old)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Ref, err)
		}
		oldTree = c.tree
		res.Snapshot = toSnapshot(c)
	}
	if old.IsZero() && files.Memory == nil && files.Archive == nil {
		return res, nil
	}
	blobs, trees := snapshotTree(files)
	root := trees[len(trees)-1]
	if root.hash == oldTree {
		return res, nil // the same memory as the newest snapshot
	}
	// Only a changed memory is parsed, to report damage once.
	if files.Memory != nil {
		res.Problems = memfile.Parse(files.Memory).Problems
	}
	for _, o := range append(blobs, trees...) {
		if h.st.HasEncodedObject(o.hash) == nil {
			continue
		}
		if _, err := h.writeObject(o); err != nil {
			return nil, fmt.Errorf("write snapshot object: %w", err)
		}
	}
	commitData := encodeCommit(root.hash, old, time.Now(), message(msg, p, rollback))
	commit, err := h.writeObject(newObject(plumbing.CommitObject, commitData))
	if err != nil {
		return nil, fmt.Errorf("write snapshot commit: %w", err)
	}
	oldArg := old.String()
	if old.IsZero() {
		oldArg = strings.Repeat("0", len(oldArg)) // the ref must not exist yet
	}
	if _, err := gitcmd.Output(h.Repo.CommonDir, "--git-dir="+h.Repo.CommonDir, "update-ref", Ref, commit.String(), oldArg); err != nil {
		return nil, fmt.Errorf("update %s: %w", Ref, err)
	}
	c, err := readCommit(h.st, commit)
	if err != nil {
		return nil, err
	}
	res.Snapshot, res.Created = toSnapshot(c), true
	return res, nil
}

// writeObject writes a loose object with go-git, compressed as git
// compresses loose objects by default (core.looseCompression: zlib level 1,
// best speed). go-git takes its zlib writer from a pool of default-level
// (6) writers, several times slower on a large memory; handing the pool a
// best-speed writer first makes go-git use that one. Should the pool hand
// out another, the object is only compressed harder.
func (h *History) writeObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	if w, err := zlib.NewWriterLevel(nil, zlib.BestSpeed); err == nil {
		gitsync.PutZlibWriter(w)
	}
	return h.st.SetEncodedObject(o)
}

// snapshotTree hashes the snapshot's blobs and trees (the root tree last)
// without writing anything.
func snapshotTree(files Files) (blobs, trees []*object) {
	// Entries in git's order: "archive" (a tree) sorts before "memories.md".
	var root []treeEntry
	if files.Archive != nil {
		blob := newObject(plumbing.BlobObject, files.Archive)
		sub := newObject(plumbing.TreeObject, encodeTree([]treeEntry{{"100644", MemoryName, blob.hash}}))
		blobs, trees = append(blobs, blob), append(trees, sub)
		root = append(root, treeEntry{"40000", "archive", sub.hash})
	}
	if files.Memory != nil {
		blob := newObject(plumbing.BlobObject, files.Memory)
		blobs = append(blobs, blob)
		root = append(root, treeEntry{"100644", MemoryName, blob.hash})
	}
	return blobs, append(trees, newObject(plumbing.TreeObject, encodeTree(root)))
}

// The identity that signs snapshot commits.
const (
	identityName  = "memsync"
	identityEmail = "memsync@localhost"
)

// message is a snapshot's commit message: a subject, then the provenance as
// trailers.
func message(subject string, p Provenance, rollback string) string {
	if subject == "" {
		subject = "memsync snapshot"
		switch {
		case p.Hook != "" && p.SourceCommit != "":
			subject = fmt.Sprintf("memsync snapshot (%s at %s)", p.Hook, short(p.SourceCommit))
		case p.Hook != "":
			subject = fmt.Sprintf("memsync snapshot (%s)", p.Hook)
		}
	}
	subject, _, _ = strings.Cut(strings.TrimSpace(subject), "\n")
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	for _, t := range [][2]string{
		{trailerSource, p.SourceCommit}, {trailerBranch, p.Branch}, {trailerWorktree, p.Worktree},
		{trailerHook, p.Hook}, {trailerRollback, rollback},
	} {
		if v := strings.TrimSpace(strings.ReplaceAll(t[1], "\n", " ")); v != "" {
			b.WriteString(t[0] + ": " + v + "\n")
		}
	}
	return b.String()
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
