package store

import (
	"errors"
	"github.com/memsync/memsync/memfile"
	"os"
)

// Direction is where Move takes entries: into the archive or back out of it.
type Direction int

// The two directions of Move.
const (
	ToArchive Direction = iota // active file -> archive
	ToActive                   // archive -> active file (restore)
)

// errNothing stops a rewrite that has nothing to do, so nothing is written.
var errNothing = errors.New("nothing to move")

// Move moves the entries pick chooses (indexes into the source file) to the
// other file, under the one writers' lock, and returns them. The destination
// is written (and synced) before the source, so a crash in between leaves an
// entry in both files, never in neither; the next move removes such
// duplicates from its source (the destination wins). IDs stay the same.
func (s *Store) Move(dir Direction, pick func(f *memfile.File) ([]int, error)) ([]memfile.Entry, error) {
	var moved []memfile.Entry
	err := s.WithLock(func() error {
		var err error
		moved, err = s.moveLocked(dir, pick)
		return err
	})
	return moved, err
}

// Archive moves the entries refs name (see File.FindAll) to the archive.
func (s *Store) Archive(refs ...string) ([]memfile.Entry, error) {
	return s.Move(ToArchive, func(f *memfile.File) ([]int, error) { return f.FindAll(refs) })
}

// Restore moves the entries refs name, resolved in the archive, back to the
// active file.
func (s *Store) Restore(refs ...string) ([]memfile.Entry, error) {
	return s.Move(ToActive, func(f *memfile.File) ([]int, error) { return f.FindAll(refs) })
}

func (s *Store) moveLocked(dir Direction, pick func(f *memfile.File) ([]int, error)) ([]memfile.Entry, error) {
	if err := s.CheckWritable(s.Path(), s.ArchivePath()); err != nil {
		return nil, err // both files must be writable before anything moves
	}
	idx := s.openIndexLocked() // valid before the move: kept up to date, else rebuilt later
	var moved []memfile.Entry
	archived := map[string]bool{} // the IDs in the archive afterwards
	count := 0                    // entries in the active file afterwards
	src := s.Path()
	if dir == ToActive {
		src = s.ArchivePath()
	}
	err := s.rewritePathLocked(src, func(f *memfile.File) error {
		picked, err := pick(f)
		if err != nil {
			return err
		}
		if len(picked) == 0 {
			return errNothing
		}
		out := make([]memfile.Entry, 0, len(picked))
		isPicked := make(map[int]bool, len(picked))
		for _, i := range picked {
			out = append(out, f.Entries[i])
			isPicked[i] = true
		}
		var have map[string]*memfile.Entry
		if dir == ToArchive {
			have, moved, err = s.archiveLocked(out)
		} else {
			have, moved, err = s.activateLocked(out)
		}
		if err != nil {
			return err
		}
		// The picked entries leave the source, and so do copies the
		// destination already held (left by a move a crash cut short);
		// an entry that only shares an ID with one there stays.
		kept := f.Entries[:0]
		for i, e := range f.Entries {
			if d, ok := have[e.ID]; !isPicked[i] && (!ok || !sameStoredEntry(d, &e)) {
				kept = append(kept, e)
			}
		}
		f.Entries = kept
		if dir == ToArchive {
			for id := range have {
				archived[id] = true
			}
			count = len(kept)
		} else {
			for _, e := range kept {
				archived[e.ID] = true
			}
			count = len(have)
		}
		return nil
	})
	if errors.Is(err, errNothing) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if idx != nil && s.hasStamp() { // no stamp: an ID changed on the way, the next write rebuilds it
		idx.moved(s, archived, count)
	}
	if dir == ToActive {
		ids := make([]string, len(moved))
		for i, e := range moved {
			ids[i] = e.ID
		}
		s.RecordAccess(ids...) // a restored entry starts a new life
	}
	return moved, nil
}

// hasStamp tells whether the index's stamp is still there (a rewrite that
// renamed IDs removes it).
func (s *Store) hasStamp() bool {
	_, err := os.Stat(s.statePath(stampFile))
	return err == nil
}

// activateLocked appends entries to the active file with one rewrite; see
// land for what it returns.
func (s *Store) activateLocked(entries []memfile.Entry) (map[string]*memfile.Entry, []memfile.Entry, error) {
	var have map[string]*memfile.Entry
	var landed []memfile.Entry
	err := s.rewriteLocked(func(f *memfile.File) error {
		have, landed = s.land(s.Path(), f, entries)
		return nil
	})
	return have, landed, err
}
