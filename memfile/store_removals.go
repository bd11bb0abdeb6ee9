package memfile

import (
	"bytes"
	"errors"
	"os"
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
func (s *Store) recordRemovals(before, after []Entry) error {
	if s.RemovalLog == "" || len(before) == 0 {
		return nil
	}
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
	if b.Len() == 0 {
		return nil
	}
	if err := fsutil.MkdirAll(s.StateDir, s.dirMode()); err != nil {
		return err
	}
	f, err := fsutil.OpenAppend(s.RemovalLog, s.fileMode())
	if err != nil {
		return err
	}
	defer f.Close()
	return fsutil.Append(f, []byte(b.String()))
}

// Removals is the set of IDs in the removal log: what memsync removed
// itself since the last snapshot. The caller holds the writers' lock.
func (s *Store) Removals() (map[string]bool, error) {
	out := map[string]bool{}
	if s.RemovalLog == "" {
		return out, nil
	}
	data, err := fsutil.ReadOwn(s.RemovalLog, maxRemovalLog)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(l) > 0 {
			out[string(l)] = true
		}
	}
	return out, err
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
