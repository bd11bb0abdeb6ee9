package history

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

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
	if files.Memory != nil {
		res.Problems = memfile.Parse(files.Memory).Problems
	}
	old, err := h.head()
	if err != nil {
		return nil, err
	}
	var oldTree plumbing.Hash
	if !old.IsZero() {
		c, err := object.GetCommit(h.st, old)
		if err != nil {
			return nil, fmt.Errorf("read %s (%s): %w", Ref, old, err)
		}
		oldTree = c.TreeHash
		res.Snapshot = toSnapshot(c)
	}
	objs, tree := buildTree(h.st, files)
	if tree.Hash() == oldTree || (old.IsZero() && files.Memory == nil && files.Archive == nil) {
		return res, nil
	}
	for _, o := range objs {
		if h.st.HasEncodedObject(o.Hash()) == nil {
			continue
		}
		if _, err := h.st.SetEncodedObject(o); err != nil {
			return nil, fmt.Errorf("write snapshot object: %w", err)
		}
	}
	commit, err := h.writeCommit(tree.Hash(), old, message(msg, p, rollback))
	if err != nil {
		return nil, err
	}
	zero := strings.Repeat("0", len(commit.String()))
	oldArg := old.String()
	if old.IsZero() {
		oldArg = zero
	}
	if _, err := gitcmd.Output(h.Repo.CommonDir, "--git-dir="+h.Repo.CommonDir, "update-ref", Ref, commit.String(), oldArg); err != nil {
		return nil, fmt.Errorf("update %s: %w", Ref, err)
	}
	c, err := object.GetCommit(h.st, commit)
	if err != nil {
		return nil, err
	}
	res.Snapshot, res.Created = toSnapshot(c), true
	return res, nil
}

// buildTree encodes the snapshot's blobs and trees in memory (nothing is
// written yet) and returns them with the root tree last.
func buildTree(st interface {
	NewEncodedObject() plumbing.EncodedObject
}, files Files) ([]plumbing.EncodedObject, plumbing.EncodedObject) {
	var objs []plumbing.EncodedObject
	blob := func(data []byte) plumbing.Hash {
		o := st.NewEncodedObject()
		o.SetType(plumbing.BlobObject)
		o.SetSize(int64(len(data)))
		w, _ := o.Writer()
		_, _ = w.Write(data) // a memory object's writer does not fail
		_ = w.Close()
		objs = append(objs, o)
		return o.Hash()
	}
	tree := func(entries []object.TreeEntry) plumbing.EncodedObject {
		o := st.NewEncodedObject()
		t := object.Tree{Entries: entries}
		_ = t.Encode(o) // encoding into memory does not fail
		objs = append(objs, o)
		return o
	}
	// Entries in git's order: "archive" (a tree) sorts before "memories.md".
	var root []object.TreeEntry
	if files.Archive != nil {
		sub := tree([]object.TreeEntry{{Name: MemoryName, Mode: filemode.Regular, Hash: blob(files.Archive)}})
		root = append(root, object.TreeEntry{Name: "archive", Mode: filemode.Dir, Hash: sub.Hash()})
	}
	if files.Memory != nil {
		root = append(root, object.TreeEntry{Name: MemoryName, Mode: filemode.Regular, Hash: blob(files.Memory)})
	}
	t := tree(root)
	return objs, t
}

// identity signs snapshot commits.
var identity = object.Signature{Name: "memsync", Email: "memsync@localhost"}

func (h *History) writeCommit(tree, parent plumbing.Hash, msg string) (plumbing.Hash, error) {
	sig := identity
	sig.When = time.Now()
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	o := h.st.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	hash, err := h.st.SetEncodedObject(o)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write snapshot commit: %w", err)
	}
	return hash, nil
}

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
