package store

import (
	"errors"
	"fmt"
	"github.com/memsync/memsync/memfile"
	"sort"
	"strings"
	"time"
)

// Limits of automatic cleanup: past them, entries move to the
// archive, never away.
type Limits struct {
	MaxEntries int           // most active entries; 0 or less: no limit
	TTL        time.Duration // entries not accessed for this long are archived; negative: no TTL
}

// DefaultLimits returns the default limits: 1000 entries, 90 days.
func DefaultLimits() Limits { return Limits{MaxEntries: 1000, TTL: 90 * 24 * time.Hour} }

// gcEvery is how often a write runs the TTL rule when no limit forces it.
const gcEvery = 24 * time.Hour

// Dup tells what Add found when the content was already stored.
type Dup int

// What Add found.
const (
	NotDup      Dup = iota // the entry was added
	DupActive              // identical content is an active entry: nothing added
	DupArchived            // identical content is archived: nothing added (restore it)
)

// Add appends an entry unless a stored entry says the same fact (Dups: the
// same content, whitespace and case folded, in the entry's session view);
// then it returns the stored entry and where it is. Its cost stays
// flat in the file size: the check reads one bucket of the content index in
// StateDir, rebuilt only when the memory files changed behind memsync's
// back. Without a StateDir it is Append. With Limits set, a write past
// MaxEntries (or the first write of a day) runs GC, down to 90% of
// MaxEntries so that the next writes do not run it again; that cleanup never
// moves the entry Add just wrote. An entry with a key another entry has is
// refused (a KeyTakenError), checked under the lock.
func (s *Store) Add(e memfile.Entry) (memfile.Entry, Dup, error) {
	if err := s.Validate(&e); err != nil {
		return e, NotDup, err
	}
	dup := NotDup
	err := s.WithLock(func() error {
		x, err := s.indexLocked()
		if err != nil {
			s.warn("cannot use the content index in %s (%v); adding without the duplicate check", s.StateDir, err)
			x = nil
		}
		if x != nil {
			found, d, err := s.findDupLocked(x, &e)
			if errors.Is(err, errIndexDamaged) {
				if x, err = s.rebuildIndexLocked(); err == nil {
					found, d, err = s.findDupLocked(x, &e)
				} else {
					s.warn("cannot rebuild the content index in %s (%v); adding without the duplicate check", s.StateDir, err)
					x, err = nil, nil
				}
			}
			if err != nil {
				return err
			}
			if d != NotDup {
				e, dup = found, d
				return nil
			}
		}
		if err := s.keyFreeLocked(&e); err != nil {
			return err
		}
		var rewrote bool
		if e, rewrote, err = s.appendLocked(e); err != nil {
			return err
		}
		if x != nil {
			if rewrote || x.added(s, &e) != nil {
				s.invalidateIndex()
				x = nil
			}
		}
		s.RecordAccess(e.ID)
		if s.Limits == nil || s.StateDir == "" {
			return nil
		}
		if x == nil && rewrote {
			// A rewrite (the size cap, ralph's dialect) counts the
			// entries again, so that the max count holds after it too.
			if x, err = s.indexLocked(); err != nil {
				x = nil
			}
		}
		if x != nil && (s.Limits.MaxEntries > 0 && x.Count > s.Limits.MaxEntries || s.now().Sub(time.Unix(x.LastGC, 0)) > gcEvery) {
			lim := *s.Limits
			lim.MaxEntries -= lim.MaxEntries / 10 // room for the next writes, as the size cap leaves
			if moved, err := s.gcLocked(lim, e.ID); err != nil {
				s.warn("automatic cleanup failed: %v", err)
			} else if len(moved) > 0 {
				s.warn("moved %d entries past the limits (max %d entries, TTL %s) to %s", len(moved), s.Limits.MaxEntries, s.Limits.TTL, s.ArchivePath())
			}
		}
		return nil
	})
	return e, dup, err
}

// findDupLocked finds a stored entry with e's content that e's session sees
// (an active one first). The index only names candidates: each is checked in
// the files (the active one, then the archive, whatever the index's archived
// list says), so a stale index never makes a wrong match.
func (s *Store) findDupLocked(x *index, e *memfile.Entry) (memfile.Entry, Dup, error) {
	h := memfile.ContentHash(e.Content)
	hits, err := x.lookup(s, h)
	if err != nil || len(hits) == 0 {
		return memfile.Entry{}, NotDup, err
	}
	want := map[string]bool{}
	for _, c := range hits {
		want[c.id] = true
	}
	for _, archived := range []bool{false, true} {
		path, d := s.Path(), DupActive
		if archived {
			path, d = s.ArchivePath(), DupArchived
		}
		f, err := s.load(path, false)
		if err != nil {
			return memfile.Entry{}, NotDup, err
		}
		var dups memfile.Dups
		for i := range f.Entries {
			if want[f.Entries[i].ID] {
				dups.Add(&f.Entries[i])
			}
		}
		if c := dups.Find(e); c != nil {
			return *c, d, nil
		}
	}
	return memfile.Entry{}, NotDup, nil
}

// KeyTakenError refuses an entry whose key (KeyField) another entry, active
// or archived, has already: a key names one entry (Find). It is an ErrInvalid.
type KeyTakenError struct {
	Key      string
	ID       string // the entry that has the key
	Archived bool   // that entry is in the archive
}

