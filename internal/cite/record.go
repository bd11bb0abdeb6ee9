package cite

import (
	"encoding/json"
	"os"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/memfile"
)

// Record is what the last checks found stale, by entry ID: kept in the
// state dir so that readers (list, search, inject, the MCP server) mark
// stale entries without checking anything themselves.
type Record struct {
	Entries map[string]Mark `json:"entries"`
}

// Mark is one stale entry: why, and the Cites bullet that was checked (a
// mark holds only while the entry cites the same, so an entry re-anchored
// or edited since is not marked by an old check).
type Mark struct {
	Cites  string `json:"cites"`
	Reason string `json:"reason"`
}

// maxRecord bounds the record read.
const maxRecord = 64 << 20

// ReadRecord reads the record at path; none (or a damaged one) is empty.
func ReadRecord(path string) Record {
	r := Record{Entries: map[string]Mark{}}
	b, err := fsutil.ReadFile(path, maxRecord)
	if err != nil || json.Unmarshal(b, &r) != nil || r.Entries == nil {
		return Record{Entries: map[string]Mark{}}
	}
	return r
}

// Write writes the record atomically.
func (r Record) Write(path string, perm os.FileMode) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return fsutil.WriteFile(path, append(b, '\n'), perm)
}

// Reason is why the entry is stale, given its Cites bullet now; "" when
// the record does not mark it.
func (r Record) Reason(id, cites string) string {
	m, ok := r.Entries[id]
	if !ok || m.Cites != cites {
		return ""
	}
	return m.Reason
}

// StaleFunc says why an entry is stale ("" when it is not), for
// inject.Options.Stale; nil for a nil record.
func (r *Record) StaleFunc() func(e *memfile.Entry) string {
	if r == nil {
		return nil
	}
	return func(e *memfile.Entry) string { return r.Reason(e.ID, e.Field(memfile.CitesField)) }
}
