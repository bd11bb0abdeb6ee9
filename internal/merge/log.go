package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/memfile"
)

// Record is a conflict kept in the conflict log until someone settles it:
// the entry's versions as memories.md renders them.
type Record struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Source string `json:"source"` // what found it: "sync origin", "doctor", "rewrite"
	Time   string `json:"time"`   // RFC 3339
	Base   string `json:"base,omitempty"`
	Ours   string `json:"ours"`
	Theirs string `json:"theirs"`
	// Kind is "" for a conflict (ours kept, theirs recorded) and Merged for
	// edits on both sides merged as text (Ours is the merged entry, Before
	// ours before the merge), kept for review.
	Kind   string `json:"kind,omitempty"`
	Before string `json:"before,omitempty"`
}

// Merged is the Kind of a record of edits merged as text.
const Merged = "merged"

// Versions parses the record's versions back into entries (base is nil when
// the record has none).
func (r Record) Versions() (base *memfile.Entry, ours, theirs memfile.Entry) {
	one := func(text string) memfile.Entry {
		f := memfile.Parse([]byte(text))
		if len(f.Entries) == 0 {
			return memfile.Entry{ID: r.ID}
		}
		e := f.Entries[0]
		e.ID = r.ID
		return e
	}
	if r.Base != "" {
		b := one(r.Base)
		base = &b
	}
	return base, one(r.Ours), one(r.Theirs)
}

// MaxLog bounds the read of a conflict log: far above what any number of
// conflicts between memories within the size caps makes.
const MaxLog = 256 << 20

// LoadLog reads the conflict log at path; a missing log is empty. It is
// memsync's own file: read never through a symlink, never a pipe or a
// device, at most MaxLog bytes (fsutil.ReadOwn).
func LoadLog(path string) ([]Record, error) {
	data, err := fsutil.ReadOwn(path, MaxLog)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeLog(path, data)
}

// decodeLog parses the conflict log read from path (where names it in
// the error); nil or empty data is an empty log.
func decodeLog(where string, data []byte) ([]Record, error) {
	var rs []Record
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(data, &rs); err != nil {
		return nil, fmt.Errorf("conflict log %s: %w", where, err)
	}
	for _, r := range rs {
		if r.ID == "" {
			return nil, fmt.Errorf("conflict log %s: a record without an ID", where)
		}
	}
	return rs, nil
}

// ParseLog parses a conflict log's text (a snapshot's conflicts.json);
// where names it in the error.
func ParseLog(where string, data []byte) ([]Record, error) { return decodeLog(where, data) }

// encodeLog is the conflict log's text.
func encodeLog(rs []Record) ([]byte, error) {
	data, err := json.MarshalIndent(rs, "", "  ")
	return append(data, '\n'), err
}

// EncodeLog is the conflict log's text as SaveLog writes it; nil for an
// empty log (no file).
func EncodeLog(rs []Record) []byte {
	if len(rs) == 0 {
		return nil
	}
	data, _ := encodeLog(rs) // records are strings: they always encode
	return data
}

// Logs merges two sides' conflict logs against their common base, by
// conflict ID, as entries are merged: a record one side settled (in base,
// gone from that side) is gone; a record one side found (not in base) is
// kept; a record on both sides keeps the newer. The result is in ours'
// order, then theirs' new records.
func Logs(base, ours, theirs []Record) []Record {
	index := func(rs []Record) map[string]Record {
		m := make(map[string]Record, len(rs))
		for _, r := range rs {
			m[r.ID] = r
		}
		return m
	}
	b, o, t := index(base), index(ours), index(theirs)
	var out []Record
	for _, r := range ours {
		_, inBase := b[r.ID]
		tr, inTheirs := t[r.ID]
		switch {
		case inTheirs && tr.Time > r.Time:
			out = append(out, tr)
		case inTheirs || !inBase:
			out = append(out, r)
		}
	}
	for _, r := range theirs {
		if _, inOurs := o[r.ID]; !inOurs {
			if _, inBase := b[r.ID]; !inBase {
				out = append(out, r)
			}
		}
	}
	return out
}

// Add returns rs with the conflicts found by source added (a newer record
// of an ID replaces the older one).
func Add(rs []Record, source string, conflicts []Conflict) []Record {
	now := time.Now().UTC().Format(time.RFC3339)
	for _, c := range conflicts {
		r := Record{ID: c.ID, Title: c.Ours.Heading(), Source: source, Time: now,
			Ours: memfile.RenderEntry(&c.Ours, memfile.Orch), Theirs: memfile.RenderEntry(&c.Theirs, memfile.Orch)}
		if c.Base != nil {
			r.Base = memfile.RenderEntry(c.Base, memfile.Orch)
		}
		if c.Before != nil {
			r.Kind, r.Before = Merged, memfile.RenderEntry(c.Before, memfile.Orch)
		}
		rs = append(Forget(rs, c.ID), r)
	}
	return rs
}

// SaveLog writes the conflict log atomically; an empty log removes the file.
// Callers hold the memory's writers' lock.
func SaveLog(path string, rs []Record) error {
	if len(rs) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := encodeLog(rs)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFile(path, data, 0o644)
}

// Log adds conflicts to the log at path (a newer record of an ID replaces
// the older one). Callers hold the memory's writers' lock.
func Log(path, source string, conflicts []Conflict) error {
	if len(conflicts) == 0 {
		return nil
	}
	rs, err := LoadLog(path)
	if err != nil {
		return err
	}
	return SaveLog(path, Add(rs, source, conflicts))
}

// Forget returns the log without the record of id.
func Forget(rs []Record, id string) []Record {
	out := rs[:0:0]
	for _, r := range rs {
		if r.ID != id {
			out = append(out, r)
		}
	}
	return out
}

// Find returns the index of the record ref names: a full ID or a unique
// prefix of at least memfile.MinPrefix characters.
func Find(rs []Record, ref string) (int, error) {
	found := -1
	var ids []string
	for i, r := range rs {
		if r.ID == ref {
			return i, nil
		}
		if len(ref) >= memfile.MinPrefix && strings.HasPrefix(r.ID, ref) {
			found = i
			ids = append(ids, r.ID)
		}
	}
	switch len(ids) {
	case 0:
		return -1, fmt.Errorf("%w: no recorded conflict for %q", memfile.ErrNotFound, ref)
	case 1:
		return found, nil
	}
	return -1, fmt.Errorf("%w: %q matches %s", memfile.ErrAmbiguous, ref, strings.Join(ids, ", "))
}

// LogPath is where a repository's conflict log is kept: <common dir>/memsync/
// conflicts.json, beside the memory, shared by all worktrees; snapshots hold
// it (conflicts.json in their tree), so a conflict and its resolution travel
// with the memory to every clone.
func LogPath(commonDir string) string {
	return filepath.Join(commonDir, "memsync", "conflicts.json")
}

// LogFile is the conflict log at a path (LogPath) as a store's
// store.ConflictLog: a memory file with git conflict markers is merged by
// entry before any rewrite, and the entries its two sides hold differently
// are recorded here, as found in "conflict markers in <path>".
type LogFile string

// Record adds the entries the two sides of the conflict markers in the
// memory file at path hold differently: ours kept, theirs for review.
func (l LogFile) Record(path string, ours, theirs []memfile.Entry) error {
	return Log(string(l), "conflict markers in "+path, markerConflicts(ours, theirs))
}
