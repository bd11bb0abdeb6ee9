package memsync

import (
	"context"
	"path/filepath"

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
// from the file just read.
func (m *Memory) searchIndexed(ctx context.Context, query string, o SearchOptions, layers []*Memory) ([]Entry, bool, error) {
	if len(layers) != 1 || m.session != "" || o.Archive || m.embedder != nil || m.store.StateDir == "" {
		return nil, false, nil
	}
	ix, err := m.searchIndex(ctx)
	if ix == nil || err != nil {
		return nil, false, err
	}
	defer func() { _ = ix.Close() }()
	hits, ok := recall.SearchIndexed(ix, query, o.recallOptions(nil))
	if !ok {
		return nil, false, nil
	}
	out, ok := searchResults(hits, o, layers, func(h recall.Hit) (origin, *memfile.Entry, bool) {
		e, ok := ix.Entry(h.Index)
		return origin{0, h.Index}, e, ok
	})
	return out, ok, nil
}

// searchIndex reads the active memory under the readers' lock and returns
// its search index, built again (and saved, when the state dir is
// writable) when the one saved does not match the file; nil for a file
// that gets none.
func (m *Memory) searchIndex(ctx context.Context) (*searchidx.Index, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var data []byte
	if err := m.st(ctx).ReadActive(func(d []byte) error { data = d; return nil }); err != nil || data == nil {
		return nil, err
	}
	dir := m.store.StateDir
	ix, err := searchidx.Open(filepath.Join(dir, searchidx.FileName), data)
	if err == nil && !ix.Stale() {
		return ix, nil
	}
	if err == nil {
		_ = ix.Close()
	}
	raw, ok := searchidx.Build(data)
	if !ok {
		return nil, nil
	}
	_ = searchidx.Save(dir, raw, m.store.FilePerm(), m.store.DirPerm()) // a cache: searching goes on without it
	return searchidx.Decode(raw, data)
}
