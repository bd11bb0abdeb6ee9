package memsync

import (
	"context"
	"os"

	"github.com/memsync/memsync/internal/recall"
	"github.com/memsync/memsync/internal/searchidx"
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
	if len(layers) != 1 || m.session != "" || o.Archive || m.embedder != nil || m.store.StateDir == "" {
		return nil, false, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	// The index reads the entries it returns from the file: all of it
	// under one hold of the readers' lock.
	err = m.st(ctx).ViewActive(func(f *os.File) error {
		if f == nil {
			return nil
		}
		ix, err := searchidx.Load(m.store.StateDir, f, m.store.FilePerm(), m.store.DirPerm())
		if ix == nil || err != nil {
			return err
		}
		defer func() { _ = ix.Close() }()
		hits, found := recall.SearchIndexed(ix, query, o.recallOptions(nil))
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
