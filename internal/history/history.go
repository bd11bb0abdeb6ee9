// Package history keeps the memory's history as commits on one git ref,
// refs/memsync/snapshots: each snapshot's tree holds the active file
// (memories.md), the archive (archive/memories.md) and the conflict log,
// each file as chunks (format.go), nothing else, and its message carries
// provenance as trailers. Plain git reads it:
//
//	git log refs/memsync/snapshots
//	git cat-file -p refs/memsync/snapshots:memories.md   # the chunks, in order
//
// Objects are read with go-git's object storage over the common git dir
// (go-git's PlainOpen refuses repositories with extensions.worktreeConfig;
// the storage itself does not care) and written there as one kept pack per
// snapshot, which a concurrent 'git gc --prune=now' cannot delete (pack.go).
// The ref is
// never written by go-git: under the memory's writers' lock, memsync follows
// git's own lock-and-rename for loose refs (what `git update-ref REF NEW OLD`
// does, and git update-ref itself for reftable repositories), so a reader
// never finds the ref missing or half-written.
package history

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/gitconfig"
	"github.com/memsync/memsync/internal/gitrepo"
	"github.com/memsync/memsync/internal/hugepage"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/internal/store"
)

// Ref is the ref that holds the snapshots of a repository's memory.
const Ref = "refs/memsync/snapshots"

// Names of the files in a snapshot's tree.
const (
	MemoryName  = "memories.md"
	ArchiveName = "archive/memories.md"
)

// ErrNoSnapshot is returned when the ref does not exist yet.
var ErrNoSnapshot = errors.New("no snapshot yet")

// ErrNotSnapshot is returned when a revision names a commit that is no memsync snapshot.
var ErrNotSnapshot = errors.New("not a memsync snapshot")

// History is the snapshot history of one repository's memory.
type History struct {
	Repo  *gitrepo.Repo
	Store *store.Store // the repository's memory home
	// AcceptRemoval lets snapshots through the removal guard (see Take).
	AcceptRemoval bool
	// Detach, when set, starts the packing a snapshot or sync leaves due
	// (Maintain) in the background, given the repository's common git dir,
	// instead of packing before Take or the sync returns (see
	// MaintainSoon).
	Detach func(gitDir string) error
	st     *filesystem.Storage
	// chunks are the chunk blobs Files read, by hash: the snapshots a merge
	// reads (ours, theirs, their base) share most of their chunks, each
	// decompressed once (at most maxChunkCache bytes).
	chunks     map[plumbing.Hash][]byte
	chunkBytes int
	bases      map[[2]string]string // MergeBase's answers for two commits
}

// maxChunkCache bounds the bytes History.chunks holds.
const maxChunkCache = 64 << 20

// Open returns the history of the repository r, whose memory is store.
// Nothing is read until it is needed.
func Open(r *gitrepo.Repo, store *store.Store) *History {
	return &History{
		Repo:  r,
		Store: store,
		st:    openStorage(r.CommonDir),
	}
}

// Files is the memory as a snapshot (or the live memory home) holds it: the
// bytes of the active file and of the archive, nil when absent.
type Files struct {
	Memory  []byte
	Archive []byte
	// Conflicts is the conflict log (merge.LogPath, conflicts.json): the
	// conflicts no one settled yet, which travel with the memory.
	Conflicts []byte
	// Purged is the tombstones (PurgedPath, purged): the entries purged
	// from the history, which no merge brings back (purge.go).
	Purged []byte
}

// Snapshot is one commit on Ref.
type Snapshot struct {
	Commit  string `json:"commit"`  // full hash
	Parent  string `json:"parent"`  // the previous snapshot, "" for the first
	Tree    string `json:"tree"`    // the tree's hash
	Time    string `json:"time"`    // RFC 3339, the committer time
	Subject string `json:"subject"` // first line of the message
	Author  string `json:"author"`  // who took it: the commit's author, "Name <email>"
	Provenance
	Rollback string `json:"rollback,omitempty"` // for a rollback: the snapshot it went back to
}

// Provenance is where a snapshot comes from. It is written as trailers of the
// snapshot's commit message.
type Provenance struct {
	SourceCommit string `json:"source_commit"` // the commit checked out in the worktree (HEAD)
	Branch       string `json:"branch"`        // its branch, "" when detached
	Worktree     string `json:"worktree"`      // the worktree, relative to the primary ("." for it)
	Hook         string `json:"hook"`          // the git hook that took the snapshot, "" for a manual one
}

// Trailer keys of a snapshot's message.
const (
	trailerSource   = "Memsync-Source-Commit"
	trailerBranch   = "Memsync-Branch"
	trailerWorktree = "Memsync-Worktree"
	trailerHook     = "Memsync-Hook"
	trailerRollback = "Memsync-Rollback"
)

