package store

import (
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
)

// The arrival log (Store.ArrivedLog) keeps, one "ID<TAB>Name <email>" a
// line, the entries a merge brought from another clone and the git user
// whose snapshot brought them. An entry's Author bullet is text anyone can
// type; the snapshot's author is what history proves. The log is only a
// record: a missing, damaged or oversized one means nothing is known.

// RecordArrived appends to the arrival log the entries of by (ID →
// snapshot author). The caller holds the writers' lock.
func (s *Store) RecordArrived(by map[string]string) error {
	var b strings.Builder
	for id, who := range by {
		if id == "" || who == "" || strings.ContainsAny(id+who, "\t\r\n") {
			continue
		}
		b.WriteString(id + "\t" + who + "\n")
	}
	return s.appendIDs(s.ArrivedLog, b.String())
}

// Arrived is the arrival log: for each entry a merge brought from another
// clone, the author of the snapshot that first brought it. It never fails:
// a log that cannot be read whole reads as empty, a bad or torn line is skipped.
func (s *Store) Arrived() map[string]string {
	out := map[string]string{}
	if s.ArrivedLog == "" {
		return out
	}
	data, err := fsutil.ReadOwn(s.ArrivedLog, maxRemovalLog)
	if err != nil {
		return out
	}
	// a torn last line (a crash mid-append) is not one
	text := string(data[:strings.LastIndexByte(string(data), '\n')+1])
	for l := range strings.SplitSeq(text, "\n") {
		id, who, ok := strings.Cut(l, "\t")
		if !ok || id == "" || strings.TrimSpace(who) == "" {
			continue
		}
		if _, seen := out[id]; !seen {
			out[id] = who
		}
	}
	return out
}
