package memfile

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// A file can hold both dialects: ralph adding to a file memsync wrote in
// orch's inserts its block after the first line that starts with "##
// Context" (inside memsync's entry "## Context: …"), or adds a "## Context"
// section at the end; memsync appending orch's entries to ralph's file
// (before issue 12) did the reverse. Each tool reads only its own entries,
// and ralph's delete rewrites the file with only what it parses. Parse reads
// such a file entry by entry in both dialects; the file's dialect is that of
// most of its entries (on a tie, the one its head shows), and each entry of the other dialect is reported as a Problem with
// its line (see IsDialectProblem). Render writes every entry in the file's
// dialect, so any rewrite (doctor --fix) converts them, with a backup.

// dialectMsg starts the message of a Problem about the dialect of an entry.
const dialectMsg = "mixed dialects: "

// IsDialectProblem tells a Problem about an entry in the other dialect than
// its file's (or, in a ralph file, with a heading ralph does not read): a
// rewrite converts it, nothing is lost.
func IsDialectProblem(p Problem) bool { return strings.HasPrefix(p.Msg, dialectMsg) }

// isMixed tells a file that holds entries of both dialects: a line
// "### mem-<unix>-<hex4>" and an orch entry. In a file that reads as
// orch's, an orch entry is any "## " heading that is not one of ralph's
// sections (orch's parser reads each as an entry, and a rewrite gives it an
// ID line); in one that reads as ralph's, such a heading needs a
// "- Content:" or "- ID:" bullet before the next "## " (else it is text
// ralph keeps between entries).
func isMixed(s string) bool {
	i := lineIndex(s, "### mem-")
	if i < 0 {
		return false
	}
	orchFile := !isRalph(s)
	if !orchFile && !strings.Contains(s, "\n- ") {
		return false
	}
	heading := ""
	for l := range strings.Lines(s) {
		l = strings.TrimSuffix(l, "\n")
		switch {
		case strings.HasPrefix(l, "## "):
			heading = ""
			if ralphType(l[3:]) == "" {
				if orchFile {
					return hasRalphEntry(s)
				}
				heading = l
			}
		case strings.HasPrefix(l, "### "):
		case heading != "":
			if k, _, ok := cutBullet(l); ok && (k == keyContent || k == keyID) {
				return hasRalphEntry(s)
			}
		}
	}
	return false
}

// hasRalphEntry tells whether a line of s is a heading ralph reads as an entry.
func hasRalphEntry(s string) bool {
	for l := range strings.Lines(s) {
		if id, ok := strings.CutPrefix(strings.TrimSuffix(l, "\n"), "### "); ok && len(id) >= 10 && ralphIDPrefix(id) != "" {
			return true
		}
	}
	return false
}

