package history

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/memfile"
)

// A snapshot records what changed in its active file since its first
// parent as trailers of its message, so that Log reads commit objects only:
//
//	Memsync-Entries: 42
//	Memsync-Changes: +3 -1 ~2
//	Memsync-Added: k3x9q2m7p1aa Retry the upstream with backoff
//	Memsync-Removed: …
//	Memsync-Changed: …
//	Memsync-More: 4
//
// One titled line per changed entry up to maxTitled of them, then
// Memsync-More with how many were left out. IDs and titles come from other
// clones' memories: they are kept on one line, without control characters,
// and bounded (maxTitle, maxID). Snapshots without these trailers (taken by
// an older memsync) are diffed by Log as before.
const (
	trailerEntries = "Memsync-Entries"
	trailerChanges = "Memsync-Changes"
	trailerAdded   = "Memsync-Added"
	trailerRemoved = "Memsync-Removed"
	trailerChanged = "Memsync-Changed"
	trailerMore    = "Memsync-More"
	// trailerRemoval: deliberate marks a snapshot whose removals memsync
	// made itself or a person accepted (--accept-removal). It is a note
	// only: anyone can write it, so no merge trusts it.
	trailerRemoval = "Memsync-Removal"

	maxTitled = 20  // titled change lines per snapshot
	maxTitle  = 100 // runes of a title
	maxID     = 64  // runes of an ID
)

// record is what a snapshot records about its active file.
type record struct {
	entries    int      // entries in the snapshot's active file
	changes    []Change // since its first parent
	deliberate bool     // its removals were memsync's own or accepted
}

// recordOf compares the active file of the first parent (before, nil:
// none) with memory, the snapshot's. ok is false when the parent's file
// could not be read: the snapshot then records nothing and Log diffs it.
func recordOf(before, memory []byte, ok bool) (r record, _ bool) {
	if !ok {
		return r, false
	}
	after := memfile.Parse(memory)
	return record{entries: len(after.Entries), changes: Compare(memfile.Parse(before), after)}, true
}

// recordBetween is recordOf of two files at hand, before parsed as f (a
// merge's live file and its result): where both are in orch's dialect
// alone, only the part that differs is parsed, as in recordAround.
func recordBetween(f *memfile.File, before, after []byte) record {
	if before == nil || after == nil || memfile.HasConflictMarkers(before) || !memfile.PlainOrch(before) || !memfile.PlainOrch(after) {
		a := memfile.Parse(after)
		return record{entries: len(a.Entries), changes: Compare(f, a)}
	}
	start, endBefore, endAfter := parentFile{live: after, mid: before}.changedRegion()
	was, is := memfile.Parse(before[start:endBefore]), memfile.Parse(after[start:endAfter])
	return record{entries: len(f.Entries) - len(was.Entries) + len(is.Entries), changes: Compare(was, is)}
}

// recordSince is recordOf for a snapshot whose first parent recorded its
// entry count (parentEntries, from parentMsg's trailers): when both files
// are in orch's dialect alone, only the part that differs is parsed (from
// the "## " line before the first differing byte to the one after the
// last), so a snapshot of one added entry in a 10 MB memory parses that
// entry, not 20 MB. Otherwise it is recordOf.
func recordSince(parentMsg string, before, memory []byte, ok bool) (record, bool) {
	plain := ok && before != nil && memfile.PlainOrch(before) && memfile.PlainOrch(memory)
	return recordAround(parentMsg, parentFile{live: memory, mid: before, absent: before == nil}, ok, plain)
}

// recordAround is recordSince for the parent's file p, when plain tells
// that both files are in orch's dialect alone.
func recordAround(parentMsg string, p parentFile, ok, plain bool) (record, bool) {
	parentEntries, _, recorded := recorded(parentMsg)
	if !ok || !recorded || p.absent || !plain {
		return recordOf(p.whole(), p.live, ok)
	}
	start, endBefore, endAfter := p.changedRegion()
	was, is := memfile.Parse(p.slice(start, endBefore)), memfile.Parse(p.live[start:endAfter])
	return record{entries: parentEntries - len(was.Entries) + len(is.Entries), changes: Compare(was, is)}, true
}

