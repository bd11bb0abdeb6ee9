package memfile

import "strings"

// SplitConflictSides splits a file that holds git conflict markers (someone
// tracked memories.md in a branch and merged) into its two sides: the
// common text with each conflict's "ours" part, and the common text with
// each "theirs" part. A diff3 base part ("|||||||" to "=======") belongs to
// neither side. A "=======" line outside a conflict or on the "theirs" side
// is text (a markdown underline); on the "ours" or base side it is the
// separator, as git writes it. ok
// is false when data holds no well-formed conflict (no markers, or markers
// out of order); then ours and theirs are nil.
func SplitConflictSides(data []byte) (ours, theirs []byte, ok bool) {
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

// ParseFile parses the bytes of the memory file at path, just read, as every
// rewrite does: a file with git conflict markers goes through the Unmark
// hook, when the store has one; unmarked reports that the hook merged the
// markers. The entries share data's memory, so data must not change
// afterwards.
func (s *Store) ParseFile(path string, data []byte) (f *File, unmarked bool) {
	f = parseOwned(data)
	if s.Unmark != nil && conflictMarked(f.Problems) {
		if u, ok := s.Unmark(path, data); ok {
			return u, true
		}
	}
	return f, false
}
