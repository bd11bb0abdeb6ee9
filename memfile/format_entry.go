// Package memfile reads and writes memories.md, the memory file of orch
// (orch's) and of ralph-orchestrator, and keeps it safe on disk: appends and
// atomic rewrites under the one lock (package lock), damage reports with line
// numbers, backups before any rewrite of a damaged file, and a size cap.
//
// The format (Entry, File, Parse, Render, lookup, the two dialects, the
// merge of git conflict markers, the duplicate rule) is in the files named
// format*.go and does no I/O; the Store that keeps the files on disk (its
// lock, rewrites, indexes, gc, moves, import, conflict log) is in store*.go.
package memfile

import (
	"crypto/rand"
	"crypto/sha256"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memsync/memsync/internal/termsafe"
)

// Field is a bullet memsync does not interpret ("- Key: value"), or, with an
// empty Key, a stray line inside an entry. Both are kept on rewrite.
type Field struct {
	Key   string
	Value string
}

// Entry is one memory.
type Entry struct {
	ID      string   // stable ID: the "- ID:" bullet, ralph's "mem-…" heading, or derived from the text
	Type    string   // lower case, e.g. "pattern"; from "## Type: Title" or ralph's section
	Title   string   // heading text after "Type: "
	Tags    []string // from "- Tags: a, b"
	Date    string   // from "- Date:" (YYYY-MM-DD as orch writes it)
	Content string   // from "- Content:"; any text, multi-line included
	Extra   []Field  // other bullets and stray lines, in file order

	// Line is the 1-based line of the entry's heading in the file it was
	// parsed from; 0 for a new entry.
	Line int

	typeRaw string   // the type as spelled in the heading ("Pattern"), to render it back exactly
	typeIn  string   // the type as a user or a ralph tag gave it (SetType), before NormalizeType: scanned for secrets, never written
	order   []string // bullet keys in file order ("" marks a stray line), to render it back exactly
	derived bool     // ID was not in the file but derived from the entry's text
	ralphAt int      // ralph: 1 + the index in File.sections of the heading it was read under, -1 before any heading, 0 if not read from a ralph file
}

// DerivedID reports whether the ID was derived from the entry's text because
// the file holds no ID for it (entries written by orch itself).
func (e *Entry) DerivedID() bool { return e.derived }

// Heading is the entry's heading text as rendered after "## ".
func (e *Entry) Heading() string {
	if e.Type == "" {
		return e.Title
	}
	return e.label() + ": " + e.Title
}

// label is the type as the heading spells it: as read, while it still
// names the type, else typeLabel's.
func (e *Entry) label() string {
	if normalizesTo(e.typeRaw, e.Type) {
		return e.typeRaw
	}
	return typeLabel(e.Type)
}

// SetType sets the type from a user's spelling (NormalizeType), keeping
// that spelling for the secret scan: lower-casing can hide a key
// ("AKIA…") that upper-casing gives back.
func (e *Entry) SetType(t string) {
	e.Type, e.typeIn = NormalizeType(t), t
}

// normalizesTo tells whether NormalizeType(t) == want, without building it.
func normalizesTo(t, want string) bool {
	i, inWord := 0, false
	for _, r := range t {
		if r == '-' || r == '_' || unicode.IsSpace(r) {
			inWord = false
			continue
		}
		if !inWord {
			if i > 0 { // words are joined by one space
				if i >= len(want) || want[i] != ' ' {
					return false
				}
				i++
			}
			inWord = true
		}
		// Invalid UTF-8 decodes as U+FFFD, which strings.ToLower writes.
		var b [utf8.UTFMax]byte
		n := utf8.EncodeRune(b[:], unicode.ToLower(r))
		if len(want)-i < n || want[i:i+n] != string(b[:n]) {
			return false
		}
		i += n
	}
	return i == len(want)
}

