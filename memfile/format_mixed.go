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
// section names, as ralph reads it.
func parseMixed(f *File, lines []string, ralphHead bool) {
	i := 0
	for i < len(lines) && !strings.HasPrefix(lines[i], "## ") && !strings.HasPrefix(lines[i], "### ") {
		i++
	}
	f.Preamble = joinLines(lines[:i])
	type block struct {
		at   int // index in f.Entries
		line int
		text []string
	}
	var blocks []block
	orch := -1 // the open orch entry, an index in blocks
	ralph := -1
	rtype, at := "pattern", -1
	isRalph := map[int]bool{}
	for ; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "## "):
			ralph, orch = -1, -1
			for _, s := range ralphSections {
				if strings.HasPrefix(l[3:], s.heading) {
					rtype = s.typ
				}
			}
			if ralphType(l[3:]) != "" {
				f.sections = append(f.sections, l)
				at = len(f.sections)
				continue
			}
			f.Entries = append(f.Entries, Entry{})
			blocks = append(blocks, block{at: len(f.Entries) - 1, line: i + 1, text: []string{l}})
			orch = len(blocks) - 1
		case strings.HasPrefix(l, "### ") && ralphIDPrefix(l[4:]) != "":
			f.Entries = append(f.Entries, Entry{ID: ralphIDPrefix(l[4:]), Type: rtype, Line: i + 1, ralphAt: at})
			ralph = len(f.Entries) - 1
			isRalph[ralph] = true
		case strings.HasPrefix(l, "### "):
			// A heading ralph does not read, as parseRalph takes it: an
			// entry (of ralph's form, since only ralph writes "### ").
			f.Entries = append(f.Entries, Entry{ID: strings.TrimSpace(l[4:]), Type: rtype, Line: i + 1, ralphAt: at})
			ralph = len(f.Entries) - 1
			isRalph[ralph] = true
			if f.Entries[ralph].ID == "" {
				f.Entries[ralph].ID, f.Entries[ralph].derived = bareHeadingID(l, i), true
			}
			f.Problems = append(f.Problems, Problem{i + 1, fmt.Sprintf("%sentry %s has a heading ralph does not read", dialectMsg, f.Entries[ralph].ID)})
		case ralph >= 0 && l != "" && f.Entries[ralph].ralphLine(l):
		case orch >= 0:
			blocks[orch].text = append(blocks[orch].text, l)
		case ralph >= 0:
			f.Entries[ralph].ralphLine(l) // a blank line
			if l != "" {
				e := &f.Entries[ralph]
				e.Extra = append(e.Extra, Field{strayKey, l})
				e.order = append(e.order, strayKey)
			}
		case l != "":
			f.Problems = append(f.Problems, Problem{i + 1, "text outside any entry"})
			f.sections = append(f.sections, l)
		}
	}
	types := map[string]string{}
	occurrences := map[string]int{}
	for _, b := range blocks {
		text := strings.Join(b.text, "\n") + "\n"
		e := parseOrchEntry(text, b.line, nil, types)
		if e.ID == "" {
			t := strings.TrimRight(text, "\n")
			e.ID, e.derived = deriveID(t, occurrences[t]), true
			occurrences[t]++
		}
		f.Entries[b.at] = e
	}
	// Most entries decide; on a tie, what the file's head shows (so the
	// dialect a rewrite writes is the one the next read sees).
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
