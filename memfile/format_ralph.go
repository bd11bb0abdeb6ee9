package memfile

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ralphSections maps ralph-orchestrator's section headings to entry types.
var ralphSections = []struct{ heading, typ string }{
	{"Patterns", "pattern"},
	{"Decisions", "decision"},
	{"Fixes", "fix"},
	{"Context", "context"},
}

// isRalph tells a ralph-orchestrator file by its "### mem-" entries — unless
// an orch entry's bullet comes first (a "- " line under a "## " heading that
// is not one of ralph's sections; a "- " line before any heading is text) —
// or, for a file with no entries yet, by a first section that is one of
// ralph's.
func isRalph(s string) bool {
	mem, bullet := lineIndex(s, "### mem-"), orchBullet(s)
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

// orchBullet is the offset of the first "- " line under a "## " heading that
// is not one of ralph's sections, or -1.
func orchBullet(s string) int {
	off, inEntry := 0, false
	for l := range strings.Lines(s) {
		switch {
		case strings.HasPrefix(l, "## "):
			inEntry = ralphType(strings.TrimRight(l[3:], "\n")) == ""
		case inEntry && strings.HasPrefix(l, "- "):
			return off
		}
		off += len(l)
	}
	return -1
}

// sniffDialect guesses the dialect from the head of a file, as much of it as
// the caller read; it is what Append uses so appends stay O(1).
func sniffDialect(head []byte) Dialect {
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
			if cur.ID == "" {
				cur.ID, cur.derived = bareHeadingID(l, i), true
			}
			if !validRalphID(cur.ID) {
				f.Problems = append(f.Problems, Problem{i + 1, fmt.Sprintf("%sentry %s has a heading ralph does not read (ralph reads its lines as the entry above's)", dialectMsg, cur.ID)})
			}
		case cur == nil:
			if l != "" {
				f.Problems = append(f.Problems, Problem{i + 1, "text outside any entry"})
				f.sections = append(f.sections, l) // kept verbatim: it never starts with "## "
			}
		case !cur.ralphLine(l):
			cur.Extra = append(cur.Extra, Field{strayKey, l})
			cur.order = append(cur.order, strayKey)
		}
	}
}

// bareHeadingID is the ID of an entry whose heading, line i, is "### "
// alone: derived as orch's entries without one get theirs, and written into
// the heading at the next rewrite.
func bareHeadingID(l string, i int) string {
	return deriveID(fmt.Sprintf("%s\x00%d", l, i), 0)
}

// ralphLine reads a line of a ralph entry: a content line or the metadata
// line. It reports false for any other line but a blank one.
func (e *Entry) ralphLine(l string) bool {
	switch {
	case l == ">" || strings.HasPrefix(l, "> "):
		text := strings.TrimPrefix(strings.TrimPrefix(l, ">"), " ")
		if text == " " { // a blank line, as memsync writes it so ralph keeps it
			text = ""
		}
		if e.has(keyContent) {
			e.Content += "\n" + text
		} else {
			e.Content = text
			e.order = append(e.order, keyContent)
		}
	case len(l) >= 7 && strings.HasPrefix(l, "<!--") && strings.HasSuffix(l, "-->") && !e.has(keyTags) && parseRalphMeta(e, l[4:len(l)-3]):
		e.order = append(e.order, keyTags, keyDate)
	case l == "":
	default:
		return false
	}
	return true
}

// parseRalphMeta reads " tags: a, b | created: 2026-01-22 ". It reports
// false, changing nothing, for a comment that holds anything else. Tags
// that hold what ralph's dialect has no line for (see ralphTags) are read
// back into the entry's type, title, date and fields.
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
	e.Tags, e.Date = nil, date
	for _, t := range tags {
		name, v, ok := strings.Cut(t, ":")
		if !ok || !reservedTag(name) {
			e.Tags = append(e.Tags, t)
			continue
		}
		v = unescapeTag(v)
		switch name {
		case "type":
			e.SetType(v)
		case "title":
			e.Title = v
		case "date":
			e.Date = v
		case "alias": // an entry may have had several IDs
			e.Extra = append(e.Extra, Field{Key: AliasField, Value: v})
		default:
			e.SetField(fieldOfTag(name), v)
		}
	}
	return true
}