// maxHeadFile bounds the read of HEAD and of a rebase's head-name.
const maxHeadFile = 64 << 10

// CurrentProvenance reads the worktree's HEAD (files only, no git spawned)
// for the provenance of a snapshot taken now by hook ("" for none). During a
// rebase the branch is the one being rebased.
func (h *History) CurrentProvenance(hook string) Provenance {
	p := Provenance{Worktree: h.worktreeName(), Hook: hook}
	b, err := fsutil.ReadFile(h.Repo.GitDir+"/HEAD", maxHeadFile)
	if err != nil {
		return p
	}
	head := strings.TrimSpace(string(b))
	if name, ok := strings.CutPrefix(head, "ref: "); ok {
		p.Branch = strings.TrimPrefix(name, "refs/heads/")
		if ref, err := h.st.Reference(plumbing.ReferenceName(name)); err == nil && ref.Type() == plumbing.HashReference {
			p.SourceCommit = ref.Hash().String()
		}
		return p
	}
	if plumbing.IsHash(head) {
		p.SourceCommit = head
	}
	// HEAD is detached while a rebase picks commits: name the branch being rebased.
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if b, err := fsutil.ReadFile(h.Repo.GitDir+"/"+d+"/head-name", maxHeadFile); err == nil {
			p.Branch = strings.TrimPrefix(strings.TrimSpace(string(b)), "refs/heads/")
			break
		}
	}
	return p
}

// worktreeName names the current worktree in a snapshot's trailers, which
// go to every clone: its path relative to the primary worktree ("." for the
// primary itself), else its folder's name; never an absolute local path.
func (h *History) worktreeName() string {
	wt := h.Repo.WorkTree
	if wt == "" {
		return ""
	}
	if h.Repo.Primary != "" {
		if rel, err := filepath.Rel(h.Repo.Primary, wt); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(wt)
}

// head returns the hash Ref points at, or the zero hash when it is missing.
func (h *History) head() (plumbing.Hash, error) {
	ref, err := h.st.Reference(Ref)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", Ref, err)
	}
	if ref.Type() != plumbing.HashReference {
		return plumbing.ZeroHash, fmt.Errorf("%s is a symbolic ref; memsync wants a commit there", Ref)
	}
	return ref.Hash(), nil
}

// Head returns the newest snapshot, or ErrNoSnapshot.
func (h *History) Head() (*Snapshot, error) {
	hash, err := h.head()
	if err != nil {
		return nil, err
	}
	if hash.IsZero() {
		return nil, ErrNoSnapshot
	}
	return h.Read(hash.String())
}

// Resolve turns a revision into the hash of a snapshot: anything git
// rev-parse understands ("refs/memsync/snapshots~2", a hash, a prefix of
// one), with "~N" and "^" alone taken relative to Ref ("~1" is the snapshot
// before the newest). The commit must be a snapshot: a tree holding only
// the memory files (an empty one only with memsync's trailers).
func (h *History) Resolve(ctx context.Context, rev string) (string, error) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("%w: bad revision %q", ErrNotSnapshot, rev)
	}
	if strings.HasPrefix(rev, "~") || strings.HasPrefix(rev, "^") {
		rev = Ref + rev
	}
	out, err := gitcmd.OutputContext(ctx, h.Repo.GitDir, "--git-dir="+h.Repo.GitDir, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	hash := strings.TrimSpace(out)
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil || !plumbing.IsHash(hash) {
		return "", fmt.Errorf("%w: unknown revision %q", ErrNotSnapshot, rev)
	}
	c, l, err := h.checkSnapshot(hash)
	if errors.Is(err, ErrNotSnapshot) {
		return "", fmt.Errorf("%w: %s (%s): %w", ErrNotSnapshot, rev, hash[:12], err)
	}
	if err != nil {
		return "", err
	}
	if !l.memory.present() && !l.archive.present() && l.format.IsZero() && !strings.Contains(c.message, "\nMemsync-") {
		return "", fmt.Errorf("%w: %s (%s) has an empty tree and no memsync trailers", ErrNotSnapshot, rev, hash[:12])
	}
	return hash, nil
}

// CheckSnapshot tells whether commit hash can be read as a snapshot: an
// ErrNotSnapshot saying why when its tree holds anything but memsync's
// files (a branch's commit pushed to a snapshot ref), nil when it holds
// only those (an empty tree too: a memory emptied by hand).
func (h *History) CheckSnapshot(hash string) error {
	if !plumbing.IsHash(hash) {
		return fmt.Errorf("%w: %q is no commit hash", ErrNotSnapshot, hash)
	}
	h.reopen() // see objects a fetch just brought
	// Through a repack at the same time, which moves objects.
	return h.relisted(func() error {
		_, _, err := h.checkSnapshot(hash)
		return err
	})
}

