package history

import (
	"fmt"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/memfile"
)

// Change kinds.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Change is one entry that differs between two states of the memory,
// matched by ID.
type Change struct {
	Kind   string         // Added, Removed or Changed
	ID     string         // the entry's ID
	Before *memfile.Entry // nil when added
	After  *memfile.Entry // nil when removed
}

// Compare lists the entries that differ from before to after, matched by ID:
// added and changed ones in after's order, then removed ones in before's.
// An entry without a stored ID has one derived from its text, so editing it
// shows as one removed and one added entry.
func Compare(before, after *memfile.File) []Change {
	old := map[string]*memfile.Entry{}
	for i := range before.Entries {
		old[before.Entries[i].ID] = &before.Entries[i]
	}
	seen := map[string]bool{}
	var out []Change
	for i := range after.Entries {
		e := &after.Entries[i]
		seen[e.ID] = true
		switch b, ok := old[e.ID]; {
		case !ok:
			out = append(out, Change{Kind: Added, ID: e.ID, After: e})
		case !sameEntry(b, e):
			out = append(out, Change{Kind: Changed, ID: e.ID, Before: b, After: e})
		}
	}
	for i := range before.Entries {
		e := &before.Entries[i]
		if !seen[e.ID] {
			seen[e.ID] = true
			out = append(out, Change{Kind: Removed, ID: e.ID, Before: e})
		}
	}
	return out
}

// Compose is the changes of a then b, as one step: an entry changed by
// both is one change from a's before to b's after (none when that is no
// change), in a's order, then b's new ones.
func Compose(a, b []Change) []Change {
	if len(a) == 0 {
		return b
	}
	at := map[string]int{}
	out := slices.Clone(a)
	for i, c := range out {
		at[c.ID] = i
	}
	for _, c := range b {
		i, ok := at[c.ID]
		if !ok {
			at[c.ID] = len(out)
			out = append(out, c)
			continue
		}
		out[i].After = c.After
	}
	kept := out[:0]
	for _, c := range out {
		switch {
		case c.Before == nil && c.After == nil:
			continue
		case c.Before == nil:
			c.Kind = Added
		case c.After == nil:
			c.Kind = Removed
		case sameEntry(c.Before, c.After):
			continue
		default:
			c.Kind = Changed
		}
		kept = append(kept, c)
	}
	return kept
}

// Counts sums up changes by kind.
type Counts struct {
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Changed int `json:"changed"`
}

// Count sums up changes by kind.
func Count(changes []Change) Counts {
	var c Counts
	for _, ch := range changes {
		switch ch.Kind {
		case Added:
			c.Added++
		case Removed:
			c.Removed++
		case Changed:
			c.Changed++
		}
	}
	return c
}

// LogEntry is one snapshot in the log, with what changed in its active
// file since its parent.
type LogEntry struct {
	Snapshot
	Entries int `json:"entries"` // entries in the snapshot's active file
	Counts
	// Changes are the entries it changed (LogChanges, EntryLog); nil
	// from Log.
	Changes []EntryChange `json:"changes,omitzero"`
}

// Log lists the snapshots newest first, following first parents, at most
// limit of them (all when limit <= 0). It reads only the commits of
// snapshots that record their changes (trailers, record.go); one that does
// not (an older memsync's) is compared with its parent as before.
func (h *History) Log(limit int) ([]LogEntry, error) {
	head, err := h.head()
	if err != nil || head.IsZero() {
		return nil, err
	}
	var out []LogEntry
	hash := head.String()
	var cur *memfile.File // hash's parsed active file, when a comparison read it
	for hash != "" && (limit <= 0 || len(out) < limit) {
		c, err := readCommit(h.st, plumbing.NewHash(hash))
		if err != nil {
			// A repack (Maintain, git gc) at work moves objects into a
			// new pack and deletes the old: listed again, they are found.
			h.st.Reindex()
			c, err = readCommit(h.st, plumbing.NewHash(hash))
		}
		if err != nil {
			return out, fmt.Errorf("read snapshot: %w", err)
		}
		s := toSnapshot(c)
		if entries, counts, ok := recorded(c.message); ok {
			out = append(out, LogEntry{Snapshot: *s, Entries: entries, Counts: counts})
			hash, cur = s.Parent, nil
			continue
		}
		if cur == nil {
			if cur, err = h.parsed(hash); err != nil {
				return out, err
			}
		}
		parent := &memfile.File{}
		if s.Parent != "" {
			if parent, err = h.parsed(s.Parent); err != nil {
				return out, err
			}
		}
		out = append(out, LogEntry{Snapshot: *s, Entries: len(cur.Entries), Counts: Count(Compare(parent, cur))})
		hash, cur = s.Parent, parent
	}
	return out, nil
}

// parsed reads and parses a snapshot's active file.
func (h *History) parsed(hash string) (*memfile.File, error) {
	f, err := h.Files(hash)
	if err != nil {
		return nil, err
	}
	return memfile.Parse(f.Memory), nil
}

// sameEntry tells whether two versions of an entry say the same: heading
// as written, date, content, tags and the other bullets (a change of bullet
// order alone is none). A type respelled is a change: the snapshot scans it
// for secrets as written.
func sameEntry(a, b *memfile.Entry) bool {
	return a.Type == b.Type && a.Title == b.Title && a.Heading() == b.Heading() && a.Date == b.Date && a.Content == b.Content &&
		slices.Equal(a.Tags, b.Tags) && slices.Equal(a.Extra, b.Extra)
}
