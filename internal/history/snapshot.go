package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

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
// The removal guard: a memory that lost more than half of the entries of
// the newest snapshot (active and archive, by ID; at least MinGuarded of
// them there), not counting what memsync removed itself (the store's
// removal log), is not snapshotted: the error is a *RemovalError, unless
// h.AcceptRemoval. A memory no smaller than the snapshot's is not checked.
// TakeLocked and the snapshot before a merge are guarded the same way; a
// rollback's and a repair's are not.
//
// ctx stops Take before it moves the ref (with ctx's error); a ref update
// under way is let finish, so a cancelled Take returns after its work
// stopped and leaves no lock file behind. After a new snapshot, with the
// lock released, Take packs the object store when it needs it
// (MaintainSoon: in the background with Detach).
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
		res, err = h.takeLocked(ctx, msg, p, "", true)
		return err
	})
	if err == nil && res.Created {
		// Once the lock is released: packing may take a while, and the
		// snapshot stands whatever it does (git's gc packs what it leaves).
		h.MaintainSoon(ctx)
	}
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
// store.Store's Locked hook: the snapshot an operation takes before it
// removes or replaces entries).
func (h *History) TakeLocked(ctx context.Context, msg string, p Provenance) (*Result, error) {
	return h.takeLocked(ctx, msg, p, "", true)
}

// takeLocked is Take with the writers' lock held by the caller; guard
// applies the removal guard.
func (h *History) takeLocked(ctx context.Context, msg string, p Provenance, rollback string, guard bool) (*Result, error) {
	old, err := h.head()
	if err != nil {
		return nil, err
	}
	return h.takeOnto(ctx, msg, p, rollback, old, old, guard)
}