// ObjectKind names what object hash is, as a note to a person would:
// "commit", "tag", "tree" or "blob" (its header read, no more), "missing"
// when the repository lacks it, "object of N bytes" for one larger than
// any snapshot's commit (its content is never read).
func (h *History) ObjectKind(hash string) string {
	if !plumbing.IsHash(hash) {
		return "missing"
	}
	h.reopen() // see objects a fetch just brought
	kind := "missing"
	_ = h.relisted(func() error {
		id := plumbing.NewHash(hash)
		size, err := h.st.EncodedObjectSize(id)
		if err != nil {
			return err
		}
		if size > maxMeta {
			kind = fmt.Sprintf("object of %d bytes", size)
			return nil
		}
		o, err := h.st.EncodedObject(plumbing.AnyObject, id)
		if err != nil {
			return err
		}
		kind = o.Type().String()
		return nil
	})
	return kind
}

// checkSnapshot reads commit hash and checks its tree as CheckSnapshot
// does.
func (h *History) checkSnapshot(hash string) (*commitInfo, layout, error) {
	var l layout
	c, err := readCommit(h.st, plumbing.NewHash(hash))
	if err == nil {
		l, err = h.readLayout(c.tree)
	}
	if errors.Is(err, ErrTooBig) { // a snapshot's commit and trees are small
		return nil, l, fmt.Errorf("%w: %w", ErrNotSnapshot, err)
	}
	return c, l, err
}

// Read returns the snapshot commit hash.
func (h *History) Read(hash string) (*Snapshot, error) {
	c, err := readCommit(h.st, plumbing.NewHash(hash))
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	return toSnapshot(c), nil
}

func toSnapshot(c *commitInfo) *Snapshot {
	s := &Snapshot{Commit: c.hash.String(), Tree: c.tree.String(), Time: c.when().Format(time.RFC3339), Author: c.author}
	if len(c.parents) > 0 {
		s.Parent = c.parents[0].String()
	}
	s.Subject, _, _ = strings.Cut(c.message, "\n")
	for _, l := range strings.Split(c.message, "\n") {
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			continue
		}
		switch k {
		case trailerSource:
			s.SourceCommit = v
		case trailerBranch:
			s.Branch = v
		case trailerWorktree:
			s.Worktree = v
		case trailerHook:
			s.Hook = v
		case trailerRollback:
			s.Rollback = v
		}
	}
	return s
}

// Files returns the memory files a snapshot holds, and its conflict log. A file larger than
// Limit allows is not read: the error is a *TooBigError naming the
// snapshot, the file and both sizes.
func (h *History) Files(hash string) (f Files, err error) {
	err = h.relisted(func() error {
		f, err = h.files(hash)
		return err
	})
	return f, err
}

// files is Files, once.
func (h *History) files(hash string) (Files, error) {
	var f Files
	c, err := readCommit(h.st, plumbing.NewHash(hash))
	if err != nil {
		return f, fmt.Errorf("read snapshot: %w", err)
	}
	l, err := h.readLayout(c.tree)
	if err != nil {
		return f, err
	}
	for _, x := range []struct {
		name string
		s    stored
		dst  *[]byte
	}{{MemoryName, l.memory, &f.Memory}, {ArchiveName, l.archive, &f.Archive}, {conflictsName, l.conflicts, &f.Conflicts}, {purgedName, l.purged, &f.Purged}} {
		*x.dst, err = h.readCached(x.s, h.Limit(x.name))
		if tb := new(TooBigError); errors.As(err, &tb) {
			tb.Commit, tb.Path = hash, x.name
		}
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

// readCached reads the file s holds as read does, with the chunks read
// before (h.chunks) known, and keeps there those it reads, up to
// maxChunkCache bytes.
func (h *History) readCached(s stored, limit int64) ([]byte, error) {
	if h.chunkBytes > maxChunkCache {
		return h.read(s, limit, nil)
	}
	if h.chunks == nil {
		h.chunks = map[plumbing.Hash][]byte{}
	}
	data, err := h.read(s, limit, h.chunks)
	h.chunkBytes += len(data)
	return data, err
}

// know adds the live file's chunks c (nil: none) to h.chunks, so that
// reading another snapshot (theirs, a merge base) decompresses only the
// chunks the live file lacks. They are the live file's own bytes, not
// counted against maxChunkCache.
func (h *History) know(c *chunked) {
	if c == nil {
		return
	}
	if h.chunks == nil {
		h.chunks = map[plumbing.Hash][]byte{}
	}
	maps.Copy(h.chunks, c.byHash)
}

// Limit is the largest memory file (MemoryName or ArchiveName) memsync
// reads from a snapshot: twice the memory's size cap (store.Store.Cap,
// --max-bytes, default 10 MB), or twice the live file when that is larger
// (the archive has no cap of its own). A merge holds a few such files at
// once, so a sync's memory stays a small multiple of the cap whatever a
// remote holds.
func (h *History) Limit(name string) int64 {
	limit := h.Store.Cap()
	path := h.Store.Path()
	if name == ArchiveName {
		path = h.Store.ArchivePath()
	}
	if fi, err := os.Stat(path); err == nil {
		limit = max(limit, fi.Size())
	}
	return 2 * limit
}

// Live reads the live memory files under the readers' lock (readLocked);
// no files where there is no memory home yet.
func (h *History) Live() (f Files, err error) {
	if _, err := os.Stat(h.Store.Home); err != nil {
		return Files{}, nil
	}
	err = h.readLocked(func() (err error) {
		f, err = h.readLiveLocked()
		return err
	})
	return f, err
}

// readLiveLocked reads the bytes of the live files; the caller holds the lock.
func (h *History) readLiveLocked() (Files, error) {
	var f Files
	for path, dst := range map[string]*[]byte{h.Store.Path(): &f.Memory, h.Store.ArchivePath(): &f.Archive} {
		target, err := h.Store.Resolve(path)
		if err != nil {
			return f, err
		}
		b, err := hugepage.ReadFile(target) // once, into a buffer of its size
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return f, err
		}
		*dst = b
	}
	conflicts, err := fsutil.ReadOwn(ConflictLog(h.Repo), merge.MaxLog)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return f, err
	}
	if len(conflicts) > 0 {
		f.Conflicts = conflicts
	}
	purged, err := fsutil.ReadOwn(PurgedPath(h.Repo), maxPurged)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return f, err
	}
	if len(purged) > 0 {
		f.Purged = purged
	}
	return f, nil
}