// typeLabel is how a type is spelled in a heading: "pattern" -> "Pattern",
// "architecture-decision" -> "Architecture Decision".
func typeLabel(t string) string {
	words := strings.FieldsFunc(t, func(r rune) bool { return r == '-' || r == '_' || unicode.IsSpace(r) })
	for i, w := range words {
		r := []rune(w)
		// Only where lower-casing gives the letter back ("ϖ" upper-cases
		// to "Π", which lower-cases to "π"): the label must parse as t.
		if u := unicode.ToUpper(r[0]); unicode.ToLower(u) == r[0] {
			r[0] = u
		}
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}

// NormalizeType turns a user's -t value or a heading's type into the stored
// form: lower case, single spaces ("Architecture Decision" -> "architecture decision").
func NormalizeType(t string) string {
	return strings.ToLower(strings.Join(strings.FieldsFunc(t, func(r rune) bool { return r == '-' || r == '_' || unicode.IsSpace(r) }), " "))
}

// Preview is a one-line summary of the entry for listings.
func (e *Entry) Preview(n int) string {
	s := e.Title
	if s == "" {
		s = e.Content
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// idAlphabet is lower-case Crockford base32: no i, l, o, u.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// idLen characters of base32 carry 60 bits: among 100k entries the chance of
// any collision is about 4e-9.
const idLen = 12

// NewID returns a fresh random entry ID.
func NewID() string {
	var b [idLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return encodeID(b[:])
}

// deriveID gives an entry without a stored ID one derived from its text, so
// it stays the same while the entry is unchanged. n distinguishes identical
// entries (the n-th occurrence of the same text).
func deriveID(text string, n int) string {
	h := sha256.New()
	h.Write([]byte(text))
	if n > 0 {
		h.Write([]byte{0, byte(n), byte(n >> 8), byte(n >> 16)})
	}
	return encodeID(h.Sum(nil))
}

func encodeID(b []byte) string {
	out := make([]byte, idLen)
	for i := range out {
		out[i] = idAlphabet[b[i]&31]
	}
	return string(out)
}

// Field returns the value of the entry's bullet "- key: value" that memsync
// does not interpret itself (Extra), or "" if there is none.
func (e *Entry) Field(key string) string {
	for _, f := range e.Extra {
		if f.Key == key {
			return f.Value
		}
	}
	return ""
}

// SetField sets such a bullet, adding it if the entry has none.
func (e *Entry) SetField(key, value string) {
	for i := range e.Extra {
		if e.Extra[i].Key == key {
			e.Extra[i].Value = value
			return
		}
	}
	e.Extra = append(e.Extra, Field{key, value})
}

// Fields returns the entry's other bullets by key (nil when it has none),
// for output: what JSON shows as "fields".
func (e *Entry) Fields() map[string]string {
	var m map[string]string
	for _, f := range e.Extra {
		if f.Key != "" {
			if m == nil {
				m = map[string]string{}
			}
			m[f.Key] = f.Value
		}
	}
	return m
}

// TagList is Tags, never nil (JSON shows [] rather than null).
func (e *Entry) TagList() []string {
	if e.Tags == nil {
		return []string{}
	}
	return e.Tags
}

// Control tells a character other than a tab that a terminal or a viewer
// would act on (a terminal escape, a bell, C1, a bidi override, a line
// separator; termsafe.Unsafe): one a one-line field may not hold.
func Control(r rune) bool { return r != '\t' && termsafe.Unsafe(r) }

// TitleFrom makes a heading from content: its first line, shortened,
// without control characters (a terminal escape in pasted output).
func TitleFrom(content string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(content), "\n")
	first = strings.Map(func(r rune) rune {
		if Control(r) {
			return -1
		}
		return r
	}, first)
	first = strings.Join(strings.Fields(first), " ")
	if r := []rune(first); len(r) > 60 {
		first = strings.TrimSpace(string(r[:59])) + "…"
	}
	return first
}
