package memsync

import (
	"context"
	"path/filepath"
	"slices"
	"sync"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/similar"
	"github.com/memsync/memsync/memfile"
)

// maxSimilar is how many near-duplicates an add names at most.
const maxSimilar = 3

// nearSets keeps the similarity sets of the active file a Memory read last
// (package similar), reused while the file holds the same bytes.
type nearSets struct {
	mu   sync.Mutex
	file *memfile.File
	sets []similar.Set
}

// sets are the similarity sets of f's entries, in order: kept in the
// state dir by the digest of each entry's text (similar.Cache), so a
// process tokenizes only the entries it has not seen.
func (m *Memory) sets(f *memfile.File) []similar.Set {
	m.near.mu.Lock()
	defer m.near.mu.Unlock()
	if m.near.file != f {
		c := similar.OpenCache(filepath.Join(m.store.StateDir, "similar"))
		sets := make([]similar.Set, len(f.Entries))
		for i := range f.Entries {
			sets[i] = c.Of(nearText(&f.Entries[i]))
		}
		if fsutil.MkdirAll(m.store.StateDir, m.store.DirPerm()) == nil {
			_ = c.Save(m.store.FilePerm()) // a cache: an add goes on without it
		}
		m.near.file, m.near.sets = f, sets
	}
	return m.near.sets
}

// nearText is what of an entry is compared: its title and content (a
// title that is the content's first line adds no term to the set).
func nearText(e *memfile.Entry) string { return e.Title + "\n" + e.Content }

// nearHit is an entry near-duplicate of a text: its place in the active
// file, ID and similar.Score.
type nearHit struct {
	at    int
	id    string
	score float64
}

// similarTo returns the IDs of the active entries in the session's view
// that are near-duplicates of content (package similar), most similar
// first, at most maxSimilar; superseded entries and skip are left out.
func (m *Memory) similarTo(ctx context.Context, title, content string) ([]string, error) {
	text := nearText(&memfile.Entry{Title: title, Content: content})
	q := similar.Of(text)
	if q.Empty() {
		return nil, nil
	}
	hits, ok, err := m.similarIndexed(ctx, q, similar.Terms(text))
	if err == nil && !ok {
		hits, err = m.similarScan(ctx, q)
	}
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(hits, func(a, b nearHit) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	var ids []string
	for _, h := range hits[:min(len(hits), maxSimilar)] {
		ids = append(ids, h.id)
	}
	return ids, nil
}

// similarScan is similarIndexed comparing every active entry with q.
func (m *Memory) similarScan(ctx context.Context, q similar.Set) ([]nearHit, error) {
	f, err := m.load(ctx, View{})
	if err != nil {
		return nil, err
	}
	var hits []nearHit
	for i, s := range m.sets(f) {
		e := &f.Entries[i]
		if score := similar.Score(q, s); score >= similar.Threshold && m.injectable(e) {
			hits = append(hits, nearHit{i, e.ID, score})
		}
	}
	return hits, nil
}