// RefHash returns the commit a ref (a full name) points at, "" when it does
// not exist. It reads the ref files; no git is spawned.
func (h *History) RefHash(name string) (string, error) {
	ref, err := h.st.Reference(plumbing.ReferenceName(name))
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if ref.Type() != plumbing.HashReference {
		return "", fmt.Errorf("%s is a symbolic ref", name)
	}
	return ref.Hash().String(), nil
}

// BranchRemote is the remote of a branch as the repository's own config
// sets it (<common dir>/config, and the worktree's config.worktree under
// extensions.worktreeConfig), branch.<name>.remote; "" when unset or
// unreadable. It reads the files; no git is spawned.
func (h *History) BranchRemote(branch string) string {
	v, _ := gitconfig.Repo(h.Repo.CommonDir, h.Repo.GitDir).Get("branch." + branch + ".remote")
	return v
}

// Author is who the repository's snapshots are authored by, "Name <email>"
// (git's user.name and user.email; memsync's placeholder where git has
// none).
func (h *History) Author() string { return h.identity().author }

// RefsUnder lists the refs whose names start with prefix (a folder of
// refs, ending in "/") and the commits they point at, read from the files
// as git writes them: packed-refs, then the loose refs, which win; a ref
// being written (its ".lock") is not one yet. No git is spawned. The
// files are read within bounds: packed-refs line by line, a loose ref of
// at most maxLooseRef bytes; anything but a regular file (a pipe, a link
// to a device) is an error naming it.
func (h *History) RefsUnder(prefix string) (map[string]string, error) {
	refs := map[string]string{}
	if err := packedRefsUnder(filepath.Join(h.Repo.CommonDir, "packed-refs"), prefix, refs); err != nil {
		return nil, err
	}
	root := filepath.Join(h.Repo.CommonDir, filepath.FromSlash(prefix))
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil // no such folder, or a ref deleted meanwhile
		case err != nil:
			return err
		case d.IsDir() || strings.HasSuffix(path, ".lock"):
			return nil
		}
		data, err := fsutil.ReadFile(path, maxLooseRef)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if hash := strings.TrimSpace(string(data)); err == nil && plumbing.IsHash(hash) {
			refs[prefix+filepath.ToSlash(rel)] = hash
		}
		return err
	})
	return refs, err
}

// maxLooseRef bounds a loose ref file: a hash, or "ref: " and a name.
const maxLooseRef = 4 << 10

// packedRefsUnder adds the refs under prefix that the packed-refs file at
// path lists to refs; none when there is no such file.
func packedRefsUnder(path, prefix string, refs map[string]string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a pipe's open does not wait
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10) // a line: a hash and a ref name
	for sc.Scan() {
		if hash, name, ok := strings.Cut(sc.Text(), " "); ok && strings.HasPrefix(name, prefix) && plumbing.IsHash(hash) {
			refs[name] = hash
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}
