package memsync

import (
	"context"
	"os"
	"sync/atomic"
	"time"

	"github.com/memsync/memsync/internal/inject"
	"github.com/memsync/memsync/internal/recall"
	"github.com/memsync/memsync/internal/searchidx"
	"github.com/memsync/memsync/internal/similar"
	"github.com/memsync/memsync/memfile"
)

// searchIndexed answers a search of the active memory from its search
// index (internal/searchidx), reading only the entries it returns; it
// reports false when the index cannot answer (another view than the whole
// active memory, several layers, a model, a file that gets no index, a
// query only the substring fallback answers), and the caller reads the
// whole file. An index that is missing, stale or damaged is built again
// from the file (searchidx.Load).
func (m *Memory) searchIndexed(ctx context.Context, query string, o SearchOptions, layers []*Memory) (out []Entry, ok bool, err error) {
	if len(layers) != 1 || m.session != "" || o.Archive {
		return nil, false, nil
	}
	err = m.withIndex(ctx, func(ix *searchidx.Index) error {
		hits, found := recall.SearchIndexed(ix, nil, query, o.recallOptions(nil))
		if !found {
			return nil
		}
		out, ok = searchResults(hits, o, layers, func(h recall.Hit) (origin, *memfile.Entry, bool) {
			e, ok := ix.Entry(h.Index)
			return origin{0, h.Index}, e, ok
		})
		return nil
	})
	return out, ok, err
}

// indexable reports whether the search index may answer for m: no model
// (its ranking fuses vectors the index does not hold), a state dir.
func (m *Memory) indexable() bool { return m.embedder == nil && m.store.StateDir != "" }

// withIndex runs fn with the search index of the active file, when m is
// indexable and the file has one (searchidx.Load builds a missing, stale
// or damaged one from the file). The index reads the entries fn asks for
// from the file: all of it runs under one hold of the readers' lock.
func (m *Memory) withIndex(ctx context.Context, fn func(ix *searchidx.Index) error) error {
	if !m.indexable() {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return m.st(ctx).ViewActive(func(f *os.File) error {
		if f == nil {
			return nil
		}
		ix, err := searchidx.Load(m.store.StateDir, f, m.store.FilePerm(), m.store.DirPerm())
		if ix == nil || err != nil {
			return err
		}
		defer func() { _ = ix.Close() }()
		return fn(ix)
	})
}

// injectIndexed chooses the memories of an Inject from the search index
// (see searchIndexed), reading only the entries it chooses: the result and
// those entries, in its order. It reports false when the index cannot
// answer; the caller reads the whole file.
func (m *Memory) injectIndexed(ctx context.Context, opts inject.Options) (res inject.Result, chosen []*memfile.Entry, ok bool, err error) {
	err = m.withIndex(ctx, func(ix *searchidx.Index) error {
		src := ix.Entries()
		if res, ok = inject.SelectFrom(src, opts); !ok {
			return nil
		}
		chosen = make([]*memfile.Entry, len(res.Chosen))
		for k, i := range res.Chosen {
			if chosen[k], ok = src.Entry(i); !ok {
				return nil
			}
		}
		return nil
	})
	return res, chosen, ok && err == nil, err
}

// maxNearReads bounds the entries similarIndexed reads from the file; past
// it, comparing every entry's cached terms (similarScan) costs less.
const maxNearReads = 128

// similarIndexed finds the active entries near-duplicate of a text (its
// similar.Set q and similar.Terms terms) through the search index, in
// file order: only the entries that share enough of the text's terms to
// be near-duplicates (similar.MayBeNear, counted from the terms' postings)
// are read and compared, so an add in a large memory reads a few entries,
// not the file. It reports false when the index cannot answer, or when
// more than maxNearReads entries would be read; the caller then compares
// every entry.
func (m *Memory) similarIndexed(ctx context.Context, q similar.Set, terms []string) (hits []nearHit, ok bool, err error) {
	err = m.withIndex(ctx, func(ix *searchidx.Index) error {
		shared := make([]uint32, ix.Len()) // terms of the text each entry holds
		for _, t := range terms {
			for _, p := range ix.Postings(t) {
				if p.InText() && p.Doc < len(shared) {
					shared[p.Doc]++
				}
			}
		}
		var cands []int
		for i, n := range shared {
			if similar.MayBeNear(int(n), len(terms)) {
				if cands = append(cands, i); len(cands) > maxNearReads {
					return nil // many alike entries (numbered runs of one text): comparing every entry's cached terms costs less
				}
			}
		}
		for _, i := range cands {
			e, read := ix.Entry(i)
			if !read {
				return nil // ok stays false: the caller compares every entry
			}
			if score := similar.Score(q, similar.Of(nearText(e))); score >= similar.Threshold && m.injectable(e) {
				hits = append(hits, nearHit{i, e.ID, score})
			}
		}
		ok = true
		return nil
	})
	return hits, ok && err == nil, err
}

// indexUpkeep defers the search index's update after a rewrite while a
// sync runs: the merge's rewrite is indexed while git pushes (the index is
// a cache that every read validates, so a deferred update is only a
// slower first search, never a stale answer).
type indexUpkeep struct {
	deferring atomic.Int32 // syncs under way
	stale     atomic.Bool  // a rewrite was not indexed
}

// postpone reports whether the index's update after a rewrite waits (for
// refresh), noting that one is due.
func (u *indexUpkeep) postpone() bool {
	if u.deferring.Load() == 0 {
		return false
	}
	u.stale.Store(true)
	return true
}

// refreshIndex brings the search index up to date with the active file
// after a deferred rewrite, under the readers' lock, whose wait ends with
// ctx. Without wait it does not wait for the lock: a writer holding it
// indexes the file it changes, or the next search does.
func (m *Memory) refreshIndex(ctx context.Context, wait bool) {
	if !m.index.stale.Swap(false) {
		return
	}
	st := m.st(ctx) // a copy
	if !wait {
		st.LockTimeout = time.Nanosecond
	}
	_ = st.ViewActive(func(f *os.File) error {
		if f != nil {
			searchidx.Changed(m.store.StateDir, f, m.store.FilePerm(), m.store.DirPerm())
		}
		return nil
	})
}
