package memfile

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"strings"
	"time"
)

// ralphSections maps ralph-orchestrator's section headings to entry types.
var ralphSections = []struct{ heading, typ string }{
	{"Patterns", "pattern"},
	{"Decisions", "decision"},
	{"Fixes", "fix"},
	{"Context", "context"},
}

// isRalph tells a ralph-orchestrator file by its "### mem-" entries or, for a
// file with no entries yet, by a first section that is one of ralph's.
func isRalph(s string) bool {
	mem, bullet := lineIndex(s, "### mem-"), lineIndex(s, "- ")
	switch {
	case mem >= 0 && (bullet < 0 || mem < bullet):
		return true
	case mem >= 0 || bullet >= 0: // an orch bullet comes first
		return false
	}
	h := lineIndex(s, "## ")
	if h < 0 {
		return false
	}
	heading, _, _ := strings.Cut(s[h+3:], "\n")
	return ralphType(heading) != ""
}

// SniffDialect guesses the dialect from the head of a file, as much of it as
// the caller read; it is what Append uses so appends stay O(1).
func SniffDialect(head []byte) Dialect {
	if isRalph(string(head)) {
		return Ralph
	}
	return Orch
}

func ralphType(heading string) string {
	for _, s := range ralphSections {
		if heading == s.heading {
			return s.typ
		}
	}
	return ""
}

// ralphSection is the section an entry of type t goes to.
func ralphSection(t string) string {
	switch {
	case strings.HasPrefix(t, "pattern"):
		return "Patterns"
	case strings.HasPrefix(t, "decision"), strings.HasSuffix(t, "decision"):
		return "Decisions"
	case strings.HasPrefix(t, "fix"), t == "solution", t == "bug":
		return "Fixes"
	}
	return "Context"
}

func parseRalph(f *File, lines []string) {
	i := 0
	for i < len(lines) && !strings.HasPrefix(lines[i], "## ") && !strings.HasPrefix(lines[i], "### ") {
		i++
	}
	f.Preamble = joinLines(lines[:i])
	section := ""
	var cur *Entry
	for ; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "## "):
			section = l[3:]
			f.sections = append(f.sections, l)
			cur = nil
		case strings.HasPrefix(l, "### "):
			typ := ralphType(section)
			if typ == "" {
				typ = NormalizeType(section)
			}
			f.Entries = append(f.Entries, Entry{ID: strings.TrimSpace(l[4:]), Type: typ, Line: i + 1})
			cur = &f.Entries[len(f.Entries)-1]
		case cur == nil:
			if l != "" {
				f.Problems = append(f.Problems, Problem{i + 1, "text outside any entry"})
				f.sections = append(f.sections, l) // kept verbatim: it never starts with "## "
			}
		case l == ">" || strings.HasPrefix(l, "> "):
			text := strings.TrimPrefix(strings.TrimPrefix(l, ">"), " ")
			if cur.has(keyContent) {
				cur.Content += "\n" + text
			} else {
				cur.Content = text
				cur.order = append(cur.order, keyContent)
			}
		case len(l) >= 7 && strings.HasPrefix(l, "<!--") && strings.HasSuffix(l, "-->") && !cur.has(keyTags) && parseRalphMeta(cur, l[4:len(l)-3]):
			cur.order = append(cur.order, keyTags, keyDate)
		case l == "":
		default:
			cur.Extra = append(cur.Extra, Field{strayKey, l})
			cur.order = append(cur.order, strayKey)
		}
	}
}

// parseRalphMeta reads " tags: a, b | created: 2026-01-22 ". It reports
// false, changing nothing, for a comment that holds anything else.
func parseRalphMeta(e *Entry, meta string) bool {
	var tags []string
	var date string
	for _, part := range strings.Split(meta, "|") {
		k, v, _ := strings.Cut(part, ":")
		switch strings.TrimSpace(k) {
		case "tags":
			tags = splitTags(v)
		case "created":
			date = strings.TrimSpace(v)
		default:
			return false
		}
	}
	e.Tags, e.Date = tags, date
	return true
}

func renderRalph(b *bytes.Buffer, f *File) {
	bySection := map[string][]*Entry{}
	sections := append([]string(nil), f.sections...)
	for i := range f.Entries {
		e := &f.Entries[i]
		s := e.section(sections)
		if !contains(sections, "## "+s) {
			sections = append(sections, "## "+s)
		}
		bySection[s] = append(bySection[s], e)
	}
	first := true
	block := func() {
		if !first {
			b.WriteString("\n")
		}
		first = false
	}
	for _, l := range sections {
		block()
		b.WriteString(l + "\n")
		s, heading := strings.CutPrefix(l, "## ")
		if !heading {
			continue
		}
		for _, e := range bySection[s] {
			block()
			e.renderRalph(b)
		}
		delete(bySection, s)
	}
}

// section is the ralph section an entry belongs in: the one whose type it
// has, if the file has one, else the standard one for its type. sections
// holds the file's "## " headings and its verbatim lines, in file order.
func (e *Entry) section(sections []string) string {
	for _, l := range sections {
		s, heading := strings.CutPrefix(l, "## ")
		if heading && (ralphType(s) == e.Type || (ralphType(s) == "" && NormalizeType(s) == e.Type)) {
			return s
		}
	}
	return ralphSection(e.Type)
}

// renderRalph writes an entry as ralph does: content lines, then the
// tags/created line; stray lines and other bullets follow as plain lines.
func (e *Entry) renderRalph(b *bytes.Buffer) {
	b.WriteString("### " + e.ID + "\n")
	for _, l := range strings.Split(e.Content, "\n") {
		if l == "" {
			b.WriteString(">\n")
		} else {
			b.WriteString("> " + l + "\n")
		}
	}
	fmt.Fprintf(b, "<!-- tags: %s | created: %s -->\n", strings.Join(e.Tags, ", "), e.Date)
	for _, fl := range e.Extra {
		writeField(b, fl)
	}
}

// NewRalphID returns an ID in ralph-orchestrator's style, "mem-<unix>-<hex4>".
func NewRalphID(now time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("mem-%d-%x", now.Unix(), b)
}
