package merge

import (
	"strings"

	"github.com/memsync/memsync/memfile"
)

// Parse reads a State from the bytes of an active file and an archive (nil
// for a missing file).
func Parse(active, archive []byte) State {
	return State{Active: memfile.Parse(active).Entries, Archive: memfile.Parse(archive).Entries}
}

// Unmark is memfile.Unmark with the entries the two sides hold differently
// as conflicts (no base): ours is kept in the file, theirs is for the
// conflict log.
func Unmark(data []byte) (f *memfile.File, conflicts []Conflict, ok bool) {
	f, ours, theirs, ok := memfile.Unmark(data)
	return f, markerConflicts(ours, theirs), ok
}

// markerConflicts pairs the two versions memfile.Unmark returns.
func markerConflicts(ours, theirs []memfile.Entry) []Conflict {
	var cs []Conflict
	for i := range theirs {
		cs = append(cs, Conflict{ID: ours[i].ID, Ours: ours[i], Theirs: theirs[i]})
	}
	return cs
}

// Marker lines that RenderMarked writes around the two versions of an entry.
const (
	MarkerOurs   = "<<<<<<< ours"
	MarkerSep    = "======="
	MarkerTheirs = ">>>>>>> theirs"
)

// RenderMarked renders f, whose entries are a merge result keeping ours'
// version of each conflict, with both versions of every conflicting entry
// inside git conflict markers: what a git merge driver leaves for a person,
// and a form Unmark merges back (it keeps ours and logs theirs). A file in
// ralph's dialect, whose entries live in sections, gets the markers around
// two whole renderings instead.
func RenderMarked(f *memfile.File, conflicts []Conflict) []byte {
	if len(conflicts) == 0 {
		return f.Render()
	}
	theirs := make(map[string]*memfile.Entry, len(conflicts))
	for i := range conflicts {
		theirs[conflicts[i].ID] = &conflicts[i].Theirs
	}
	if f.Dialect == memfile.Ralph {
		other := *f
		other.Entries = make([]memfile.Entry, len(f.Entries))
		for i, e := range f.Entries {
			if t, ok := theirs[e.ID]; ok {
				e = *t
			}
			other.Entries[i] = e
		}
		return []byte(MarkerOurs + "\n" + string(f.Render()) + MarkerSep + "\n" + string(other.Render()) + MarkerTheirs + "\n")
	}
	var b strings.Builder
	b.WriteString(f.Preamble)
	for i := range f.Entries {
		if i > 0 {
			b.WriteString("\n")
		}
		e := &f.Entries[i]
		t, ok := theirs[e.ID]
		if !ok {
			b.WriteString(memfile.RenderEntry(e, memfile.Orch))
			continue
		}
		b.WriteString(MarkerOurs + "\n" + memfile.RenderEntry(e, memfile.Orch) + MarkerSep + "\n" +
			memfile.RenderEntry(t, memfile.Orch) + MarkerTheirs + "\n")
	}
	return []byte(b.String())
}
