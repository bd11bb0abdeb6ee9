package memsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/memsync/memsync/embed"
	"github.com/memsync/memsync/internal/config"
	"github.com/memsync/memsync/internal/recall"
	"github.com/memsync/memsync/memfile"
)

// newEmbedder returns how a Memory gets its Embedder: Options.Embedder, else
// the Model2Vec model of Options.Model (MEMSYNC_MODEL) or of the
// configuration, loaded at the first search and kept once it loads (a failed
// load is tried again at the next search, so a long-lived Memory sees a
// fixed folder); nil when none is set.
func newEmbedder(o Options, cfg config.Config) func() (embed.Embedder, error) {
	if o.Embedder != nil {
		return func() (embed.Embedder, error) { return o.Embedder, nil }
	}
	dir, from := o.Model, "MEMSYNC_MODEL"
	if dir == "" {
		dir, from = cfg.Model, "the configuration's model"
	}
	if dir == "" {
		return nil
	}
	var (
		mu     sync.Mutex
		loaded embed.Embedder
	)
	return func() (embed.Embedder, error) {
		mu.Lock()
		defer mu.Unlock()
		if loaded != nil {
			return loaded, nil
		}
		dir := dir
		if rest, ok := strings.CutPrefix(dir, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, &ConfigError{fmt.Errorf("%s: %w", from, err)}
			}
			dir = filepath.Join(home, rest)
		}
		e, err := embed.LoadModel2Vec(dir)
		if err != nil {
			return nil, &ConfigError{fmt.Errorf("%s: %w (fix the folder, or unset it to search by words only)", from, err)}
		}
		loaded = e
		return e, nil
	}
}

// semantic returns the vectors that fuse meaning into a ranking of docs for
// query, or nil when layers[0] has no Embedder. docs are the entries of
// files (one per layer, in view v) in order, or those at[k] names.
func semantic(ctx context.Context, query string, v View, layers []*Memory, files []*memfile.File, at []origin, docs []recall.Doc) (*recall.Semantic, error) {
	if layers[0].embedder == nil || strings.TrimSpace(query) == "" {
		return nil, nil
	}
	e, err := layers[0].embedder()
	if err != nil {
		return nil, err
	}
	q, err := e.Embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	per := make([][][]float32, len(layers))
	for k, m := range layers {
		if per[k], err = m.vectors(ctx, e, files[k], v); err != nil {
			return nil, err
		}
	}
	sem := &recall.Semantic{Query: q[0], Docs: make([][]float32, len(docs))}
	for k := range docs {
		src := origin{0, k}
		if at != nil {
			src = at[k]
		}
		sem.Docs[k] = per[src.layer][src.i]
	}
	return sem, nil
}

// vectors are the vectors of the entries of f, a file of m's view v, from
// the cache in m's state dir (one for the active file, one for the archive).
// A cache that cannot be written is only a warning.
func (m *Memory) vectors(ctx context.Context, e embed.Embedder, f *memfile.File, v View) ([][]float32, error) {
	dir := m.store.StateDir
	if v.Archive {
		dir = filepath.Join(dir, "archive")
	}
	docs := m.docs(f)
	texts := make([]string, len(docs))
	for i := range docs {
		texts[i] = docs[i].Text()
	}
	cache := embed.NewCache(dir)
	cache.Mode = m.store.FileMode // the global layer's: private
	vecs, err := cache.Vectors(ctx, e, texts)
	if errors.Is(err, embed.ErrNotSaved) {
		m.warn(err.Error())
		err = nil
	}
	return vecs, err
}

// injectVectors are the vectors inject fuses in for query over the entries
// of all (files of layers, joined: at[i] is where entry i came from; nil
// when all is files[0]), or nil without an Embedder.
func (m *Memory) injectVectors(ctx context.Context, query string, layers []*Memory, files []*memfile.File, all *memfile.File, at []origin) (*recall.Semantic, error) {
	if at == nil {
		return semantic(ctx, query, View{}, layers, files, nil, m.docs(all))
	}
	if m.embedder == nil {
		return nil, nil // no documents to make
	}
	return semantic(ctx, query, View{}, layers, files, at, docsOf(all))
}
