package history

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/memfile"
)

// Kinds of change in one entry's history (EntryLog), beside Added, Removed
// and Changed.
const (
	Archived = "archived" // moved from the active file into the archive
	Restored = "restored" // moved from the archive back into the active file
)

// EntryChange is one entry a snapshot changed. ID and title are on one
// line and bounded as a snapshot's record holds them (record.go).
type EntryChange struct {
	Kind  string `json:"kind"` // Added, Removed, Changed; in an entry's history also Archived, Restored
	ID    string `json:"id"`
	Title string `json:"title"`
	// Archive is set, in an entry's history, for a change inside the
	// archive (an archived entry edited or removed there).
	Archive bool `json:"archive,omitempty"`
	// Diff is, when asked for, the entry's text before and after as a
	// TextDiff ("" when only where it is changed).
	Diff *string `json:"diff,omitempty"`
}

// LogChanges is Log with the entries each snapshot changed in its active
// file since its first parent (LogEntry.Changes): read from the snapshot's
// record when it names them all, else found by comparing the two files.
// With patch every snapshot is compared and each change carries its diff.
func (h *History) LogChanges(limit int, patch bool) ([]LogEntry, error) {
	out, err := h.Log(limit)
	files := newParsedFiles(h)
	for i := range out {
		ch, cerr := h.changesOf(&out[i].Snapshot, patch, files)
		if cerr != nil {
			return out[:i], cerr
		}
		out[i].Changes = ch
	}
	return out, err
}

// changesOf lists the entries snapshot s changed since its first parent.
func (h *History) changesOf(s *Snapshot, patch bool, files *parsedFiles) ([]EntryChange, error) {
	if !patch {
		c, err := readCommit(h.st, plumbing.NewHash(s.Commit))
		if err != nil {
			return nil, fmt.Errorf("read snapshot: %w", err)
		}
		if ch, ok := recordedChanges(c.message); ok {
			return append([]EntryChange{}, ch...), nil
		}
	}
	after, err := files.memoryOf(s.Commit)
	if err != nil {
		return nil, err
	}
	before, err := files.memoryOf(s.Parent)
	if err != nil {
		return nil, err
	}
	out := []EntryChange{}
	for _, c := range Compare(before, after) {
		e := c.After
		if e == nil {
			e = c.Before
		}
		ch := titled(c.Kind, c.ID, e)
		if patch {
			ch.Diff = new(entryDiff(c.Before, c.After))
		}
		out = append(out, ch)
	}
	return out, nil
}

// entryDiff is the line diff of an entry's text from before to after (nil:
// absent), each rendered as `show` prints it.
func entryDiff(before, after *memfile.Entry) string {
	text := func(e *memfile.Entry) string {
		if e == nil {
			return ""
		}
		return memfile.RenderEntry(e, memfile.Orch)
	}
	return TextDiff(text(before), text(after))
}

// EntryRef names the entry whose history EntryLog lists.
type EntryRef struct {
	// IDs are the entry's ID and its other IDs (aliases, the ID it had
	// before it went into a ralph file): a change to an entry under any of
	// them is a change to it.
	IDs []string
	// Prefix, instead of IDs, matches every ID that starts with it: an
	// entry no longer in the memory, named by its ID or a prefix of it.
	Prefix string
	// Derived is set when the entry's ID is derived from its text (not
	// written in the file): files are then compared without first looking
	// for the ID's bytes.
	Derived bool
}

// match tells whether id is one of the entry's.
func (r EntryRef) match(id string) bool {
	if r.Prefix != "" {
		return strings.HasPrefix(id, r.Prefix)
	}
	return slices.Contains(r.IDs, id)
}

// inRecords tells whether records name the entry exactly as its IDs are:
// a record that does not name it then did not change it.
func (r EntryRef) inRecords() bool {
	if r.Prefix != "" {
		return trailerSafe(r.Prefix) && len(r.Prefix) < maxID
	}
	return !slices.ContainsFunc(r.IDs, func(id string) bool { return !trailerSafe(id) })
}