// takeOnto commits the live memory as a child of old (zero: a root
// snapshot) and moves Ref from cur (what it holds now) to it; the caller
// holds the writers' lock. A parent whose objects are missing is a
// *RefDamage. guard applies the removal guard against old.
//
// The snapshot costs what changed: the live files are cut into chunks
// (format.go), the chunks the parent holds are neither written nor read,
// and of the parent's files only the chunks that changed are read, for the
// record of the change and the removal guard.
func (h *History) takeOnto(ctx context.Context, msg string, p Provenance, rollback string, old, cur plumbing.Hash, guard bool) (*Result, error) {
	files, err := h.readLiveLocked()
	if err != nil {
		return nil, err
	}
	res := &Result{}
	var prev layout
	var prevTree plumbing.Hash
	var parentMsg string // the parent's message, whose record counts its entries
	if !old.IsZero() {
		var c *commitInfo
		err = h.relisted(func() (err error) {
			if c, err = readCommit(h.st, old); err == nil {
				prev, err = h.readLayout(c.tree)
			}
			return err
		})
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, &RefDamage{Ref: Ref, Commit: old.String(), Why: err.Error()}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Ref, err)
		}
		prevTree, parentMsg = c.tree, c.message
		res.Snapshot = toSnapshot(c)
	}
	if old.IsZero() && cur.IsZero() && files.Memory == nil && files.Archive == nil {
		return res, nil
	}
	memCache, archCache := h.loadCache(MemoryName).of(prev.memory), h.loadCache(ArchiveName).of(prev.archive)
	memory, archive := chunkLive(files.Memory, memCache), chunkLive(files.Archive, archCache)
	h.know(memory)
	h.know(archive)
	memSame, archSame := h.unchanged(files.Memory, memory, prev.memory), h.unchanged(files.Archive, archive, prev.archive)
	if memSame && archSame && h.same(files.Conflicts, prev.conflicts.blob) && h.same(files.Purged, prev.purged.blob) {
		h.keepCaches(memory, archive, memCache, archCache, nil, nil)
		return res, nil // the same memory as the newest snapshot
	}
	// The parent's files, read where they changed (the record and the guard).
	beforeMem, beforeArch := sameFile(files.Memory), sameFile(files.Archive)
	var recErr, archErr error
	if !memSame {
		recErr = h.relisted(func() (err error) {
			beforeMem, err = h.readAround(prev.memory, memory, files.Memory, h.Limit(MemoryName))
			return err
		})
	}
	if !archSame {
		archErr = h.relisted(func() (err error) {
			beforeArch, err = h.readAround(prev.archive, archive, files.Archive, h.Limit(ArchiveName))
			return err
		})
	}
	if guard && !h.AcceptRemoval {
		if err := errors.Join(recErr, archErr); vanished(err) {
			return nil, &RefDamage{Ref: Ref, Commit: old.String(), Why: err.Error()}
		} else if err != nil {
			return nil, err
		}
		if len(files.Memory)+len(files.Archive) < beforeMem.size()+beforeArch.size() {
			before := Files{Memory: beforeMem.whole(), Archive: beforeArch.whole()}
			if err := h.guardLocked(files, before, old); err != nil {
				return nil, err
			}
		}
	}
	// Only a changed memory is checked, to report damage once.
	read := recErr == nil
	res.Problems = damage(beforeMem, memCache, read)
	b := &batch{}
	tree := addLayout(b, memory, archive, files.Conflicts, files.Purged, haveOf(prev))
	if tree == prevTree {
		h.keepCaches(memory, archive, memCache, archCache, nil, nil)
		return res, nil
	}
	livePlain := plainOrch(beforeMem, memCache, read)
	rec, ok := recordAround(parentMsg, beforeMem, read, livePlain && bothPlain(beforeMem, memCache, read))
	// The archive's entries are scanned where it changed: in orch's dialect
	// alone, the part that differs (widened to entry headings) holds every
	// entry added or changed, and parses as it does in the whole file.
	scanned, before := files, Files{Memory: files.Memory, Archive: files.Archive}
	var archFlags *fileCache // what is known of the whole live archive
	if !archSame && archErr == nil {
		archFlags = &fileCache{plain: plainOrch(beforeArch, archCache, true)}
		if archFlags.plain && bothPlain(beforeArch, archCache, true) {
			start, endBefore, endAfter := beforeArch.changedRegion()
			before.Archive, scanned.Archive = beforeArch.slice(start, endBefore), files.Archive[start:endAfter]
		} else {
			before.Archive = beforeArch.whole()
		}
	}
	if err := scanTaken(scanned, before, rec, ok, !archSame, archErr == nil); err != nil {
		return nil, err // a secret written into the file outside memsync
	}
	if ok && Count(rec.changes).Removed > 0 {
		rec.deliberate = h.AcceptRemoval || h.allMine(rec.changes)
	}
	commitData := encodeCommit(tree, []plumbing.Hash{old}, time.Now(), message(msg, p, rollback, rec, ok), h.identity())
	commit := b.add(newObject(plumbing.CommitObject, commitData))
	if err := ctx.Err(); err != nil {
		return nil, err // nothing written yet
	}
	if err := h.publish(b, commit, cur); err != nil {
		return nil, err
	}
	res.Snapshot, res.Created = toSnapshot(parseCommit(commit, commitData)), true
	h.keepCaches(memory, archive, memCache, archCache, &fileCache{clean: len(res.Problems) == 0, plain: livePlain}, archFlags)
	return res, h.Store.ClearRemovals()
}

// chunkLive cuts a live file into chunks (chunkCached, knowing the
// parent's chunks prev); nil for an absent one.
func chunkLive(data []byte, prev *fileCache) *chunked {
	if data == nil {
		return nil
	}
	c := chunkCached(data, prev)
	return &c
}

// sameFile is the parent's file when it is the live one, data.
func sameFile(data []byte) parentFile {
	return parentFile{live: data, lo: len(data), absent: data == nil}
}

// readAround reads the parent's file s where it differs from the live file
// data (chunked as c; nil: absent): the chunks the two have in common at
// their start and at their end are not read. The parent's file is at most
// limit bytes (else a *TooBigError).
func (h *History) readAround(s stored, c *chunked, data []byte, limit int64) (parentFile, error) {
	p := parentFile{live: data}
	switch {
	case !s.present():
		p.absent = true
		return p, nil
	case s.tree.IsZero() || c == nil: // format 1, or no live file
		var err error
		p.mid, err = h.read(s, limit, nil)
		return p, err
	}
	n, m := len(s.chunks), len(c.objs)
	a := 0
	for a < min(n, m) && s.chunks[a] == c.objs[a].hash {
		p.lo += len(c.objs[a].data)
		a++
	}
	b := 0
	for b < min(n, m)-a && s.chunks[n-1-b] == c.objs[m-1-b].hash {
		p.tail += len(c.objs[m-1-b].data)
		b++
	}
	var err error
	p.mid, err = h.read(stored{tree: s.tree, chunks: s.chunks[a : n-b]}, limit-int64(p.lo+p.tail), c.byHash)
	if tb := new(TooBigError); errors.As(err, &tb) {
		tb.Size, tb.Limit = tb.Size+int64(p.lo+p.tail), limit
	}
	return p, err
}

