package memfile

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/maphash"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/memsync/memsync/internal/hugepage"
)

// Dialect is the layout of a memories.md file.
type Dialect int

const (
	// Orch is the orch loop engine's format: "## Type: Title" and "- Key: value" bullets.
	Orch Dialect = iota
	// Ralph is ralph-orchestrator's format: "## Patterns|Decisions|Fixes|Context"
	// sections, "### mem-<unix>-<hex>" entries, "> " content lines and an
	// "<!-- tags: … | created: … -->" line.
	Ralph
)

func (d Dialect) String() string {
	if d == Ralph {
		return "ralph"
	}
	return "orch"
}

// Header is the first line of a new memory file.
const Header = "# Memories\n"

// Problem is damage found while parsing, with its 1-based line.
type Problem struct {
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Msg) }

// File is a parsed memories.md.
type File struct {
	Dialect  Dialect
	Preamble string // text before the first entry (or ralph section), kept verbatim
	Entries  []Entry
	Problems []Problem // damage found while parsing; Render keeps the damaged text where it can
	// CRLF: the file's lines end in "\r\n", and Render writes them so. A
	// file's style is that of its first line: a file with mixed line ends
	// (lines appended by a tool that writes "\n") is rewritten in it.
	CRLF bool

	sections []string // ralph: "## " section headings and stray lines, in file order
	src      []byte   // the bytes the entries' strings share, when a Store read them (see Reload)
}

// Known bullet keys, as orch writes them.
const (
	keyID      = "ID"
	keyTags    = "Tags"
	keyDate    = "Date"
	keyContent = "Content"
	strayKey   = "" // a line inside an entry that is no bullet
)

// Parse reads a memories.md. It never fails: what does not parse is kept as
// stray lines of the entry it sits in (or in the preamble) and reported in
// Problems with its line number.
func Parse(data []byte) *File {
	return parse(string(data))
}

// parseOwned is Parse without the copy, for data that is never changed
// afterwards (a file Store just read): the entries' strings share its memory.
// A 10 MB copy costs more than the memmove: its pages are new to the process.
func parseOwned(data []byte) *File {
	f := parse(view(data))
	f.src = data
	return f
}

// view is data as a string without a copy, for data that does not change
// while the string is in use.
func view(data []byte) string { return unsafe.String(unsafe.SliceData(data), len(data)) }

func parse(s string) *File {
	sc := scan(s)
	crlf := false
	if sc.lineEnds {
		s, crlf = lineEnds(s)
		sc = scan(s)
	}
	f := &File{CRLF: crlf}
	if sc.damaged {
		f.Problems = scanDamage(s)
	}
	ralph := sc.ralph()
	switch {
	case sc.mixed(ralph):
		parseMixed(f, splitLines(s), ralph)
		f.ConvertDialect() // its entries as a rewrite writes them (the Problems stay)
	case ralph:
		f.Dialect = Ralph
		parseRalph(f, splitLines(s))
	default:
		parseOrch(f, s, sc.heads, sc.headLines)
	}
	for i := range f.Entries {
		// Ralph's dialect has no title line: the title is the content's
		// first line, as ralph shows it (a "title:" tag holds another).
		if e := &f.Entries[i]; e.ralphAt != 0 && e.Title == "" {
			e.Title = TitleFrom(e.Content)
		}
	}
	f.checkDuplicateIDs()
	return f
}