// EntryLog lists the snapshots that touched one entry (added, removed,
// changed, archived or restored it), newest first by commit time, at most
// limit of them (all when limit <= 0). It walks every snapshot Ref reaches,
// through both parents of a merge, and compares each with its first
// parent: a sync merge that brought another clone's change in is listed,
// and so is that clone's own snapshot that made it, with its provenance.
// Each listed snapshot's Changes hold the entry's change (with patch, its
// diff).
//
// A snapshot whose record names all it changed and not the entry did not
// touch its active file; where it must be compared (no complete record, or
// the archive changed), the chunks that differ are first searched for the
// entry's ID (each chunk read once), and the files are parsed only where
// one holds it.
func (h *History) EntryLog(ref EntryRef, limit int, patch bool) ([]LogEntry, error) {
	head, err := h.head()
	if err != nil || head.IsZero() {
		return nil, err
	}
	w := &entryWalk{h: h, ref: ref, records: ref.inRecords(), holds: map[plumbing.Hash]bool{}, files: newParsedFiles(h), matched: map[string]bool{}, roots: map[plumbing.Hash]map[string]plumbing.Hash{}, commits: map[plumbing.Hash]*commitInfo{}}
	first, err := w.commit(head)
	if err != nil {
		return nil, err
	}
	queue := []*commitInfo{first}
	seen := map[plumbing.Hash]bool{head: true}
	var out []LogEntry
	for len(queue) > 0 && (limit <= 0 || len(out) < limit) {
		i := 0 // the newest commit of the queue, as git log orders them
		for j := range queue {
			if queue[j].when().After(queue[i].when()) {
				i = j
			}
		}
		c := queue[i]
		queue = slices.Delete(queue, i, i+1)
		for _, p := range c.parents {
			if seen[p] {
				continue
			}
			seen[p] = true
			pc, err := w.commit(p)
			if err != nil {
				return out, err
			}
			queue = append(queue, pc)
		}
		e, ok, err := w.visit(c, patch)
		delete(w.commits, c.hash) // its children are visited
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, e)
		}
	}
	if len(w.matched) > 1 {
		ids := make([]string, 0, len(w.matched))
		for id := range w.matched {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return nil, fmt.Errorf("%w: %q matches %s", memfile.ErrAmbiguous, ref.Prefix, strings.Join(ids, ", "))
	}
	return out, nil
}

// entryWalk is the state of one EntryLog.
type entryWalk struct {
	h       *History
	ref     EntryRef
	records bool                   // records name the entry as it is
	holds   map[plumbing.Hash]bool // chunk or blob: its bytes hold one of the entry's IDs
	files   *parsedFiles
	matched map[string]bool                            // the IDs found (a prefix may match several)
	roots   map[plumbing.Hash]map[string]plumbing.Hash // root trees by commit, the last few
	commits map[plumbing.Hash]*commitInfo              // commits read and not visited yet
}

// commit reads a snapshot commit, listing the packs again once when it is
// not found (a repack at work, as Log does).
func (w *entryWalk) commit(hash plumbing.Hash) (*commitInfo, error) {
	if c, ok := w.commits[hash]; ok {
		return c, nil
	}
	c, err := readCommit(w.h.st, hash)
	if err != nil {
		w.h.st.Reindex()
		c, err = readCommit(w.h.st, hash)
	}
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	w.commits[hash] = c
	return c, nil
}

// visit tells whether snapshot c touched the entry, and how.
func (w *entryWalk) visit(c *commitInfo, patch bool) (LogEntry, bool, error) {
	var parent plumbing.Hash
	if len(c.parents) > 0 {
		parent = c.parents[0]
	}
	entries, counts, recordOK := recorded(c.message)
	named, complete := recordedChanges(c.message)
	skipActive := w.records && complete && !slices.ContainsFunc(named, func(x EntryChange) bool { return w.ref.match(x.ID) })
	// The root trees say which files differ at all: most snapshots are
	// passed over from them and the commit alone.
	rootS, err := w.root(c.hash)
	if err != nil {
		return LogEntry{}, false, err
	}
	var rootP map[string]plumbing.Hash
	if !parent.IsZero() {
		if rootP, err = w.root(parent); err != nil {
			return LogEntry{}, false, err
		}
	}
	if (skipActive || rootS[MemoryName] == rootP[MemoryName]) && rootS["archive"] == rootP["archive"] {
		return LogEntry{}, false, nil
	}
	ls, err := w.h.layoutAt(c.hash)
	if err != nil {
		return LogEntry{}, false, err
	}
	var lp layout
	if !parent.IsZero() {
		if lp, err = w.h.layoutAt(parent); err != nil {
			return LogEntry{}, false, err
		}
	}
	active := false
	if !skipActive {
		if active, err = w.touched(lp.memory, ls.memory, MemoryName); err != nil {
			return LogEntry{}, false, err
		}
	}
	archive, err := w.touched(lp.archive, ls.archive, ArchiveName)
	if err != nil || (!active && !archive) {
		return LogEntry{}, false, err
	}

	var f [4]*memfile.File // active before and after, archive before and after
	for i, x := range []struct {
		s    stored
		name string
	}{{lp.memory, MemoryName}, {ls.memory, MemoryName}, {lp.archive, ArchiveName}, {ls.archive, ArchiveName}} {
		if f[i], err = w.files.parse(x.s, x.name); err != nil {
			return LogEntry{}, false, err
		}
	}
	ap, as, rp, rs := w.find(f[0]), w.find(f[1]), w.find(f[2]), w.find(f[3])
	ch := EntryChange{}
	before, after := ap, as
	switch {
	case active && ap == nil && rp != nil:
		ch.Kind, before = Restored, rp
	case active && ap == nil:
		ch.Kind = Added
	case active && as == nil && rs != nil:
		ch.Kind, after = Archived, rs
	case active && as == nil:
		ch.Kind = Removed
	case active:
		ch.Kind = Changed
	default: // in the archive only
		before, after, ch.Archive = rp, rs, true
		switch {
		case rp == nil:
			ch.Kind = Archived
		case rs == nil:
			ch.Kind = Removed
		default:
			ch.Kind = Changed
		}
	}
	e := after
	if e == nil {
		e = before
	}
	t := titled(ch.Kind, e.ID, e)
	ch.ID, ch.Title = t.ID, t.Title
	if patch {
		ch.Diff = new(entryDiff(before, after))
	}
	if !recordOK {
		entries, counts = len(f[1].Entries), Count(Compare(f[0], f[1]))
	}
	return LogEntry{Snapshot: *toSnapshot(c), Entries: entries, Counts: counts, Changes: []EntryChange{ch}}, true, nil
}

