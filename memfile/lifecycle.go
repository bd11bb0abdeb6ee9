package memfile

import (
	"sort"
	"time"
)

// Limits of automatic cleanup (seed 001): past them, entries move to the
// archive, never away.
type Limits struct {
	MaxEntries int           // most active entries; 0 or less: no limit
	TTL        time.Duration // entries not accessed for this long are archived; negative: no TTL
}

// DefaultLimits are seed 001's: 1000 entries, 90 days.
var DefaultLimits = Limits{MaxEntries: 1000, TTL: 90 * 24 * time.Hour}

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

// Add appends an entry unless its content (whitespace and case folded, see
// ContentHash) is already stored; then it returns the stored entry and where
// it is. Its cost stays flat in the file size: the check reads one bucket of
// the content index in StateDir, rebuilt only when the memory files changed
// behind memsync's back. Without a StateDir it is Append. With Limits set, a
// write past MaxEntries (or the first write of a day) runs GC, down to 90% of
// MaxEntries so that the next writes do not run it again.
func (s *Store) Add(e Entry) (Entry, Dup, error) {
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
			if id, archived, ok := x.lookup(s, ContentHash(e.Content)); ok {
				dup = DupActive
				path := s.Path()
				if archived {
					dup, path = DupArchived, s.ArchivePath()
				}
				e = Entry{ID: id}
				if f, err := s.load(path, false); err == nil {
					if i, err := f.Find(id); err == nil {
						e = f.Entries[i]
					}
				}
				return nil
			}
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
		if s.Limits != nil && x != nil && (s.Limits.MaxEntries > 0 && x.Count > s.Limits.MaxEntries || s.now().Sub(time.Unix(x.LastGC, 0)) > gcEvery) {
			lim := *s.Limits
			lim.MaxEntries -= lim.MaxEntries / 10 // room for the next writes, as the size cap leaves
			if moved, err := s.gcLocked(lim); err != nil {
				s.warn("automatic cleanup failed: %v", err)
			} else if len(moved) > 0 {
				s.warn("moved %d entries past the limits (max %d entries, TTL %s) to %s", len(moved), s.Limits.MaxEntries, s.Limits.TTL, s.ArchivePath())
			}
		}
		return nil
	})
	return e, dup, err
}

// GC moves the entries past the limits to the archive and returns them:
// first those not accessed for the TTL, then, while more than MaxEntries
// remain, the least recently accessed. An entry memsync has never seen
// accessed starts its clock at its first gc. A dry run changes nothing.
func (s *Store) GC(lim Limits, dryRun bool) ([]Entry, error) {
	if dryRun {
		f, err := s.Load()
		if err != nil {
			return nil, err
		}
		var out []Entry
		for _, i := range s.pickExpired(f, lim, s.LastAccess(), nil) {
			out = append(out, f.Entries[i])
		}
		return out, nil
	}
	var moved []Entry
	err := s.WithLock(func() error {
		var err error
		moved, err = s.gcLocked(lim)
		return err
	})
	return moved, err
}

func (s *Store) gcLocked(lim Limits) ([]Entry, error) {
	last := s.LastAccess()
	var keep []Entry
	moved, err := s.moveLocked(ToArchive, func(f *File) ([]int, error) {
		return s.pickExpired(f, lim, last, &keep), nil
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

// pickExpired chooses what GC moves; keep receives the other entries, and
// last the first-seen times of entries it had no access for.
func (s *Store) pickExpired(f *File, lim Limits, last map[string]time.Time, keep *[]Entry) []int {
	now := s.now()
	type cand struct {
		i int
		t time.Time
	}
	var picked []int
	var kept []cand
	for i := range f.Entries {
		t, ok := last[f.Entries[i].ID]
		if !ok {
			t = now
			last[f.Entries[i].ID] = now
		}
		if lim.TTL >= 0 && now.Sub(t) >= lim.TTL {
			picked = append(picked, i)
			continue
		}
		kept = append(kept, cand{i, t})
	}
	if lim.MaxEntries > 0 && len(kept) > lim.MaxEntries {
		sort.SliceStable(kept, func(a, b int) bool { return kept[a].t.Before(kept[b].t) })
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
	}
	return picked
}