// ralphFields are the fields memsync keeps in a ralph entry as tags
// "name:value" (ralph keeps an entry's content, tags and date, nothing
// else): the tag name and the field. "type:", "title:" and "date:" tags hold
// a type ralph has no section for, a title that is not the content's first
// line, and a date that is not YYYY-MM-DD.
var ralphFields = []struct{ tag, field string }{
	{"key", KeyField},
	{"session", "Session"},
	{"updated", "Updated"},
	{"promoted-from", "Promoted-From"},
	{"source-id", SourceIDField},
	{"alias", AliasField},
	// Provenance (package internal/provenance).
	{"author", "Author"},
	{"branch", "Branch"},
	{"worktree", "Worktree"},
	{"commit", "Commit"},
	{"agent", "Agent"},
	{"source", "Source"},   // the agent an MCP client or package memory's recorder named
	{"created", "Created"}, // package memory's creation time
	{"edited", "Edited"},
	{"secret-allowed", SecretAllowedField},
	// Keeping memory true (package internal/cite; supersede).
	{"cites", CitesField},
	{"supersedes", SupersedesField},
	{"superseded-by", SupersededByField},
}

// SourceIDField is the field that keeps the ID an entry had before it was
// written into a ralph file, where IDs are "mem-<unix>-<hex4>": Find
// resolves it, and ralph shows it as the tag "source-id:…".
const SourceIDField = "Source-ID"

// The bullets that keep an entry true to the code and to newer entries:
// CitesField holds its citations on one line (package internal/cite
// writes and reads the value: "path:10-12 @commit #fingerprint; ...");
// SupersedesField names the entry it replaced, SupersededByField (on the
// archived entry) the one that replaced it.
const (
	CitesField        = "Cites"
	SupersedesField   = "Supersedes"
	SupersededByField = "Superseded-By"
)

func reservedTag(name string) bool {
	switch name {
	case "type", "title", "date":
		return true
	}
	return fieldOfTag(name) != ""
}

func fieldOfTag(name string) string {
	for _, f := range ralphFields {
		if f.tag == name {
			return f.field
		}
	}
	return ""
}

func tagOfField(field string) string {
	for _, f := range ralphFields {
		if f.field == field {
			return f.tag
		}
	}
	return field
}