// parentFile is the parent snapshot's file next to the live one (live):
// the first lo and the last tail bytes of both are the same, and mid is
// what the parent holds between them. Only mid is read from the snapshot.
type parentFile struct {
	live     []byte
	lo, tail int
	mid      []byte
	absent   bool // the parent has no such file
}

// size is the length of the parent's file.
func (p parentFile) size() int { return p.lo + len(p.mid) + p.tail }

// slice is the parent's file from byte i to byte j.
func (p parentFile) slice(i, j int) []byte {
	out := make([]byte, 0, j-i)
	for _, part := range []struct {
		at   int
		data []byte
	}{{0, p.live[:p.lo]}, {p.lo, p.mid}, {p.lo + len(p.mid), p.live[len(p.live)-p.tail:]}} {
		a, b := max(i, part.at), min(j, part.at+len(part.data))
		if a < b {
			out = append(out, part.data[a-part.at:b-part.at]...)
		}
	}
	return out
}

// changedLines is the part of the live file that differs from the
// parent's, widened to whole lines: live[ls:le] starts at a line start and
// ends after a line end (or at the end), and every line of live outside it
// is a line of the parent's file.
func (p parentFile) changedLines() (ls, le int) {
	hi := len(p.live) - p.tail
	ls, le = bytes.LastIndexByte(p.live[:p.lo], '\n')+1, len(p.live)
	if i := bytes.IndexByte(p.live[hi:], '\n'); i >= 0 {
		le = hi + i + 1
	}
	return ls, le
}

// whole is the parent's file (nil when absent).
func (p parentFile) whole() []byte {
	if p.absent {
		return nil
	}
	return p.slice(0, p.size())
}

// changedRegion finds the part of the parent's file and the live one that
// differs, widened to entry headings: the parent's bytes start to
// endBefore and live[start:endAfter] start at a "## " line (or the start)
// and end before one (or at the end), and outside them the files are the
// same bytes.
func (p parentFile) changedRegion() (start, endBefore, endAfter int) {
	after := p.live
	prefix, suffix := commonEnds(p.mid, after[p.lo:len(after)-p.tail])
	prefix, suffix = p.lo+prefix, p.tail+suffix
	start = headingAtOrBefore(after, prefix)
	endAfter = headingAtOrAfter(after, len(after)-suffix)
	return start, endAfter - (len(after) - p.size()), endAfter
}

// commonEnds is the length of the longest common prefix of a and b, and of
// the longest common suffix of what is left of them.
func commonEnds(before, after []byte) (prefix, suffix int) {
	n := min(len(before), len(after))
	for prefix < n && before[prefix] == after[prefix] {
		if k := min(prefix+4096, n); bytes.Equal(before[prefix:k], after[prefix:k]) {
			prefix = k
			continue
		}
		prefix++
	}
	for suffix < n-prefix && before[len(before)-1-suffix] == after[len(after)-1-suffix] {
		if k := min(suffix+4096, n-prefix); bytes.Equal(before[len(before)-k:len(before)-suffix], after[len(after)-k:len(after)-suffix]) {
			suffix = k
			continue
		}
		suffix++
	}
	return prefix, suffix
}

// headingAtOrBefore is the start of the last "## " line of s whose line
// end comes before i (a heading at i itself may be passed over: an earlier
// start is as good), or 0.
func headingAtOrBefore(s []byte, i int) int {
	return bytes.LastIndex(s[:i], []byte("\n## ")) + 1 // 0 when there is none
}

// headingAtOrAfter is the start of the first "## " line of s whose line
// break before it is at or after i (so both texts, the same from i on, have
// a heading there), or len(s).
func headingAtOrAfter(s []byte, i int) int {
	j := bytes.Index(s[i:], []byte("\n## "))
	if j < 0 {
		return len(s)
	}
	return i + j + 1
}

