package memfile

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
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
	at := -1 // the entries' ralphAt: 1 + the index of their heading in f.sections
	var cur *Entry
	for ; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "## "):
			section = l[3:]
			f.sections = append(f.sections, l)
			at = len(f.sections)
			cur = nil
		case strings.HasPrefix(l, "### "):
			f.Entries = append(f.Entries, Entry{ID: strings.TrimSpace(l[4:]), Type: headingType(section), Line: i + 1, ralphAt: at})
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

// headingType is the type of the entries under the ralph section heading
// "## s".
func headingType(s string) string {
	if t := ralphType(s); t != "" {
		return t
	}
	return NormalizeType(s)
}

// renderRalph writes the file in the order it was read: the preamble, the
// entries before any section, then each section heading followed by the
// lines outside entries that followed it and by its entries. An entry stays
// under the heading it was read under while its type is that heading's; an
// entry added (or given another type) goes to the first section of its type,
// added at the end if the file has none.
func renderRalph(b *bytes.Buffer, f *File) {
	sections := slices.Clip(f.sections)
	bySection := map[int][]*Entry{}
	for i := range f.Entries {
		e := &f.Entries[i]
		var k int
		sections, k = e.sectionIndex(sections)
		bySection[k] = append(bySection[k], e)
	}
	first := true
	block := func() {
		if !first {
			b.WriteString("\n")
		}
		first = false
	}
	flush := func(k int) {
		for _, e := range bySection[k] {
			block()
			e.renderRalph(b)
		}
		delete(bySection, k)
	}
	flush(-1)
	heading := -1
	for i, l := range sections {
		if strings.HasPrefix(l, "## ") {
			flush(heading)
			heading = i
		}
		block()
		b.WriteString(l + "\n")
	}
	flush(heading)
}

// sectionIndex is the index in sections of the heading the entry is
// rendered under, -1 for the entries before any heading. sections is
// returned with the heading added when the file has none for the entry's type.
func (e *Entry) sectionIndex(sections []string) ([]string, int) {
	switch at := e.ralphAt; {
	case at == -1 && e.Type == "":
		return sections, -1
	case at > 0 && at <= len(sections) && strings.HasPrefix(sections[at-1], "## ") && headingType(sections[at-1][3:]) == e.Type:
		return sections, at - 1
	}
	for i, l := range sections {
		if s, ok := strings.CutPrefix(l, "## "); ok && headingType(s) == e.Type {
			return sections, i
		}
	}
	h := "## " + ralphSection(e.Type)
	if i := slices.Index(sections, h); i >= 0 {
		return sections, i
	}
	return append(sections, h), len(sections)
}

// renderRalph writes an entry as ralph does: content lines, then the
// tags/created line; stray lines and other bullets follow as plain lines.
func (e *Entry) renderRalph(b *bytes.Buffer) {
	b.WriteString("### " + e.ID + "\n")
	for _, l := range strings.Split(e.Content, "\n") {
		if l = strings.TrimRight(l, "\r"); l == "" {
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

// ralphRefuses tells why an entry cannot go into a ralph-dialect file, or
// nil. Ralph keeps an entry's content, tags and date and nothing else (its
// parser reads no other line, its rewrites drop them), so a key, a session
// or a title would be lost: a key and a session at once to memsync's reader,
// which would no longer find the entry by its key or keep it out of other
// sessions. titled tells that the title is the caller's, not the content's
// first line (which is all a ralph entry shows).
func ralphRefuses(e *Entry, titled bool) error {
	what := ""
	switch {
	case e.Field(KeyField) != "":
		what = "a key"
	case e.Field("Session") != "":
		what = "a session"
	case titled && strings.TrimSpace(e.Title) != TitleFrom(e.Content):
		what = "a title"
	default:
		return nil
	}
	return &DialectError{What: what}
}

// DialectError refuses what a ralph-dialect file cannot keep; it is an
// ErrInvalid.
type DialectError struct {
	What string // "a key", "a session", "a title"
}

func (e *DialectError) Error() string {
	return fmt.Sprintf("%s: the ralph dialect has no place for %s (ralph-orchestrator's memories.md keeps only an entry's content, tags and date)", ErrInvalid, e.What)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *DialectError) Unwrap() error { return ErrInvalid }

// CheckDialect refuses, before a write, an entry the active file's dialect
// cannot keep (an ErrInvalid): in the ralph dialect, one with a key, a
// session, or a title of the caller's (titled) other than its content's
// first line. Append checks the key and session again under the lock.
func (s *Store) CheckDialect(e *Entry, titled bool) error {
	d, err := s.Dialect()
	if err != nil || d != Ralph {
		return err
	}
	return ralphRefuses(e, titled)
}

// Dialect is the dialect of the active file as Append sees it, from the
// file's head; Orch for a file not yet written.
func (s *Store) Dialect() (Dialect, error) {
	target, err := s.Resolve(s.Path())
	if err != nil {
		return Orch, err
	}
	f, err := os.Open(target)
	if errors.Is(err, fs.ErrNotExist) {
		return Orch, nil
	} else if err != nil {
		return Orch, err
	}
	defer func() { _ = f.Close() }()
	head := make([]byte, sniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return Orch, err
	}
	return SniffDialect(head[:n]), nil
}