// root is the root tree of snapshot commit hash: its entries' hashes by
// name (the last few are kept).
func (w *entryWalk) root(hash plumbing.Hash) (map[string]plumbing.Hash, error) {
	if r, ok := w.roots[hash]; ok {
		return r, nil
	}
	c, err := w.commit(hash)
	if err != nil {
		return nil, err
	}
	entries, err := readTree(w.h.st, c.tree)
	if err != nil {
		return nil, err
	}
	r := make(map[string]plumbing.Hash, len(entries))
	for _, e := range entries {
		r[e.name] = e.hash
	}
	if len(w.roots) >= 64 {
		clear(w.roots)
	}
	w.roots[hash] = r
	return r, nil
}

// touched tells whether the entry differs between two versions of a file.
func (w *entryWalk) touched(before, after stored, name string) (bool, error) {
	if before.key() == after.key() {
		return false, nil
	}
	if !w.ref.Derived {
		hb, err := w.hold(before, name)
		if err != nil {
			return false, err
		}
		ha, err := w.hold(after, name)
		if err != nil || (!hb && !ha) {
			return false, err
		}
	}
	fb, err := w.files.parse(before, name)
	if err != nil {
		return false, err
	}
	fa, err := w.files.parse(after, name)
	if err != nil {
		return false, err
	}
	b, a := w.find(fb), w.find(fa)
	switch {
	case b == nil && a == nil:
		return false, nil
	case b == nil || a == nil:
		return true, nil
	}
	return !sameEntry(b, a), nil
}

// hold tells whether the bytes of file s hold one of the entry's IDs (an
// entry written with its ID is in the file only then). Chunks are cut
// before heading lines, so an ID's line is whole in one chunk: each chunk
// is searched on its own, once per walk.
func (w *entryWalk) hold(s stored, name string) (bool, error) {
	parts := s.chunks
	if s.tree.IsZero() && !s.blob.IsZero() {
		parts = []plumbing.Hash{s.blob}
	}
	needles := w.ref.IDs
	if w.ref.Prefix != "" {
		needles = []string{w.ref.Prefix}
	}
	for _, c := range parts {
		held, ok := w.holds[c]
		if !ok {
			b, err := readObject(w.h.st, plumbing.BlobObject, c, w.h.Limit(name))
			if vanished(err) {
				w.h.st.Reindex()
				b, err = readObject(w.h.st, plumbing.BlobObject, c, w.h.Limit(name))
			}
			if err != nil {
				return false, err
			}
			held = slices.ContainsFunc(needles, func(n string) bool { return bytes.Contains(b, []byte(n)) })
			w.holds[c] = held
		}
		if held {
			return true, nil
		}
	}
	return false, nil
}

// find is the entry of f with one of the entry's IDs, nil when none.
func (w *entryWalk) find(f *memfile.File) *memfile.Entry {
	var found *memfile.Entry
	for i := range f.Entries {
		if e := &f.Entries[i]; w.ref.match(e.ID) {
			if w.ref.Prefix != "" {
				w.matched[e.ID] = true
			}
			if found == nil {
				found = e
			}
		}
	}
	return found
}

// key names the version of a file s holds: its chunks' tree or its blob
// (zero when absent).
func (s stored) key() plumbing.Hash {
	if !s.tree.IsZero() {
		return s.tree
	}
	return s.blob
}

// parsedFiles parses snapshots' files and keeps the last few.
type parsedFiles struct {
	h    *History
	memo map[plumbing.Hash]*memfile.File
}

func newParsedFiles(h *History) *parsedFiles {
	return &parsedFiles{h: h, memo: map[plumbing.Hash]*memfile.File{}}
}

// parse is file s parsed (empty when absent).
func (p *parsedFiles) parse(s stored, name string) (*memfile.File, error) {
	k := s.key()
	if k.IsZero() {
		return &memfile.File{}, nil
	}
	if f, ok := p.memo[k]; ok {
		return f, nil
	}
	b, err := p.h.read(s, p.h.Limit(name), nil)
	if err != nil {
		return nil, err
	}
	f := memfile.Parse(b)
	if len(p.memo) >= 8 {
		clear(p.memo)
	}
	p.memo[k] = f
	return f, nil
}

// memoryOf is the active file of snapshot commit parsed ("": none, empty).
func (p *parsedFiles) memoryOf(commit string) (*memfile.File, error) {
	if commit == "" {
		return &memfile.File{}, nil
	}
	l, err := p.h.layoutAt(plumbing.NewHash(commit))
	if err != nil {
		return nil, err
	}
	return p.parse(l.memory, MemoryName)
}