// trailers are r's lines of a snapshot's message.
func (r record) trailers() string {
	var b strings.Builder
	c := Count(r.changes)
	fmt.Fprintf(&b, "%s: %d\n%s: +%d -%d ~%d\n", trailerEntries, r.entries, trailerChanges, c.Added, c.Removed, c.Changed)
	if r.deliberate && c.Removed > 0 {
		fmt.Fprintf(&b, "%s: deliberate\n", trailerRemoval)
	}
	for i, ch := range r.changes {
		if i == maxTitled {
			fmt.Fprintf(&b, "%s: %d\n", trailerMore, len(r.changes)-maxTitled)
			break
		}
		key, e := trailerAdded, ch.After
		switch ch.Kind {
		case Removed:
			key, e = trailerRemoved, ch.Before
		case Changed:
			key = trailerChanged
		}
		t := titled(ch.Kind, ch.ID, e)
		line := t.ID
		if t.Title != "" {
			line += " " + t.Title
		}
		b.WriteString(key + ": " + line + "\n")
	}
	return b.String()
}

// oneLine is s on one line for a trailer: invalid UTF-8 and control
// characters (line and paragraph separators too) become spaces, runs of
// white space one space, and at most max runes are kept ("…" marks a cut).
func oneLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, " "))
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max-1]) + "…"
	}
	return s
}

// recorded reads the entry count and the change counts a snapshot's
// message records; ok is false for a snapshot that records none (or a
// damaged record).
func recorded(msg string) (entries int, c Counts, ok bool) {
	_, body, _ := strings.Cut(msg, "\n") // the subject is no trailer
	var haveEntries, haveChanges bool
	for _, l := range strings.Split(body, "\n") {
		k, v, found := strings.Cut(l, ": ")
		if !found {
			continue
		}
		switch k {
		case trailerEntries:
			n, err := strconv.Atoi(v)
			entries, haveEntries = n, err == nil && n >= 0
		case trailerChanges:
			haveChanges = parseCounts(v, &c)
		}
	}
	return entries, c, haveEntries && haveChanges
}

// recordedChanges reads the titled lines of a snapshot's record: the
// entries it names as added, removed and changed (ID and title as the
// trailers hold them, in Compare's order). complete is true when they are
// all the record counts: no Memsync-More, and as many lines of each kind as
// Memsync-Changes says.
func recordedChanges(msg string) (changes []EntryChange, complete bool) {
	_, want, ok := recorded(msg)
	if !ok {
		return nil, false
	}
	_, body, _ := strings.Cut(msg, "\n")
	var got Counts
	more := false
	for _, l := range strings.Split(body, "\n") {
		k, v, found := strings.Cut(l, ": ")
		if !found {
			continue
		}
		var kind string
		switch k {
		case trailerAdded:
			kind, got.Added = Added, got.Added+1
		case trailerRemoved:
			kind, got.Removed = Removed, got.Removed+1
		case trailerChanged:
			kind, got.Changed = Changed, got.Changed+1
		case trailerMore:
			more = true
			continue
		default:
			continue
		}
		id, title, _ := strings.Cut(v, " ")
		changes = append(changes, EntryChange{Kind: kind, ID: id, Title: title})
	}
	return changes, !more && got == want
}

// titled is the change of entry e as a record names it: ID and title on
// one line and bounded, as the trailers hold them.
func titled(kind, id string, e *memfile.Entry) EntryChange {
	return EntryChange{Kind: kind, ID: oneLine(id, maxID), Title: oneLine(e.Title, maxTitle)}
}

// trailerSafe tells whether id reads back from a record as itself.
func trailerSafe(id string) bool {
	return id != "" && oneLine(id, maxID) == id && !strings.Contains(id, " ")
}

// parseCounts reads "+A -R ~C" into c.
func parseCounts(v string, c *Counts) bool {
	f := strings.Fields(v)
	if len(f) != 3 {
		return false
	}
	for i, dst := range []*int{&c.Added, &c.Removed, &c.Changed} {
		n, err := strconv.Atoi(strings.TrimPrefix(f[i], "+-~"[i:i+1]))
		if err != nil || n < 0 || f[i][0] != "+-~"[i] {
			return false
		}
		*dst = n
	}
	return true
}

// layoutAt reads the layout of snapshot commit (again, while a repack
// moves its objects: relisted).
func (h *History) layoutAt(commit plumbing.Hash) (l layout, err error) {
	err = h.relisted(func() error {
		c, err := readCommit(h.st, commit)
		if err == nil {
			l, err = h.readLayout(c.tree)
		}
		return err
	})
	return l, err
}