// ralphIDPrefix is the ID ralph reads from a heading's text: its regex
// "mem-\d+-[0-9a-f]{4}" is not anchored at the end.
func ralphIDPrefix(s string) string {
	rest, ok := strings.CutPrefix(s, "mem-")
	if !ok {
		return ""
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || len(rest) < n+5 || rest[n] != '-' || !validRalphID(s[:4+n+5]) {
		return ""
	}
	return s[:4+n+5]
}

// parseMixed reads a file of both dialects (see isMixed). An orch entry is
// its heading and the lines up to the next "## ", less the ralph blocks
// inside it; a ralph entry is its heading, its "> " lines and its metadata
// line. Its type is that of the last line that starts with one of ralph's
// section names, as ralph reads it. It reads the lines (mixedReader), then
// parses the orch entries' blocks, then decides the file's dialect
// (mixedDialect).
func parseMixed(f *File, lines []string, ralphHead bool) {
	i := 0
	for i < len(lines) && !strings.HasPrefix(lines[i], "## ") && !strings.HasPrefix(lines[i], "### ") {
		i++
	}
	f.Preamble = joinLines(lines[:i])
	m := mixedReader{f: f, orch: -1, ralph: -1, rtype: "pattern", at: -1, isRalph: map[int]bool{}}
	for ; i < len(lines); i++ {
		m.line(i, lines[i])
	}
	m.orchEntries()
	mixedDialect(f, m.isRalph, ralphHead)
}

// orchBlock is the text of an orch entry in a mixed file.
type orchBlock struct {
	at   int // index in f.Entries
	line int
	text []string
}

// mixedReader is parseMixed's state as it reads the lines.
type mixedReader struct {
	f       *File
	blocks  []orchBlock
	orch    int    // the open orch entry, an index in blocks
	ralph   int    // the open ralph entry, an index in f.Entries
	rtype   string // the type of ralph's entries here: their section's
	at      int    // the ralph section they are in (ralphAt)
	isRalph map[int]bool
}

// line reads lines[i], l.
func (m *mixedReader) line(i int, l string) {
	f := m.f
	switch {
	case strings.HasPrefix(l, "## "):
		m.heading(i, l)
	case strings.HasPrefix(l, "### "):
		m.ralphHeading(i, l)
	case m.ralph >= 0 && l != "" && f.Entries[m.ralph].ralphLine(l):
	case m.orch >= 0:
		m.blocks[m.orch].text = append(m.blocks[m.orch].text, l)
	case m.ralph >= 0:
		f.Entries[m.ralph].ralphLine(l) // a blank line
		if l != "" {
			e := &f.Entries[m.ralph]
			e.Extra = append(e.Extra, Field{strayKey, l})
			e.order = append(e.order, strayKey)
		}
	case l != "":
		f.Problems = append(f.Problems, Problem{i + 1, "text outside any entry"})
		f.sections = append(f.sections, l)
	}
}

// heading reads a "## " line: one of ralph's sections, or an orch entry's
// heading.
func (m *mixedReader) heading(i int, l string) {
	f := m.f
	m.ralph, m.orch = -1, -1
	for _, s := range ralphSections {
		if strings.HasPrefix(l[3:], s.heading) {
			m.rtype = s.typ
		}
	}
	if ralphType(l[3:]) != "" {
		f.sections = append(f.sections, l)
		m.at = len(f.sections)
		return
	}
	f.Entries = append(f.Entries, Entry{})
	m.blocks = append(m.blocks, orchBlock{at: len(f.Entries) - 1, line: i + 1, text: []string{l}})
	m.orch = len(m.blocks) - 1
}

// ralphHeading reads a "### " line: a ralph entry's heading, or a heading
// ralph does not read, which parseRalph takes as an entry (of ralph's form,
// since only ralph writes "### ").
func (m *mixedReader) ralphHeading(i int, l string) {
	f := m.f
	id := ralphIDPrefix(l[4:])
	known := id != ""
	if !known {
		id = strings.TrimSpace(l[4:])
	}
	f.Entries = append(f.Entries, Entry{ID: id, Type: m.rtype, Line: i + 1, ralphAt: m.at})
	m.ralph = len(f.Entries) - 1
	m.isRalph[m.ralph] = true
	if known {
		return
	}
	if f.Entries[m.ralph].ID == "" {
		f.Entries[m.ralph].ID, f.Entries[m.ralph].derived = bareHeadingID(l, i), true
	}
	f.Problems = append(f.Problems, Problem{i + 1, fmt.Sprintf("%sentry %s has a heading ralph does not read", dialectMsg, f.Entries[m.ralph].ID)})
}

// orchEntries parses the orch entries' blocks in place.
func (m *mixedReader) orchEntries() {
	types := map[string]string{}
	occurrences := map[string]int{}
	for _, b := range m.blocks {
		text := strings.Join(b.text, "\n") + "\n"
		e := parseOrchEntry(text, b.line, nil, types)
		if e.ID == "" {
			t := strings.TrimRight(text, "\n")
			e.ID, e.derived = deriveID(t, occurrences[t]), true
			occurrences[t]++
		}
		m.f.Entries[b.at] = e
	}
}

// mixedDialect decides a mixed file's dialect: most entries decide; on a
// tie, what the file's head shows (ralphHead), so the dialect a rewrite
// writes is the one the next read sees. Each entry of the other dialect is
// a Problem.
func mixedDialect(f *File, isRalph map[int]bool, ralphHead bool) {
	f.Dialect = Orch
	if n := 2 * len(isRalph); n > len(f.Entries) || n == len(f.Entries) && ralphHead {
		f.Dialect = Ralph
	}
	for k := range f.Entries {
		e := &f.Entries[k]
		switch {
		case f.Dialect == Ralph && !isRalph[k]:
			f.Problems = append(f.Problems, Problem{e.Line, fmt.Sprintf("%sentry %s is in orch's dialect in a file mostly in ralph's (ralph does not see it, and ralph's delete drops it)", dialectMsg, e.ID)})
		case f.Dialect == Orch && isRalph[k]:
			f.Problems = append(f.Problems, Problem{e.Line, fmt.Sprintf("%sentry %s is in ralph's dialect in a file mostly in orch's", dialectMsg, e.ID)})
		}
	}
	slices.SortStableFunc(f.Problems, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
}