// damage is memfile.Damage of the live file p.live, whose parent's file p
// holds (read: it could be read). Where the parent's cache c says that
// file has none, only the lines that differ are checked (the others are
// whole lines of the parent's file), and the whole file only when they
// hold some, for its line numbers.
func damage(p parentFile, c *fileCache, read bool) []memfile.Problem {
	if c != nil && c.clean && read && !p.absent {
		if ls, le := p.changedLines(); memfile.Damage(p.live[ls:le]) == nil {
			return nil
		}
	}
	return memfile.Damage(p.live)
}

// plainOrch is memfile.PlainOrch of the live file p.live, whose parent's
// file p holds (read: it could be read). Where the parent's cache c says
// that file is plain orch, only the lines that differ are checked for a
// "\r" and a ralph entry, and the first "## " heading, when it comes
// before them, for one of ralph's sections: with no ralph entry, the first
// heading decides memfile's dialect.
func plainOrch(p parentFile, c *fileCache, read bool) bool {
	if c != nil && c.plain && read && !p.absent {
		ls, le := p.changedLines()
		region := p.live[ls:le]
		if end := firstHeadingEnd(p.live[:ls]); end > 0 && bytes.IndexByte(region, '\r') < 0 &&
			!bytes.HasPrefix(region, []byte("### mem-")) && !bytes.Contains(region, []byte("\n### mem-")) &&
			memfile.PlainOrch(p.live[:end]) {
			return true
		}
	}
	return memfile.PlainOrch(p.live)
}

// firstHeadingEnd is where b's first "## " line ends (after its line end),
// or -1 when b holds no whole one.
func firstHeadingEnd(b []byte) int {
	at := 0
	if !bytes.HasPrefix(b, []byte("## ")) {
		if at = bytes.Index(b, []byte("\n## ")) + 1; at == 0 {
			return -1
		}
	}
	nl := bytes.IndexByte(b[at:], '\n')
	if nl < 0 {
		return -1
	}
	return at + nl + 1
}

// keepCaches writes the chunk caches of the newest snapshot, whose files
// are memory and archive (nil: absent), unless the caches loaded for it
// (mem, arch: nil when there was none) say the same. memFlags and
// archFlags are what is known of the whole files (nil: nothing; a cache
// loaded is kept as it is).
func (h *History) keepCaches(memory, archive *chunked, mem, arch, memFlags, archFlags *fileCache) {
	for _, x := range []struct {
		name  string
		c     *chunked
		had   *fileCache
		flags *fileCache
	}{{MemoryName, memory, mem, memFlags}, {ArchiveName, archive, arch, archFlags}} {
		switch {
		case x.c == nil:
			h.saveCache(x.name, nil)
		case x.had != nil && (x.flags == nil || x.had.clean == x.flags.clean && x.had.plain == x.flags.plain) && slices.Equal(x.had.chunks, x.c.sums):
			// the cache says it already
		default:
			c := &fileCache{chunks: x.c.sums}
			if x.flags != nil {
				c.clean, c.plain = x.flags.clean, x.flags.plain
			}
			h.saveCache(x.name, c)
		}
	}
}

// bothPlain tells, for a live file in orch's dialect alone, whether the
// parent's file p is too (read: it could be read): the parent's cache c
// says so, or its file is checked (a cache's false says "not known").
func bothPlain(p parentFile, c *fileCache, read bool) bool {
	return read && !p.absent && (c != nil && c.plain || memfile.PlainOrch(p.whole()))
}

// unchanged tells whether the live file data (chunked as c; nil: absent)
// is the one s holds.
func (h *History) unchanged(data []byte, c *chunked, s stored) bool {
	switch {
	case c == nil || !s.present():
		return c == nil && !s.present()
	case s.tree.IsZero():
		return h.same(data, s.blob)
	default:
		return c.sameAs(s)
	}
}

