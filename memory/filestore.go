package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/merge"
	"github.com/memsync/memsync/recall"
	"github.com/memsync/memsync/worktree"
)

// FileStore is the default Recorder and Retriever: a memories.md store, the
// same file the CLI, the MCP server and orch use. Every call reads the
// current file, so writes by other processes are seen at once.
type FileStore struct {
	Store *memfile.Store
	// Type and Tags are given to recorded memories (both optional).
	Type string
	Tags []string
}

// OpenRepo returns the FileStore of the repository that contains dir.
func OpenRepo(dir string) (*FileStore, error) {
	repo, err := worktree.Discover(dir)
	if err != nil {
		return nil, err
	}
	st := memfile.Open(repo.Home)
	st.Unmark = merge.Hook(merge.LogPath(repo.CommonDir), nil) // conflict markers merge by entry before a rewrite
	return &FileStore{Store: st}, nil
}

// Bullets FileStore adds to an entry for provenance.
const (
	SourceKey  = "Source"
	CreatedKey = "Created"
)

// Record appends one entry per item, each with a fresh uuidv7 ID, its
// creation time and its source. An item whose content is already stored is
// not stored twice: its memory is the existing entry (memfile.Store.Add). It
// stops at the first error, returning what was recorded before it.
func (fs *FileStore) Record(ctx context.Context, items []Item) ([]Memory, error) {
	var out []Memory
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		text := it.Text()
		if text == "" {
			return out, fmt.Errorf("%w: an item needs an input or an output", memfile.ErrInvalid)
		}
		id, err := uuid.NewV7()
		if err != nil {
			return out, err
		}
		created := time.Unix(id.Time().UnixTime()).UTC()
		title := memfile.TitleFrom(it.Input)
		if title == "" {
			title = memfile.TitleFrom(text)
		}
		e := fs.Store.NewEntry(fs.Type, title, text, fs.Tags)
		e.ID = id.String()
		e.Date = created.Format("2006-01-02")
		if it.Source != "" {
			e.Extra = append(e.Extra, memfile.Field{Key: SourceKey, Value: it.Source})
		}
		e.Extra = append(e.Extra, memfile.Field{Key: CreatedKey, Value: created.Format(time.RFC3339Nano)})
		if e, _, err = fs.Store.Add(e); err != nil {
			return out, err
		}
		out = append(out, FromEntry(&e))
	}
	return out, nil
}

// Retrieve ranks the memories for q.Search (BM25, as 'memsync search'); an
// empty search returns the newest first.
func (fs *FileStore) Retrieve(ctx context.Context, q Query) ([]Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := fs.Store.Load()
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	hits := recall.Search(Docs(f), q.Search, recall.Options{Limit: limit})
	out := make([]Memory, len(hits))
	for k, h := range hits {
		out[k] = FromEntry(&f.Entries[h.Index])
		out[k].Score = h.Score
	}
	return out, nil
}

// Docs gives the entries of f to recall.Search.
func Docs(f *memfile.File) []recall.Doc {
	docs := make([]recall.Doc, len(f.Entries))
	for i := range f.Entries {
		e := &f.Entries[i]
		docs[i] = e.Doc()
	}
	return docs
}

// FromEntry converts an entry of memories.md. CreatedAt comes from the
// Created bullet, else a uuidv7 ID's time, else the Date.
func FromEntry(e *memfile.Entry) Memory {
	m := Memory{ID: e.ID, Title: e.Title, Type: e.Type, Tags: e.Tags, Content: e.Content}
	for _, f := range e.Extra {
		switch f.Key {
		case SourceKey:
			m.Source = f.Value
		case CreatedKey:
			if t, err := time.Parse(time.RFC3339Nano, f.Value); err == nil {
				m.CreatedAt = t
			}
		}
	}
	if m.CreatedAt.IsZero() {
		if id, err := uuid.Parse(e.ID); err == nil && id.Version() == 7 {
			m.CreatedAt = time.Unix(id.Time().UnixTime()).UTC()
		} else if t, err := time.Parse("2006-01-02", dateOnly(e.Date)); err == nil {
			m.CreatedAt = t
		}
	}
	return m
}

func dateOnly(d string) string {
	if len(d) > 10 {
		return d[:10]
	}
	return d
}
