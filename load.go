package memsync

import (
	"context"
	"sync"

	"github.com/memsync/memsync/internal/hugepage"
	"github.com/memsync/memsync/internal/inject"
	"github.com/memsync/memsync/internal/recall"
	"github.com/memsync/memsync/memfile"
)

// cache keeps the files a Memory read last (active, archive) and their
// search documents: reused while the files hold the same bytes. The file is
// read and compared on every call (store.Store.Reload), so every write, by
// any process, is seen at once.
type cache struct {
	mu   sync.Mutex
	last [2]*memfile.File
	docs [2][]recall.Doc
}

// load reads the active memory (or the archive) now, under the readers'
// lock, and warns of damaged lines (Options.Warn). The file may be shared
// with other calls: read it, never change it.
func (m *Memory) load(ctx context.Context, v View) (*memfile.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st := m.st(ctx)
	k, reload, path := 0, st.Reload, st.Path()
	if v.Archive {
		k, reload, path = 1, st.ReloadArchive, st.ArchivePath()
	}
	m.cache.mu.Lock()
	prev := m.cache.last[k]
	m.cache.mu.Unlock()
	f, err := reload(prev)
	if err != nil {
		return nil, err
	}
	if f != prev {
		m.reportDamage(path, f)
		m.cache.mu.Lock()
		m.cache.last[k], m.cache.docs[k] = f, nil
		m.cache.mu.Unlock()
	}
	return f, nil
}

// docs are the search documents of f, a file load returned.
func (m *Memory) docs(f *memfile.File) []recall.Doc {
	m.cache.mu.Lock()
	defer m.cache.mu.Unlock()
	for k := range m.cache.last {
		if m.cache.last[k] == f {
			if m.cache.docs[k] == nil {
				m.cache.docs[k] = docsOf(f)
			}
			return m.cache.docs[k]
		}
	}
	return docsOf(f)
}

// docsOf are the entries of f as search documents, in file order.
func docsOf(f *memfile.File) []recall.Doc {
	docs := hugepage.Make[recall.Doc](len(f.Entries))
	for i := range f.Entries {
		docs[i] = inject.Doc(&f.Entries[i])
	}
	return docs
}