// MinGuarded is the fewest entries a snapshot has for the removal guard to
// apply.
const MinGuarded = 3

// ErrMassRemoval is the error of a snapshot the removal guard refused (a
// *RemovalError says how many entries went).
var ErrMassRemoval = errors.New("the memory lost more than half of its entries outside memsync")

// RemovalError is a memory that lost more than half of the entries of the
// newest snapshot, not through memsync.
type RemovalError struct {
	Removed, Total int
	Snapshot       string // the newest snapshot
}

func (e *RemovalError) Error() string {
	return fmt.Sprintf("the memory lost %d of the %d entries of snapshot %s, not through memsync (an editor, a script, a checkout?)",
		e.Removed, e.Total, words.Short(e.Snapshot))
}

// Unwrap makes errors.Is(err, ErrMassRemoval) work.
func (e *RemovalError) Unwrap() error { return ErrMassRemoval }

// guardLocked is the removal guard: the live files against before, those
// of the snapshot old. The caller holds the writers' lock.
func (h *History) guardLocked(files, before Files, old plumbing.Hash) error {
	if len(files.Memory)+len(files.Archive) >= len(before.Memory)+len(before.Archive) {
		return nil // no smaller: appends, the usual change, parse nothing
	}
	live := map[string]bool{}
	for _, data := range [][]byte{files.Memory, files.Archive} {
		for _, e := range memfile.Parse(data).Entries {
			live[e.ID] = true
		}
	}
	mine, err := h.Store.Removals()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	removed := 0
	for _, data := range [][]byte{before.Memory, before.Archive} {
		for _, e := range memfile.Parse(data).Entries {
			if !seen[e.ID] {
				seen[e.ID] = true
				if !live[e.ID] && !mine[e.ID] {
					removed++
				}
			}
		}
	}
	if len(seen) >= MinGuarded && 2*removed > len(seen) {
		return &RemovalError{Removed: removed, Total: len(seen), Snapshot: old.String()}
	}
	return nil
}

// addFiles adds to b a snapshot tree holding files and returns its hash;
// objects among have (the repository has them) are not added again.
func addFiles(b *batch, files Files, have map[plumbing.Hash]bool) plumbing.Hash {
	whole := func(data []byte) *chunked {
		if data == nil {
			return nil
		}
		c := chunkFile(data)
		return &c
	}
	return addLayout(b, whole(files.Memory), whole(files.Archive), files.Conflicts, files.Purged, have)
}

// size is the size of object x in the object store, which is listed again
// once when x is not found where it was: a repack by another process
// (memsync's upkeep, git gc) moves objects into a new pack and deletes the
// old ones.
func (h *History) size(x plumbing.Hash) (int64, error) {
	n, err := h.st.EncodedObjectSize(x)
	if err != nil {
		h.st.Reindex()
		n, err = h.st.EncodedObjectSize(x)
	}
	return n, err
}

// same tells whether data is the content of blob old (zero: absent). When
// the sizes differ, as they do after an append, no hashing is needed.
func (h *History) same(data []byte, old plumbing.Hash) bool {
	if data == nil || old.IsZero() {
		return data == nil && old.IsZero()
	}
	if size, err := h.size(old); err == nil && size != int64(len(data)) {
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
// trailers, and the record of what changed when there is one (withRecord).
func message(subject string, p Provenance, rollback string, rec record, withRecord bool) string {
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
	if withRecord {
		b.WriteString(rec.trailers())
	}
	return b.String()
}

// allMine tells whether memsync itself removed every entry changes remove
// (the store's removal log).
func (h *History) allMine(changes []Change) bool {
	mine, err := h.Store.Removals()
	if err != nil {
		return false
	}
	for _, c := range changes {
		if c.Kind == Removed && !mine[c.ID] {
			return false
		}
	}
	return true
}

// relisted runs read, and again after listing the object store anew while
// it fails because an object or pack was not where the store listed it: a
// git gc at work moves objects from loose files and old packs into a new
// pack, and deletes the old ones, maybe several times in a row. Objects
// still missing after a few tries (about 0.3 s) are missing.
func (h *History) relisted(read func() error) error {
	err := read()
	for try := 0; try < 4 && vanished(err); try++ {
		time.Sleep(time.Duration(20<<try) * time.Millisecond)
		h.st.Reindex()
		err = read()
	}
	return err
}
