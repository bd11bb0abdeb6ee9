package memsync

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/memsync/memsync/internal/hugepage"
	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/internal/recall"
	"github.com/memsync/memsync/memfile"
)

// ErrEmpty is what Add, Edit and Resolve return (wrapped) for an entry with
// no content.
var ErrEmpty = errors.New("the content is empty")

// View is what a read looks at: the active memory or its archive.
type View struct {
	Archive bool // the archive instead of the active memory
}

// Add stores one entry and returns it as stored, with its ID. Content
// already stored (ignoring case and whitespace, within the session's view)
// is not stored twice: Add returns the stored entry with Duplicate set. The
// entry gets the memory's session; Fields become bullets (a "Key" names the
// entry for Get: one line of text, not a number). In a memory in ralph-orchestrator's
// dialect, the type, title, key, session and fields are kept as tags that
// ralph keeps and memsync reads back; a tag of the entry's own that would
// read back as one of them is refused. An entry holding a secret is refused
// (ErrSecret) unless ctx comes from AllowSecrets (or Fields hold a
// Secret-Allowed bullet for its rules), which a worker may not use.
//
// Add cites the tracked files the content names (AddWith, which also takes
// citations and an entry to supersede).
func (m *Memory) Add(ctx context.Context, in Entry) (Entry, error) {
	return m.AddWith(ctx, in, AddOptions{})
}

// add is Add; prepare sets what AddWith adds to the entry, once its
// provenance is recorded.
func (m *Memory) add(ctx context.Context, in Entry, prepare func(e *memfile.Entry) error) (Entry, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, err
	}
	if strings.TrimSpace(in.Content) == "" {
		return Entry{}, fmt.Errorf("%w: %w", memfile.ErrInvalid, ErrEmpty)
	}
	e := m.store.NewEntry(in.Type, in.Title, in.Content, in.Tags)
	for _, k := range slices.Sorted(maps.Keys(in.Fields)) {
		v := strings.TrimSpace(in.Fields[k])
		if v == "" {
			continue
		}
		switch k {
		case memfile.KeyField:
			if err := memfile.CheckKey(v); err != nil {
				return Entry{}, err
			}
		case memfile.SecretAllowedField: // the override, written by the caller
			if err := m.allow(policy.OpSecret); err != nil {
				return Entry{}, err
			}
		}
		if err := oneLine(k, v); err != nil {
			return Entry{}, err
		}
		e.SetField(k, v)
	}
	if m.session != "" {
		e.SetField("Session", m.session)
	}
	m.writer().Fill(&e)
	if err := prepare(&e); err != nil {
		return Entry{}, err
	}
	if err := m.store.CheckDialect(&e); err != nil {
		return Entry{}, err
	}
	if err := m.allowAsked(ctx, &e); err != nil {
		return Entry{}, err
	}
	if err := m.beforeWrite(); err != nil {
		return Entry{}, err
	}
	e, dup, err := m.st(ctx).Add(e)
	if err != nil {
		return Entry{}, m.forRole(err)
	}
	out := entryOf(&e, 0)
	out.Duplicate = dupName[dup]
	return out, nil
}

// oneLine refuses a bullet value that is not one line of printable text:
// invalid UTF-8 would damage the file, a control character (memfile.LineControl:
// a bidi override, a line separator too) break the bullet or hide in it.
func oneLine(name, v string) error {
	if !printableLine(v) {
		return fmt.Errorf("%w: %s must be one line of printable text", memfile.ErrInvalid, name)
	}
	return nil
}

// printableLine tells whether v is one line of printable text.
func printableLine(v string) bool {
	return utf8.ValidString(v) && strings.IndexFunc(v, memfile.LineControl) < 0
}

// inView tells whether an entry is in the session's view: without a
// session every entry; with one, the session's entries and those saved
// without a session (shared by all sessions).
func (m *Memory) inView(e *memfile.Entry) bool { return memfile.Visible(e, m.session) }

