package memfile

import (
	"errors"
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
func (s *Store) Move(dir Direction, pick func(f *File) ([]int, error)) ([]Entry, error) {
	var moved []Entry
	err := s.WithLock(func() error {
		var err error
		moved, err = s.moveLocked(dir, pick)
		return err
	})
	return moved, err
}

// Archive moves the entries refs name (see File.FindAll) to the archive.
func (s *Store) Archive(refs ...string) ([]Entry, error) {
	return s.Move(ToArchive, func(f *File) ([]int, error) { return f.FindAll(refs) })
}

// Restore moves the entries refs name, resolved in the archive, back to the
// active file.
func (s *Store) Restore(refs ...string) ([]Entry, error) {
	return s.Move(ToActive, func(f *File) ([]int, error) { return f.FindAll(refs) })
}

func (s *Store) moveLocked(dir Direction, pick func(f *File) ([]int, error)) ([]Entry, error) {
	idx := s.openIndexLocked() // valid before the move: kept up to date, else rebuilt later
	var moved []Entry
	archived := map[string]bool{} // the IDs in the archive afterwards
	count := 0                    // entries in the active file afterwards
	src := s.Path()
	if dir == ToActive {
		src = s.ArchivePath()
	}
	err := s.rewritePathLocked(src, func(f *File) error {
		picked, err := pick(f)
		if err != nil {
			return err
		}
		if len(picked) == 0 {
			return errNothing
		}
		moved = make([]Entry, 0, len(picked))
		for _, i := range picked {
			moved = append(moved, f.Entries[i])
		}
		var have map[string]bool
		if dir == ToArchive {
			have, err = s.archiveLocked(moved)
		} else {
			have, err = s.activateLocked(moved)
		}
		if err != nil {
			return err
		}
		kept := f.Entries[:0]
		for _, e := range f.Entries {
			if !have[e.ID] {
				kept = append(kept, e)
			}
		}
		f.Entries = kept
		if dir == ToArchive {
			archived, count = have, len(kept)
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
	if idx != nil {
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

// activateLocked appends entries to the active file with one rewrite, each ID
// once, and returns the IDs the active file holds afterwards.
func (s *Store) activateLocked(entries []Entry) (map[string]bool, error) {
	have := map[string]bool{}
	err := s.rewriteLocked(func(f *File) error {
		for _, e := range f.Entries {
			have[e.ID] = true
		}
		for _, e := range entries {
			if !have[e.ID] {
				have[e.ID] = true
				f.Entries = append(f.Entries, e)
			}
		}
		return nil
	})
	return have, err
}
