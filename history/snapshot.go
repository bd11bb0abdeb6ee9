package history

import (
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	gitsync "github.com/go-git/go-git/v5/utils/sync"

	"github.com/memsync/memsync/internal/words"
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
//
// ctx stops Take before it moves the ref (with ctx's error); a ref update
// under way is let finish, so a cancelled Take returns after its work
// stopped and leaves no lock file behind.
func (h *History) Take(ctx context.Context, msg string, p Provenance) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !h.hasMemory() {
		old, err := h.head()
		if err != nil || old.IsZero() {
			return &Result{}, err
		}
	}
	var res *Result
	err := h.Store.WithLock(func() error {
		var err error
		res, err = h.takeLocked(ctx, msg, p, "")
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

// TakeLocked is Take for a caller that holds the writers' lock (a
// memfile.Store's Locked hook: the snapshot an operation takes before it
// removes or replaces entries).
func (h *History) TakeLocked(ctx context.Context, msg string, p Provenance) (*Result, error) {
	return h.takeLocked(ctx, msg, p, "")
}

// takeLocked is Take with the writers' lock held by the caller.
func (h *History) takeLocked(ctx context.Context, msg string, p Provenance, rollback string) (*Result, error) {
	old, err := h.head()
	if err != nil {
		return nil, err
	}
	return h.takeOnto(ctx, msg, p, rollback, old, old)
}

// takeOnto commits the live memory as a child of old (zero: a root
// snapshot) and moves Ref from cur (what it holds now) to it; the caller
// holds the writers' lock. A parent whose objects are missing is a
// *RefDamage.
func (h *History) takeOnto(ctx context.Context, msg string, p Provenance, rollback string, old, cur plumbing.Hash) (*Result, error) {
	files, err := h.readLiveLocked()
	if err != nil {
		return nil, err
	}
	res := &Result{}
	var oldTree, oldMemory, oldArchive plumbing.Hash
	if !old.IsZero() {
		c, err := readCommit(h.st, old)
		if err == nil {
			oldTree = c.tree
			res.Snapshot = toSnapshot(c)
			if oldMemory, err = lookup(h.st, c.tree, MemoryName); err == nil {
				oldArchive, err = lookup(h.st, c.tree, ArchiveName)
			}
		}
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, &RefDamage{Ref: Ref, Commit: old.String(), Why: err.Error()}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Ref, err)
		}
	}
	if old.IsZero() && cur.IsZero() && files.Memory == nil && files.Archive == nil {
		return res, nil
	}
	if h.same(files.Memory, oldMemory) && h.same(files.Archive, oldArchive) {
		return res, nil // the same memory as the newest snapshot
	}
	// Only a changed memory is checked, to report damage once.
	res.Problems = memfile.Damage(files.Memory)
	tree, err := h.writeTree(files)
	if err != nil {
		return nil, err
	}
	if tree == oldTree {
		return res, nil
	}
	commitData := encodeCommit(tree, []plumbing.Hash{old}, time.Now(), message(msg, p, rollback))
	commit, err := h.writeObject(newObject(plumbing.CommitObject, commitData))
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // the objects written are unreachable, harmless; git's gc prunes them
	}
	if err := h.updateRef(commit, cur); err != nil {
		return nil, err
	}
	c, err := readCommit(h.st, commit)
	if err != nil {
		return nil, err
	}
	res.Snapshot, res.Created = toSnapshot(c), true
	return res, nil
}

// writeTree writes the objects of a snapshot's tree holding files.
func (h *History) writeTree(files Files) (plumbing.Hash, error) {
	var root []treeEntry // in git's order: "archive" (a tree) sorts before "memories.md"
	if files.Archive != nil {
		blob, err := h.writeBlob(files.Archive)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		sub, err := h.writeObject(newObject(plumbing.TreeObject, encodeTree([]treeEntry{{"100644", MemoryName, blob}})))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		root = append(root, treeEntry{"40000", "archive", sub})
	}
	if files.Memory != nil {
		blob, err := h.writeBlob(files.Memory)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		root = append(root, treeEntry{"100644", MemoryName, blob})
	}
	return h.writeObject(newObject(plumbing.TreeObject, encodeTree(root)))
}

// bestSpeed hands go-git's pool of zlib writers one that compresses as
// git compresses loose objects by default (core.looseCompression: level 1,
// best speed). go-git's own pool writers use level 6, several times slower
// on a large memory; given one, go-git uses it for the next object. Should
// the pool hand out another, the object is only compressed harder.
func bestSpeed() {
	if w, err := zlib.NewWriterLevel(nil, zlib.BestSpeed); err == nil {
		gitsync.PutZlibWriter(w)
	}
}

// writeObject writes a small object with go-git unless it exists as a
// loose object. (go-git's HasEncodedObject would also search the packs, and
// list the objects folder for quarantine folders, on every call; a
// duplicate of a packed object is harmless.)
func (h *History) writeObject(o *object) (plumbing.Hash, error) {
	hex := o.hash.String()
	if _, err := os.Stat(filepath.Join(h.Repo.CommonDir, "objects", hex[:2], hex[2:])); err == nil {
		return o.hash, nil
	}
	bestSpeed()
	if _, err := h.st.SetEncodedObject(o); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write snapshot object: %w", err)
	}
	return o.hash, nil
}

// writeBlob writes a blob with go-git's object writer, which hashes it as it
// compresses it: one pass over a large memory. The blob's hash is the
// object writer's.
func (h *History) writeBlob(data []byte) (plumbing.Hash, error) {
	bestSpeed()
	w, header, err := h.st.LazyWriter()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write snapshot blob: %w", err)
	}
	hashed, ok := w.(interface{ Hash() plumbing.Hash })
	if !ok {
		_ = w.Close()
		return plumbing.ZeroHash, fmt.Errorf("write snapshot blob: go-git's object writer has no hash")
	}
	if err := header(plumbing.BlobObject, int64(len(data))); err != nil {
		_ = w.Close()
		return plumbing.ZeroHash, fmt.Errorf("write snapshot blob: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return plumbing.ZeroHash, fmt.Errorf("write snapshot blob: %w", err)
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write snapshot blob: %w", err)
	}
	return hashed.Hash(), nil
}

// same tells whether data is the content of blob old (zero: absent). When
// the sizes differ, as they do after an append, no hashing is needed.
func (h *History) same(data []byte, old plumbing.Hash) bool {
	if data == nil || old.IsZero() {
		return data == nil && old.IsZero()
	}
	if size, err := h.st.EncodedObjectSize(old); err == nil && size != int64(len(data)) {
		return false
	}
	return plumbing.ComputeHash(plumbing.BlobObject, data) == old
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
			subject = fmt.Sprintf("memsync snapshot (%s at %s)", p.Hook, words.Short(p.SourceCommit))
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