// escapeTag writes a value so that it is one ralph tag: ralph splits tags at
// ',', ends them at '|', trims spaces (any Unicode space: "\f", U+00A0), and
// the line ends at "-->".
func escapeTag(v string) string {
	head, tail := 0, len(v) // the first and the last rune, when spaces
	if r, n := utf8.DecodeRuneInString(v); unicode.IsSpace(r) {
		head = n
	}
	if r, n := utf8.DecodeLastRuneInString(v); unicode.IsSpace(r) {
		tail = len(v) - n
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		edge := i < head || i >= tail
		if c == '%' || c == ',' || c == '|' || c == '\n' || c == '\r' || edge || (c == '>' && strings.HasSuffix(b.String(), "--")) {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func unescapeTag(v string) string {
	if !strings.Contains(v, "%") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '%' && i+2 < len(v) {
			if n, err := strconv.ParseUint(v[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
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
		typ := ""
		if k >= 0 {
			typ = headingType(sections[k][3:])
		}
		for _, e := range bySection[k] {
			block()
			e.renderRalph(b, typ)
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
// tags/created line; stray lines follow as they were. What ralph's dialect
// has no line for is written as tags (see ralphFields): the type, when it is
// not that of the section (sectionType), a title that is not the content's
// first line, a date ralph cannot read, the entry's fields. A blank content
// line is written ">  ", which ralph keeps (it drops ">").
func (e *Entry) renderRalph(b *bytes.Buffer, sectionType string) {
	b.WriteString("### " + e.ID + "\n")
	for _, l := range strings.Split(e.Content, "\n") {
		if l = strings.TrimRight(l, "\r"); l == "" {
			l = " "
		}
		b.WriteString("> " + l + "\n")
	}
	tags := slices.Clip(e.Tags)
	// Bullets ralph has no field for read back as plain tags: they go
	// where plain tags go, so a second rewrite writes the same line.
	for _, fl := range e.Extra {
		if fl.Key != strayKey && fieldOfTag(tagOfField(fl.Key)) == "" {
			tags = append(tags, fl.Key+":"+escapeTag(fl.Value))
		}
	}
	if e.Type != "" && e.Type != sectionType {
		tags = append(tags, "type:"+escapeTag(e.Type))
	}
	if e.Title != "" && e.Title != TitleFrom(e.Content) {
		tags = append(tags, "title:"+escapeTag(e.Title))
	}
	created := e.Date
	if !validDate(created) {
		if len(created) < 10 || !validDate(created[:10]) {
			created = "1970-01-01"
		} else {
			created = created[:10]
		}
		tags = append(tags, "date:"+escapeTag(e.Date))
	}
	for _, fl := range e.Extra {
		if fl.Key != strayKey && fieldOfTag(tagOfField(fl.Key)) != "" {
			tags = append(tags, tagOfField(fl.Key)+":"+escapeTag(fl.Value))
		}
	}
	fmt.Fprintf(b, "<!-- tags: %s | created: %s -->\n", strings.Join(tags, ", "), created)
	for _, fl := range e.Extra {
		if fl.Key == strayKey {
			if strings.HasPrefix(fl.Value, ">") || strings.HasPrefix(fl.Value, "## ") || strings.HasPrefix(fl.Value, "### ") {
				// Read back, it would be a content line or a heading
				// (a stray line of an orch entry written as ralph's).
				fl.Value = " " + fl.Value
			}
			writeField(b, fl)
		}
	}
}

// validDate tells ralph's "YYYY-MM-DD".
func validDate(d string) bool {
	if len(d) != 10 || d[4] != '-' || d[7] != '-' {
		return false
	}
	for i := range d {
		if i != 4 && i != 7 && (d[i] < '0' || d[i] > '9') {
			return false
		}
	}
	return true
}

// validRalphID tells an ID ralph reads: "mem-<digits>-<4 lower hex digits>".
func validRalphID(id string) bool {
	rest, ok := strings.CutPrefix(id, "mem-")
	unix, hex4, ok2 := strings.Cut(rest, "-")
	if !ok || !ok2 || unix == "" || len(hex4) != 4 {
		return false
	}
	for _, c := range unix {
		if c < '0' || c > '9' {
			return false
		}
	}
	for _, c := range hex4 {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// newRalphID returns a new ID for a ralph file (see ownRalphID).
// Append draws again while the file holds it.
func newRalphID(now time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return ownRalphID(now.Unix(), hex.EncodeToString(b[:]))
}

// ownRalphID is the form of the IDs memsync gives entries of a ralph file,
// "mem-0<unix>-<hex4>": ralph reads any "mem-\d+-[0-9a-f]{4}", but makes
// its own IDs from the clock (the seconds in plain decimal, the
// microseconds mod 0x10000) without looking at the file, and never writes
// the seconds with a leading zero. So ralph never gives out an ID memsync
// has given out, however close in time the two write.
func ownRalphID(unix int64, hex4 string) string {
	return "mem-0" + strconv.FormatInt(max(unix, 0), 10) + "-" + hex4
}

// isOwnRalphID tells an ID of ownRalphID's form, which ralph never makes.
func isOwnRalphID(id string) bool {
	rest, ok := strings.CutPrefix(id, "mem-0")
	return ok && validRalphID(id) && rest[0] != '-'
}

// uniqueRalphID is a new ralph ID that no entry heading of data (a ralph
// file) has, as ralph reads headings: "### " and the ID, anything after it.
func uniqueRalphID(data []byte, now time.Time) string {
	for {
		id := newRalphID(now)
		if !holdsHeading(data, "### "+id) {
			return id
		}
	}
}

// holdsHeading tells whether a line of data starts with h.
func holdsHeading(data []byte, h string) bool {
	for off := 0; ; {
		i := bytes.Index(data[off:], []byte(h))
		if i < 0 {
			return false
		}
		if off+i == 0 || data[off+i-1] == '\n' {
			return true
		}
		off += i + 1
	}
}

// ralphLastSection is the name of the last section of data, a ralph file
// ("Context" for "## Context"), and whether the file is plain ralph: every
// "## " line one of ralph's sections, every "### " line an ID ralph reads.
func ralphLastSection(data []byte) (last string, plain bool) {
	plain = true
	for rest := data; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if len(line) < 3 || line[0] != '#' {
			continue
		}
		line = bytes.TrimRight(line, "\r")
		switch {
		case bytes.HasPrefix(line, []byte("## ")):
			last = string(line[3:])
			plain = plain && ralphType(last) != ""
		case bytes.HasPrefix(line, []byte("### ")):
			plain = plain && validRalphID(string(line[4:]))
		}
	}
	return last, plain
}

// ralphUnix is the time in a ralph ID, 0 for another ID.
func ralphUnix(id string) int64 {
	rest, _ := strings.CutPrefix(id, "mem-")
	unix, _, _ := strings.Cut(rest, "-")
	n, _ := strconv.ParseInt(unix, 10, 64)
	return n
}

// ralphIDFrom is a ralph ID for e, which has another kind of ID, not in
// taken (which it joins): derived from e's ID, so that it is the same on
// every rewrite until it is written; its time is e's date.
func ralphIDFrom(e *Entry, taken map[string]bool) string {
	unix := int64(0)
	if len(e.Date) >= 10 {
		if t, err := time.Parse("2006-01-02", e.Date[:10]); err == nil {
			unix = t.Unix()
		}
	}
	for n := 0; ; n++ {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d", e.ID, n)))
		id := ownRalphID(unix, hex.EncodeToString(sum[:2]))
		if !taken[id] {
			taken[id] = true
			return id
		}
	}
}

// ConvertDialect writes every entry of f in f's dialect when f is written
// (see parseMixed): in a ralph file, an entry whose ID ralph does not read
// gets a ralph ID derived from its own, kept as its Source-ID (an entry of
// orch's dialect in a ralph file is rendered as ralph's anyway, as one of
// ralph's in an orch file is rendered as orch's). It returns how many
// entries it gave a new ID.
func (f *File) ConvertDialect() int {
	if f.Dialect != Ralph {
		return 0
	}
	n := 0
	var taken map[string]bool
	for i := range f.Entries {
		e := &f.Entries[i]
		if validRalphID(e.ID) {
			continue
		}
		if taken == nil {
			taken = make(map[string]bool, len(f.Entries))
			for k := range f.Entries {
				taken[f.Entries[k].ID] = true
			}
		}
		e.ToRalph(ralphIDFrom(e, taken))
		n++
	}
	return n
}

// ToRalph gives an entry of another dialect the ID id for a ralph file: its
// old ID (if any) is kept as its Source-ID, an entry without a type becomes
// context (a ralph entry is in one of ralph's sections).
func (e *Entry) ToRalph(id string) {
	if e.ID != "" && e.ID != id && e.Field(SourceIDField) == "" && !validRalphID(e.ID) {
		e.SetField(SourceIDField, e.ID)
	}
	e.ID, e.derived, e.ralphAt, e.order = id, false, 0, nil
	if e.Type == "" {
		e.Type = "context"
	}
}

// ralphRefuses tells why an entry cannot go into a ralph-dialect file, or
// nil. Ralph keeps an entry's content, tags and date and nothing else, so
// memsync keeps the rest in tags ("key:…", "session:…", see ralphFields): a
// tag of the entry's own with one of those names would read back as that
// field, and is refused.
func ralphRefuses(e *Entry) error {
	for _, t := range e.Tags {
		if name, _, ok := strings.Cut(t, ":"); ok && reservedTag(name) {
			return &DialectError{Tag: t}
		}
	}
	return nil
}

// DialectError refuses what a ralph-dialect file cannot keep; it is an
// ErrInvalid.
type DialectError struct {
	Tag string // the entry's tag that has the name of one memsync writes
}

func (e *DialectError) Error() string {
	name, _, _ := strings.Cut(e.Tag, ":")
	return fmt.Sprintf("%s: the tag %q: in ralph-orchestrator's dialect, which keeps only an entry's content, tags and date, memsync keeps the entry's %s in a tag %q, so this tag would read back as that", ErrInvalid, e.Tag, name, name+":")
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *DialectError) Unwrap() error { return ErrInvalid }