// List returns the entries in the session's view, in file order, numbered
// as the file numbers them.
func (m *Memory) List(ctx context.Context, v View) ([]Entry, error) {
	f, err := m.load(ctx, v)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(f.Entries))
	for i := range f.Entries {
		if m.inView(&f.Entries[i]) {
			out = append(out, entryOf(&f.Entries[i], i+1))
		}
	}
	if !v.Archive {
		markStale(m.marks(), out)
	}
	return out, nil
}

// Get returns the entries refs name, in that order, each once. A reference
// is, first match wins: a full ID, a number (the N-th entry as List numbers
// it), a key (the Key field an entry was saved with), a unique ID prefix of
// 4 or more characters. Entries
// returned from the active memory count as accessed (gc's TTL).
func (m *Memory) Get(ctx context.Context, v View, refs ...string) ([]Entry, error) {
	f, err := m.load(ctx, v)
	if err != nil {
		return nil, err
	}
	idx, err := f.FindAll(refs)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(idx))
	ids := make([]string, len(idx))
	for k, i := range idx {
		e := f.Entries[i] // a copy: Text renders it as the file has it
		out[k] = entryOf(&e, i+1)
		out[k].src = &e
		ids[k] = e.ID
	}
	if !v.Archive {
		m.touch(ids...)
		markStale(m.marks(), out)
	}
	return out, nil
}

// Delete removes the entries refs name for good (not archived: Archive
// keeps them), in one atomic rewrite; a reference that names nothing (or
// names several) fails the call, and nothing is deleted, not even what the
// others name. Where the memory keeps history (hooks installed, or a
// snapshot ref), the memory is snapshotted first, so Rollback brings the
// entries back. Owner and admin only.
func (m *Memory) Delete(ctx context.Context, refs ...string) ([]Entry, error) {
	st, err := m.beginWrite(ctx, policy.OpDelete, "delete")
	if err != nil {
		return nil, err
	}
	var deleted []Entry
	err = st.Update(func(f *memfile.File) error {
		m.reportDamage(m.store.Path(), f)
		idx, err := f.FindAll(refs)
		if err != nil {
			return err
		}
		drop := map[int]bool{}
		for _, i := range idx {
			drop[i] = true
			deleted = append(deleted, entryOf(&f.Entries[i], i+1))
		}
		kept := f.Entries[:0]
		for i, e := range f.Entries {
			if !drop[i] {
				kept = append(kept, e)
			}
		}
		f.Entries = kept
		return nil
	})
	if err != nil {
		return nil, err
	}
	return deleted, nil
}

// origin is where a search document came from: an entry of a layer's file.
type origin struct{ layer, i int }

// SearchOptions filter and bound a search.
type SearchOptions struct {
	View
	Limit int      // at most this many (0: all)
	Tags  []string // only entries with all these tags
	// AnyTags keeps only entries with at least one of these tags.
	AnyTags []string
	Type    string // only entries of this type
	Filter  Filter // only entries of this author, branch, agent
}

// Search ranks the entries in the session's view for query (BM25 over
// title, tags, type and content), best first; with an
// Embedder (Options.Embedder, Options.Model), fused with a ranking by
// meaning. Entries returned from the active memory count as accessed.
func (m *Memory) Search(ctx context.Context, query string, o SearchOptions) ([]Entry, error) {
	return SearchLayers(ctx, query, o, m)
}