func (e *KeyTakenError) Error() string {
	where := ""
	if e.Archived {
		where = " in the archive"
	}
	return fmt.Sprintf("%s: the key %q is taken by the entry %s%s", ErrInvalid, e.Key, e.ID, where)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *KeyTakenError) Unwrap() error { return ErrInvalid }

// keyFreeLocked refuses e when another entry has its key (a KeyTakenError).
// Only an entry with a key pays for the read of the files.
func (s *Store) keyFreeLocked(e *memfile.Entry) error {
	key := strings.TrimSpace(e.Field(memfile.KeyField))
	if key == "" {
		return nil
	}
	for _, archived := range []bool{false, true} {
		path := s.Path()
		if archived {
			path = s.ArchivePath()
		}
		f, err := s.load(path, false)
		if err != nil {
			return err
		}
		for i := range f.Entries {
			if c := &f.Entries[i]; strings.TrimSpace(c.Field(memfile.KeyField)) == key {
				return &KeyTakenError{Key: key, ID: c.ID, Archived: archived}
			}
		}
	}
	return nil
}

// GC moves the entries past the limits to the archive and returns them:
// first those not accessed for the TTL, then, while more than MaxEntries
// remain, the least recently accessed. An entry memsync has never seen
// accessed starts its clock at its first gc. A dry run changes nothing.
func (s *Store) GC(lim Limits, dryRun bool) ([]memfile.Entry, error) {
	if dryRun {
		f, err := s.Load()
		if err != nil {
			return nil, err
		}
		var out []memfile.Entry
		for _, i := range s.pickExpired(f, lim, s.LastAccess(), "", nil) {
			out = append(out, f.Entries[i])
		}
		return out, nil
	}
	var moved []memfile.Entry
	err := s.WithLock(func() error {
		var err error
		moved, err = s.gcLocked(lim, "")
		return err
	})
	return moved, err
}

// gcLocked is GC under the writers' lock; the entry with the ID spare (the
// one an add just wrote) is never moved.
func (s *Store) gcLocked(lim Limits, spare string) ([]memfile.Entry, error) {
	last := s.LastAccess()
	var keep []memfile.Entry
	moved, err := s.moveLocked(ToArchive, func(f *memfile.File) ([]int, error) {
		return s.pickExpired(f, lim, last, spare, &keep), nil
	})
	if err != nil {
		return nil, err
	}
	s.compactAccess(last, keep)
	if x := s.openIndexLocked(); x != nil {
		x.LastGC = s.now().Unix()
		_ = x.save(s)
	}
	return moved, nil
}

// pickExpired chooses what GC moves, never the entry with the ID spare;
// keep receives the other entries, and last the first-seen times of entries
// it had no access for. Times are whole seconds, as the access log keeps
// them. An entry never accessed ages from when memsync first sees it (now,
// recorded), so a memory another tool wrote long ago is not archived by the
// first gc that meets it; among entries last used in the same second, the
// one with the older Date goes first.
func (s *Store) pickExpired(f *memfile.File, lim Limits, last map[string]time.Time, spare string, keep *[]memfile.Entry) []int {
	now := time.Unix(s.now().Unix(), 0)
	type cand struct {
		i    int
		t    time.Time
		date time.Time // tie-break: the entry's Date, else t
	}
	var picked []int
	var kept []cand
	for i := range f.Entries {
		e := &f.Entries[i]
		t, ok := last[e.ID]
		if !ok {
			t = now
			last[e.ID] = t
		}
		if e.ID == spare {
			continue // not a candidate, and not counted against the others
		}
		if lim.TTL >= 0 && now.Sub(t) >= lim.TTL {
			picked = append(picked, i)
			continue
		}
		kept = append(kept, cand{i, t, dated(e, t)})
	}
	if spare != "" && lim.MaxEntries > 0 {
		lim.MaxEntries-- // the spared entry takes one place
	}
	if lim.MaxEntries > 0 && len(kept) > lim.MaxEntries {
		sort.SliceStable(kept, func(a, b int) bool {
			if !kept[a].t.Equal(kept[b].t) {
				return kept[a].t.Before(kept[b].t)
			}
			return kept[a].date.Before(kept[b].date)
		})
		n := len(kept) - lim.MaxEntries
		for _, c := range kept[:n] {
			picked = append(picked, c.i)
		}
		kept = kept[n:]
		sort.Ints(picked)
	}
	if keep != nil {
		for _, c := range kept {
			*keep = append(*keep, f.Entries[c.i])
		}
		for i := range f.Entries {
			if spare != "" && f.Entries[i].ID == spare {
				*keep = append(*keep, f.Entries[i])
			}
		}
	}
	return picked
}

// dated is an entry's Date (orch and memsync write YYYY-MM-DD, local
// midnight) when it has one before t, else t.
func dated(e *memfile.Entry, t time.Time) time.Time {
	for _, layout := range []string{"2006-01-02", time.RFC3339} {
		if d, err := time.ParseInLocation(layout, strings.TrimSpace(e.Date), time.Local); err == nil {
			if d.Before(t) {
				return d
			}
			break
		}
	}
	return t
}