// lineEnds reads "\r\n" as a line end: it returns s with the "\r"s that end
// a line dropped (a run of them, as in "\r\r\n", and at the end of s), and
// whether the first line ends in "\r\n". A "\r" inside a line is kept.
func lineEnds(s string) (_ string, crlf bool) {
	if !strings.Contains(s, "\r\n") && !strings.HasSuffix(s, "\r") {
		return s, false
	}
	if nl := strings.IndexByte(s, '\n'); nl > 0 && s[nl-1] == '\r' {
		crlf = true
	}
	var b strings.Builder
	b.Grow(len(s))
	for l := range strings.Lines(s) {
		body, nl := strings.CutSuffix(l, "\n")
		b.WriteString(strings.TrimRight(body, "\r"))
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String(), crlf
}

// splitLines splits text into lines without their "\n". A final line without
// a newline is kept as a line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// scanDamage reports git conflict markers, NUL bytes and invalid UTF-8.
//
// A line "=======" is a conflict marker only between a "<<<<<<<" line and
// the ">>>>>>>" line that follows it; anywhere else it is text (a markdown
// heading's underline).
func scanDamage(s string) []Problem {
	if !mayBeDamaged(s) {
		return nil
	}
	var ps, seps []Problem // seps: "=======" lines after an open "<<<<<<<"
	open, flushed := false, false
	for i, l := range splitLines(s) {
		l = strings.TrimRight(l, "\r") // Damage reads files as they are, "\r\n" too
		switch {
		case isConflictMarker(l):
			marker := Problem{i + 1, fmt.Sprintf("git conflict marker %q", strings.Fields(l)[0])}
			switch l[0] {
			case '=':
				if open {
					seps = append(seps, marker)
				}
				continue
			case '<':
				open = true
			case '>':
				if open && len(seps) > 0 {
					ps = append(ps, seps...)
					flushed = true
					seps = seps[:0]
				}
				open = false
			}
			ps = append(ps, marker)
		case strings.IndexByte(l, 0) >= 0:
			ps = append(ps, Problem{i + 1, "NUL byte (binary content)"})
		case !utf8.ValidString(l):
			ps = append(ps, Problem{i + 1, "invalid UTF-8"})
		}
	}
	if flushed {
		slices.SortStableFunc(ps, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
	}
	return ps
}

// Damage reports the damage Parse would report in data (git conflict
// markers, NUL bytes, invalid UTF-8, with line numbers) without parsing it:
// a fast check for callers that keep the bytes as they are, such as
// snapshots. Duplicate IDs are not checked.
func Damage(data []byte) []Problem { return scanDamage(view(data)) }

// mayBeDamaged is a fast whole-file check: false means scanDamage finds nothing.
func mayBeDamaged(s string) bool {
	if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
		return true
	}
	for _, m := range []string{"<<<<<<<", ">>>>>>>", "=======", "|||||||"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// isConflictMarker tells git's conflict marker lines: seven '<', '>' or '|'
// alone or followed by a space, or seven '=' alone.
func isConflictMarker(l string) bool {
	if len(l) < 7 {
		return false
	}
	c := l[0]
	if c != '<' && c != '>' && c != '|' && c != '=' {
		return false
	}
	for i := 1; i < 7; i++ {
		if l[i] != c {
			return false
		}
	}
	if c == '=' {
		return len(l) == 7
	}
	return len(l) == 7 || l[7] == ' '
}

// duplicateIDMsg starts the problem of an entry that repeats an earlier
// entry's ID (IsDuplicateIDProblem).
const duplicateIDMsg = "duplicate entry ID"

// IsDuplicateIDProblem tells a problem that is an entry repeating an
// earlier entry's ID: a rewrite gives it a new ID, and loses no text.
func IsDuplicateIDProblem(p Problem) bool { return strings.HasPrefix(p.Msg, duplicateIDMsg) }

func (f *File) checkDuplicateIDs() {
	if len(f.Entries) < 2 {
		return
	}
	// Keyed by a 64-bit hash of the ID, which is several times faster than a
	// map of strings on a large memory; IDs whose hashes collide are told
	// apart in a map of strings.
	seed := maphash.MakeSeed()
	seen := make(map[uint64]int, len(f.Entries))
	var collided map[string]int
	for i, e := range f.Entries {
		h := maphash.String(seed, e.ID)
		first, ok := seen[h]
		if !ok {
			seen[h] = i
			continue
		}
		if f.Entries[first].ID != e.ID {
			if collided == nil {
				collided = map[string]int{}
			}
			if first, ok = collided[e.ID]; !ok {
				collided[e.ID] = i
				continue
			}
		}
		f.Problems = append(f.Problems, Problem{e.Line, fmt.Sprintf(duplicateIDMsg+" %s (first at line %d)", e.ID, f.Entries[first].Line)})
	}
}

// parseOrch reads the orch format: heads are the offsets of the "## "
// lines (each starts an entry), headLines their line numbers.
func parseOrch(f *File, s string, heads, headLines []int) {
	start := len(s)
	if len(heads) > 0 {
		start = heads[0]
	}
	f.Preamble = s[:start]
	if f.Preamble != "" && !strings.HasSuffix(f.Preamble, "\n") {
		f.Preamble += "\n"
	}
	starts := heads
	block := func(k int) string {
		if k+1 < len(starts) {
			return s[starts[k]:starts[k+1]]
		}
		return s[starts[k]:]
	}
	f.Entries = hugepage.Make[Entry](len(starts))
	// Entries parse independently: a large file is parsed in chunks on all
	// cores (a 10 MB memory is read on every search).
	parse := func(lo, hi int) {
		types := map[string]string{}
		var orderBuf [8]string
		for k := lo; k < hi; k++ {
			f.Entries[k] = parseOrchEntry(block(k), headLines[k], orderBuf[:0], types)
		}
	}
	chunks := min(runtime.GOMAXPROCS(0), len(starts)/parallelMin+1)
	var wg sync.WaitGroup
	for c := range chunks {
		wg.Go(func() { parse(len(starts)*c/chunks, len(starts)*(c+1)/chunks) })
	}
	wg.Wait()
	// IDs derived from the text count identical entries in file order.
	occurrences := map[string]int{}
	for k := range f.Entries {
		if e := &f.Entries[k]; e.ID == "" {
			text := strings.TrimRight(block(k), "\n")
			e.ID = deriveID(text, occurrences[text])
			e.derived = true
			occurrences[text]++
		}
	}
}

// parallelMin is the number of entries below which parsing stays on one core.
const parallelMin = 2000

// PlainOrch tells whether data is a file in orch's dialect alone (no
// ralph entry, no "\r"): one whose entries each start at a "## " line and
// parse the same whatever surrounds them, so a part of it that starts and
// ends at such lines parses into the same entries as the whole (what a
// snapshot's record of a change relies on to parse only what changed).
func PlainOrch(data []byte) bool {
	s := view(data)
	if strings.Contains(s, "\r") {
		return false
	}
	for i := 0; ; {
		j := strings.Index(s[i:], "### mem-") // '#' is rarer than '\n': faster than lineIndex
		if j < 0 {
			break
		}
		if i+j == 0 || s[i+j-1] == '\n' {
			return false
		}
		i += j + 1
	}
	return !isRalph(s)
}

// lineIndex is the index of the first line of s that starts with prefix, or -1.
func lineIndex(s, prefix string) int {
	if strings.HasPrefix(s, prefix) {
		return 0
	}
	if i := strings.Index(s, "\n"+prefix); i >= 0 {
		return i + 1
	}
	return -1
}

// parseOrchEntry reads one entry: its heading line and the lines up to the
// next heading.
func parseOrchEntry(block string, line int, order []string, types map[string]string) Entry {
	e := Entry{Line: line, order: order}
	heading, rest, _ := strings.Cut(block, "\n")
	e.setHeading(strings.TrimPrefix(heading, "## "), types)
	var open *string // the value of the bullet that continuation lines extend
	blanks := 0      // blank lines seen since the last content, pending
	for rest != "" {
		var l string
		l, rest, _ = strings.Cut(rest, "\n")
		if l == "" {
			blanks++
			continue
		}
		if strings.HasPrefix(l, "  ") && open != nil {
			*open += strings.Repeat("\n", blanks) + "\n" + l[2:]
			blanks = 0
			continue
		}
		blanks = 0
		key, val, ok := cutBullet(l)
		if !ok {
			e.Extra = append(e.Extra, Field{strayKey, l})
			e.order = append(e.order, strayKey)
			open = nil
			continue
		}
		open = e.setField(key, val)
	}
	// Most entries have the default bullet order: share it instead of
	// keeping a copy per entry.
	if slices.Equal(e.order, defaultOrder) {
		e.order = defaultOrder
	} else {
		e.order = slices.Clone(e.order)
	}
	return e
}

// cutBullet splits "- Key: value" (or "- Key:" with nothing after it).
func cutBullet(l string) (key, val string, ok bool) {
	if !strings.HasPrefix(l, "- ") {
		return "", "", false
	}
	key, val, ok = strings.Cut(l[2:], ":")
	if !ok || !validKey(key) || (val != "" && val[0] != ' ') {
		return "", "", false
	}
	return key, strings.TrimPrefix(val, " "), true
}

func validKey(k string) bool {
	if k == "" || len(k) > 40 || k[0] == ' ' || k[len(k)-1] == ' ' {
		return false
	}
	for _, r := range k {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ' ' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// setField stores a bullet and returns where its continuation lines go.
//
// The first "- Tags:", "- Date:", "- ID:" or "- Content:" bullet of an entry
// is that field. A later bullet with the same key is not merged: it is kept
// as it is, as an Extra field with that key, and Render writes it back once,
// in its place, so a rewrite changes nothing.
func (e *Entry) setField(key, val string) *string {
	var p *string
	if !e.has(key) {
		switch key {
		case keyTags:
			e.Tags = splitTags(val)
			e.order = append(e.order, keyTags)
			return nil
		case keyID:
			e.ID = strings.TrimSpace(val)
			e.order = append(e.order, keyID)
			return nil
		case keyDate:
			p = &e.Date
		case keyContent:
			p = &e.Content
		}
	}
	e.order = append(e.order, key)
	if p == nil {
		e.Extra = append(e.Extra, Field{key, val})
		return &e.Extra[len(e.Extra)-1].Value
	}
	*p = val
	return p
}

func (e *Entry) has(key string) bool {
	for _, k := range e.order {
		if k == key {
			return true
		}
	}
	return false
}

// setHeading splits "Type: Title". A type is at most 40 bytes before ": ".
// types caches NormalizeType: a file has few distinct types.
func (e *Entry) setHeading(h string, types map[string]string) {
	if i := strings.Index(h, ": "); i > 0 && i <= 40 {
		raw := h[:i]
		t, ok := types[raw]
		if !ok {
			t = NormalizeType(raw)
			types[raw] = t
		}
		if t != "" {
			e.Type, e.typeRaw, e.Title = t, raw, h[i+2:]
			return
		}
	}
	e.Title = h
}

func splitTags(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	tags := make([]string, 0, strings.Count(s, ",")+1)
	for t := range strings.SplitSeq(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags
}

func joinLines(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// Render writes the file back. For a file memsync wrote, Render(Parse(b))
// equals b; other files come back with blank lines and line ends normalized
// and nothing else changed, and then stay the same: Render(Parse(r)) equals
// r for r = Render(Parse(b)), for any b. Lines end in "\r\n" when f.CRLF.
func (f *File) Render() []byte {
	b := bytes.NewBuffer(hugepage.Make[byte](f.sizeHint())[:0])
	b.WriteString(f.Preamble)
	if f.Dialect == Ralph {
		renderRalph(b, f)
	} else {
		for i := range f.Entries {
			if i > 0 {
				b.WriteString("\n")
			}
			e := &f.Entries[i]
			if e.ralphAt != 0 { // read from ralph's dialect: written in orch's order
				c := *e
				c.order, c.typeRaw = nil, ""
				e = &c
			}
			e.renderOrch(b)
		}
	}
	if f.CRLF {
		return bytes.ReplaceAll(b.Bytes(), []byte("\n"), []byte("\r\n"))
	}
	return b.Bytes()
}

// sizeHint estimates the rendered size, so Render allocates once.
func (f *File) sizeHint() int {
	n := len(f.Preamble)
	for i := range f.Entries {
		e := &f.Entries[i]
		n += 64 + len(e.ID) + len(e.Type) + len(e.Title) + len(e.Date) + len(e.Content) + strings.Count(e.Content, "\n")*2
		for _, t := range e.Tags {
			n += len(t) + 2
		}
		for _, x := range e.Extra {
			n += len(x.Key) + len(x.Value) + 8
		}
	}
	return n
}

// RenderEntry renders one entry the way it is appended to a file of dialect d.
func RenderEntry(e *Entry, d Dialect) string {
	var b bytes.Buffer
	if d == Ralph {
		e.renderRalph(&b, ralphType(ralphSection(e.Type)))
	} else {
		e.renderOrch(&b)
	}
	return b.String()
}

// defaultOrder is the bullet order of entries memsync creates.
var defaultOrder = []string{keyTags, keyDate, keyID, keyContent}

func (e *Entry) renderOrch(b *bytes.Buffer) {
	b.WriteString("## " + e.Heading() + "\n")
	order := e.order
	if order == nil {
		order = defaultOrder
	}
	if !contains(order, keyID) {
		// Derived IDs are written on the first rewrite, so they never change.
		order = insertBefore(order, keyID, keyContent)
	}
	// The first bullet of each built-in key is the field; a later one with
	// the same key was parsed into Extra (see setField) and is written from
	// there, in its place.
	var done uint8
	extra := 0
	for _, k := range order {
		if bit := builtinBit(k); bit != 0 && done&bit == 0 {
			done |= bit
			switch k {
			case keyID:
				writeBullet(b, keyID, e.ID)
			case keyTags:
				writeBullet(b, keyTags, strings.Join(e.Tags, ", "))
			case keyDate:
				writeBullet(b, keyDate, e.Date)
			case keyContent:
				writeBullet(b, keyContent, e.Content)
			}
			continue
		}
		if extra < len(e.Extra) {
			writeField(b, e.Extra[extra])
			extra++
		}
	}
	for _, fl := range e.Extra[extra:] { // fields added by code, not by parsing
		writeField(b, fl)
	}
}

// builtinBit is the bit of a built-in bullet key in renderOrch's set of the
// keys written, 0 for other keys.
func builtinBit(k string) uint8 {
	switch k {
	case keyID:
		return 1
	case keyTags:
		return 2
	case keyDate:
		return 4
	case keyContent:
		return 8
	}
	return 0
}

// writeField writes an Extra field: a bullet, or a stray line as itself.
func writeField(b *bytes.Buffer, fl Field) {
	if fl.Key == strayKey {
		b.WriteString(fl.Value + "\n")
	} else {
		writeBullet(b, fl.Key, fl.Value)
	}
}

// writeBullet writes "- key: val", a multi-line value with its other lines
// indented. A "\r" that ends a line of val is left out: Parse reads it as
// part of the line end.
func writeBullet(b *bytes.Buffer, key, val string) {
	first, rest, multi := strings.Cut(val, "\n")
	first = strings.TrimRight(first, "\r")
	b.WriteString("- " + key + ":")
	if first != "" {
		b.WriteString(" " + first)
	}
	b.WriteString("\n")
	if !multi {
		return
	}
	for _, l := range strings.Split(rest, "\n") {
		b.WriteString("  " + strings.TrimRight(l, "\r") + "\n")
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func insertBefore(order []string, k, before string) []string {
	out := make([]string, 0, len(order)+1)
	done := false
	for _, o := range order {
		if o == before && !done {
			out = append(out, k)
			done = true
		}
		out = append(out, o)
	}
	if !done {
		out = append(out, k)
	}
	return out
}
