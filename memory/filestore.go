package memory

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/memfile"
)

// FileStore is the default Recorder and Retriever: a memsync memory, the
// same file the CLI, the MCP server and orch use, with the same guarantees
// (one lock, dedup, IDs, limits, a clean git status; see memsync.Open).
// Every call reads the current file, so writes by other processes are seen
// at once.
type FileStore struct {
	Memory *memsync.Memory
	// Type and Tags are given to recorded memories (both optional).
	Type string
	Tags []string
}

// OpenRepo returns the FileStore of the repository that contains dir.
func OpenRepo(dir string) (*FileStore, error) {
	m, err := memsync.Open(dir, memsync.Options{})
	if err != nil {
		return nil, err
	}
	return &FileStore{Memory: m}, nil
}

// Bullets FileStore adds to an entry for provenance.
const (
	SourceKey  = "Source"
	CreatedKey = "Created"
)

// Record appends one entry per item, with its creation time and its source.
// An item whose content is already stored is not stored twice: its memory
// is the existing entry (memsync.Memory.Add). It stops at the first error,
// returning what was recorded before it.
func (fs *FileStore) Record(ctx context.Context, items []Item) ([]Entry, error) {
	var out []Entry
	for _, it := range items {
		text := it.Text()
		if text == "" {
			return out, fmt.Errorf("%w: an item needs an input or an output", memfile.ErrInvalid)
		}
		title := memfile.TitleFrom(it.Input)
		if title == "" {
			title = memfile.TitleFrom(text)
		}
		fields := map[string]string{CreatedKey: time.Now().UTC().Format(time.RFC3339Nano)}
		if it.Source != "" {
			fields[SourceKey] = it.Source
		}
		e, err := fs.Memory.Add(ctx, memsync.Entry{Type: fs.Type, Title: title, Content: text, Tags: fs.Tags, Fields: fields})
		if err != nil {
			return out, err
		}
		out = append(out, FromEntry(&e))
	}
	return out, nil
}

// Retrieve ranks the memories for q.Search (as 'memsync search'); an empty
// search returns the newest first.
func (fs *FileStore) Retrieve(ctx context.Context, q Query) ([]Entry, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	var found []memsync.Entry
	var err error
	if q.Search == "" {
		found, err = fs.Memory.List(ctx, memsync.View{})
		slices.Reverse(found)
		found = found[:min(limit, len(found))]
	} else {
		found, err = fs.Memory.Search(ctx, q.Search, memsync.SearchOptions{Limit: limit})
	}
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(found))
	for k := range found {
		out[k] = FromEntry(&found[k])
	}
	return out, nil
}

// FromEntry converts an entry. CreatedAt comes from the Created field, else
// the Date.
func FromEntry(e *memsync.Entry) Entry {
	m := Entry{ID: e.ID, Title: e.Title, Type: e.Type, Tags: e.Tags, Content: e.Content, Source: e.Fields[SourceKey]}
	if e.Score != nil {
		m.Score = *e.Score
	}
	if t, err := time.Parse(time.RFC3339Nano, e.Fields[CreatedKey]); err == nil {
		m.CreatedAt = t
	} else if t, err := time.Parse("2006-01-02", dateOnly(e.Date)); err == nil {
		m.CreatedAt = t
	}
	return m
}

func dateOnly(d string) string {
	if len(d) > 10 {
		return d[:10]
	}
	return d
}
