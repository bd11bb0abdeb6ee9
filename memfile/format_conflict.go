package memfile

import (
	"slices"
	"strings"
)

// splitConflictSides splits a file that holds git conflict markers (someone
// tracked memories.md in a branch and merged) into its two sides: the
// common text with each conflict's "ours" part, and the common text with
// each "theirs" part. A diff3 base part ("|||||||" to "=======") belongs to
// neither side. A "=======" line outside a conflict or on the "theirs" side
// is text (a markdown underline); on the "ours" or base side it is the
// separator, as git writes it. ok
// is false when data holds no well-formed conflict (no markers, or markers
// out of order); then ours and theirs are nil.
func splitConflictSides(data []byte) (ours, theirs []byte, ok bool) {
	s := string(data)
	if !strings.Contains(s, "<<<<<<<") {
		return nil, nil, false
	}
	const (
		common = iota
		inOurs
		inBase
		inTheirs
	)
	var o, t strings.Builder
	o.Grow(len(s))
	t.Grow(len(s))
	state, conflicts := common, 0
	for l := range strings.Lines(s) {
		line := strings.TrimRight(strings.TrimSuffix(l, "\n"), "\r")
		if isConflictMarker(line) && (line[0] != '=' || state == inOurs || state == inBase) {
			next := -1
			switch {
			case line[0] == '<' && state == common:
				next = inOurs
			case line[0] == '|' && state == inOurs:
				next = inBase
			case line[0] == '=' && (state == inOurs || state == inBase):
				next = inTheirs
			case line[0] == '>' && state == inTheirs:
				next = common
				conflicts++
			}
			if next < 0 {
				return nil, nil, false
			}
			state = next
			continue
		}
		switch state {
		case common:
			o.WriteString(l)
			t.WriteString(l)
		case inOurs:
			o.WriteString(l)
		case inTheirs:
			t.WriteString(l)
		}
	}
	if state != common || conflicts == 0 {
		return nil, nil, false
	}
	return []byte(o.String()), []byte(t.String()), true
}

// HasConflictMarkers tells whether data holds a git conflict marker line.
func HasConflictMarkers(data []byte) bool { return conflictMarked(scanDamage(view(data))) }

// conflictMarked tells whether the problems include a git conflict marker.
func conflictMarked(ps []Problem) bool {
	for _, p := range ps {
		if strings.HasPrefix(p.Msg, "git conflict marker") {
			return true
		}
	}
	return false
}

// Unmark merges a memory file that holds git conflict markers by entry:
// of its two sides (the common text with each conflict's "ours" part, and
// with its "theirs" part; a diff3 base part belongs to neither), every entry
// is kept, in ours' order and then theirs'; an entry both sides hold with the
// same text is one entry; for an ID whose text differs, the file keeps ours
// and ours[i], theirs[i] are the two versions (for a conflict log). The file
// keeps ours' preamble (theirs' when ours has none and the dialects agree)
// and ours' dialect. ok is false when data holds no well-formed conflict.
func Unmark(data []byte) (f *File, ours, theirs []Entry, ok bool) {
	o, t, ok := splitConflictSides(data)
	if !ok {
		return nil, nil, nil, false
	}
	f, other := Parse(o), Parse(t)
	last := func(list []Entry) map[string]*Entry { // an ID twice in a side: its last entry
		m := make(map[string]*Entry, len(list))
		for i := range list {
			m[list[i].ID] = &list[i]
		}
		return m
	}
	mine, yours := last(f.Entries), last(other.Entries)
	merged := make([]Entry, 0, len(mine)+len(yours))
	done := make(map[string]bool, len(mine)+len(yours))
	for _, e := range f.Entries {
		if done[e.ID] {
			continue
		}
		done[e.ID] = true
		m := mine[e.ID]
		if y := yours[e.ID]; y != nil && !sameText(m, y) {
			ours, theirs = append(ours, *m), append(theirs, *y)
		}
		merged = append(merged, *m)
	}
	for _, e := range other.Entries {
		if !done[e.ID] {
			done[e.ID] = true
			merged = append(merged, *yours[e.ID])
		}
	}
	f.Entries, f.Problems = merged, nil
	if strings.TrimSpace(f.Preamble) == "" && f.Dialect == other.Dialect {
		f.Preamble = other.Preamble
	}
	return f, ours, theirs, true
}

// sameText tells whether two versions of an entry say the same thing (all
// but the ID and the place in the file).
func sameText(a, b *Entry) bool {
	return a.Type == b.Type && a.Title == b.Title && a.Date == b.Date && a.Content == b.Content &&
		slices.Equal(a.Tags, b.Tags) && slices.Equal(a.Extra, b.Extra)
}