// SearchLayers is Search over several memories (the project and the global
// layer) ranked as one; with more than one, each entry's Layer names its
// memory.
func SearchLayers(ctx context.Context, query string, o SearchOptions, layers ...*Memory) ([]Entry, error) {
	if len(layers) == 0 {
		return []Entry{}, ctx.Err() // no memory: nothing found
	}
	if len(layers) == 1 {
		if out, ok, err := layers[0].searchIndexed(ctx, query, o, layers); ok || err != nil {
			return out, err
		}
	}
	files := make([]*memfile.File, len(layers))
	n := 0
	for k, m := range layers {
		f, err := m.load(ctx, o.View)
		if err != nil {
			return nil, err
		}
		files[k] = f
		n += len(f.Entries)
	}
	var docs []recall.Doc
	var at []origin // where docs[k] came from; nil: the one layer's file, in order
	if len(layers) == 1 && layers[0].session == "" {
		docs = layers[0].docs(files[0]) // every entry is in view: no copy
	} else {
		docs = hugepage.Make[recall.Doc](n)[:0]
		at = make([]origin, 0, n)
		for k, m := range layers {
			f := files[k]
			all := m.docs(f)
			for i := range f.Entries {
				if m.inView(&f.Entries[i]) {
					docs = append(docs, all[i])
					at = append(at, origin{k, i})
				}
			}
		}
	}
	sem, err := semantic(ctx, query, o.View, layers, files, at, docs)
	if err != nil {
		return nil, err
	}
	hits := recall.Search(docs, query, o.recallOptions(sem))
	out, _ := searchResults(hits, o, layers, func(h recall.Hit) (origin, *memfile.Entry, bool) {
		src := origin{0, h.Index}
		if at != nil {
			src = at[h.Index]
		}
		return src, &files[src.layer].Entries[src.i], true
	})
	return out, nil
}

// recallOptions are the options of the ranking of o's search.
func (o SearchOptions) recallOptions(sem *recall.Semantic) recall.Options {
	limit := o.Limit
	if o.Filter != (Filter{}) {
		limit = 0 // the filter picks from all hits; the limit applies after it
	}
	return recall.Options{Limit: limit, Tags: o.Tags, AnyTags: o.AnyTags, Type: memfile.NormalizeType(o.Type), Semantic: sem}
}

// searchResults are the entries of the hits of a search of layers, best
// first: at most o.Limit of those o.Filter keeps, superseded ones left out
// (but from the archive), each with its score; they count as accessed.
// entry tells where a hit came from and reads its entry; when it cannot,
// searchResults reports false.
func searchResults(hits []recall.Hit, o SearchOptions, layers []*Memory, entry func(recall.Hit) (origin, *memfile.Entry, bool)) ([]Entry, bool) {
	out := make([]Entry, 0, len(hits))
	touched := make([][]string, len(layers))
	for _, h := range hits {
		if o.Limit > 0 && len(out) == o.Limit {
			break
		}
		src, e, ok := entry(h)
		if !ok {
			return nil, false
		}
		if !o.Archive && e.Field(memfile.SupersededByField) != "" {
			continue // superseded: never an active answer
		}
		x := entryOf(e, src.i+1)
		if !o.Filter.match(&x) {
			continue
		}
		score := h.Score
		x.Score = &score
		if len(layers) > 1 {
			x.Layer = layers[src.layer].layerName()
		}
		out = append(out, x)
		touched[src.layer] = append(touched[src.layer], e.ID)
	}
	if !o.Archive {
		for k, ids := range touched {
			layers[k].touch(ids...)
		}
		markLayers(layers, out)
	}
	return out, true
}

// layerName is "global" or "project".
func (m *Memory) layerName() string {
	if m.repo == nil {
		return "global"
	}
	return "project"
}

// touch records that entries were returned to a reader (gc's TTL counts
// from the last access), unless Options.NoAccessLog (MEMSYNC_RECORD_ACCESS=0).
func (m *Memory) touch(ids ...string) {
	if !m.noAccess && len(ids) > 0 {
		m.store.RecordAccess(ids...)
	}
}

// maxProblems is how many damage reports a read warns of before summing up.
const maxProblems = 5

// reportDamage warns (Options.Warn) about what of f, read from path, did
// not parse; the operation goes on with what did.
func (m *Memory) reportDamage(path string, f *memfile.File) {
	for i, p := range f.Problems {
		if i == maxProblems {
			m.warn(fmt.Sprintf("%s: %d more problem(s)", path, len(f.Problems)-maxProblems))
			break
		}
		m.warn(fmt.Sprintf("%s:%d: %s", path, p.Line, p.Msg))
	}
	if len(f.Problems) > 0 {
		m.warn("reading what parses; a rewrite keeps a backup of the damaged file beside it")
	}
}
