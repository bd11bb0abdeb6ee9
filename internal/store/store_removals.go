package store

import (
	"errors"
	"github.com/memsync/memsync/memfile"
	"os"
	"path/filepath"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
)

// The removal log (Store.RemovalLog) lists, one a line, the IDs memsync's
// own rewrites took out of a memory file (delete, gc, archive, import,
// resolve, doctor --fix, ...) since the memory was last snapshotted: what
// the snapshot guard of package history counts as removed on purpose. It is
// appended under the writers' lock and emptied (ClearRemovals) once a
// snapshot holds the memory.

// recordRemovals appends to the removal log the IDs of before that after
// lacks. The caller holds the writers' lock.
func (s *Store) recordRemovals(before, after []memfile.Entry) error {
	if s.RemovalLog == "" || len(before) == 0 {
		return nil
	}
	lines := removedIDs(before, after)
	if err := s.appendIDs(s.RemovalLog, lines); err != nil {
		return err
	}
	return s.appendIDs(s.GoneLog, lines)
}

// removedIDs is the IDs of before that after lacks, one a line.
func removedIDs(before, after []memfile.Entry) string {
	kept := make(map[string]bool, len(after))
	for i := range after {
		kept[after[i].ID] = true
	}
	var b strings.Builder
	for i := range before {
		if id := before[i].ID; !kept[id] && !strings.ContainsAny(id, "\r\n") {
			b.WriteString(id + "\n")
		}
	}
	return b.String()
}

// appendIDs appends lines of IDs to the log at path ("": none).
func (s *Store) appendIDs(path, lines string) error {
	if path == "" || lines == "" {
		return nil
	}
	if err := fsutil.MkdirAll(filepath.Dir(path), s.dirMode()); err != nil {
		return err
	}
	f, err := fsutil.OpenAppend(path, s.fileMode())
	if err != nil {
		return err
	}
	defer f.Close()
	return fsutil.Append(f, []byte(lines))
}

// RecordGone adds to the gone log the IDs of before that after lacks (a
// merge's removals, which the removal log does not see). The caller holds
// the writers' lock.
func (s *Store) RecordGone(before, after []memfile.Entry) error {
	return s.appendIDs(s.GoneLog, removedIDs(before, after))
}

// Gone is the set of IDs memsync took out of this memory (deleted, moved
// away, merged away, purged: the removal log, the gone log and the purge's
// tombstones). A fold of a copy or an import never brings them back: an
// old branch's tracked file or an old export still holds them.
func (s *Store) Gone() (map[string]bool, error) {
	out := map[string]bool{}
	for _, p := range []string{s.RemovalLog, s.GoneLog, s.PurgeLog} {
		if err := readIDs(p, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Removals is the set of IDs in the removal log: what memsync removed
// itself since the last snapshot. The caller holds the writers' lock.
func (s *Store) Removals() (map[string]bool, error) {
	out := map[string]bool{}
	return out, readIDs(s.RemovalLog, out)
}

// readIDs adds to ids the lines of the log at path, one ID a line ("" or
// a log not there yet: none).
func readIDs(path string, ids map[string]bool) error {
	if path == "" {
		return nil
	}
	data, err := fsutil.ReadOwn(path, maxRemovalLog)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for l := range strings.SplitSeq(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			ids[l] = true
		}
	}
	return nil
}

// maxRemovalLog bounds the read of the removal log (IDs, one a line).
const maxRemovalLog = 64 << 20

// ClearRemovals empties the removal log: a snapshot now holds the memory.
// The caller holds the writers' lock.
func (s *Store) ClearRemovals() error {
	if s.RemovalLog == "" {
		return nil
	}
	if err := os.Remove(s.RemovalLog); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
