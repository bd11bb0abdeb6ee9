package memfile

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// entryFromFuzz builds a valid entry from arbitrary input: what Validate
// would refuse (newlines in one-line fields, commas in tags, binary text) is
// cleaned out, content is kept as any UTF-8 text (a "\r" ending one of its
// lines is read as part of the line end).
func entryFromFuzz(typ, title, tags, content string) Entry {
	oneLine := func(s string) string {
		s = strings.ToValidUTF8(s, "?")
		s = strings.NewReplacer("\n", " ", "\r", " ", "\x00", " ").Replace(s)
		return s
	}
	e := Entry{ID: NewID(), Type: NormalizeType(strings.ReplaceAll(oneLine(typ), ":", "")), Date: "2026-11-22"}
	if len(e.Type) > 30 {
		e.Type = ""
	}
	e.Title = oneLine(title)
	if e.Type == "" && strings.Contains(e.Title, ": ") {
		e.Type = "note" // an untyped title may not look typed
	}
	for _, t := range strings.Split(strings.ReplaceAll(oneLine(tags), "|", ""), ",") {
		if t = strings.TrimSpace(t); t != "" {
			e.Tags = append(e.Tags, t)
		}
	}
	e.Content = strings.ReplaceAll(strings.ToValidUTF8(content, "?"), "\x00", "")
	// A "\r" that ends a line is part of the line end, in content too.
	e.Content, _ = lineEnds(e.Content)
	return e
}

func sameEntry(a, b Entry) bool {
	return a.ID == b.ID && a.Type == b.Type && a.Title == b.Title && a.Date == b.Date &&
		a.Content == b.Content && len(a.Tags) == len(b.Tags) && (len(a.Tags) == 0 || reflect.DeepEqual(a.Tags, b.Tags))
}

// ralphBlank is content as ralph's dialect gives it back: a line of one
// space is a blank line.
func ralphBlank(content string) string {
	lines := strings.Split(content, "\n")
	for i, l := range lines {
		if l == " " {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// FuzzRoundTrip: parse(render(entries)) == entries for arbitrary content.
func FuzzRoundTrip(f *testing.F) {
	f.Add("pattern", "Error Handling", "a, b", "Always use try-catch")
	f.Add("", "untitled", "", "line1\n\n## heading\n- Tags: x\n<<<<<<< HEAD\n")
	f.Add("fix", " lead", ",,", "\n\n  \n\t")
	f.Add("Architecture Decision", "DB: choice", "x", "- Content: nested\r\nwindows")
	f.Fuzz(func(t *testing.T, typ, title, tags, content string) {
		e := entryFromFuzz(typ, title, tags, content)
		g := entryFromFuzz(content, tags, title, typ)
		file := &File{Preamble: Header + "\n", Entries: []Entry{e, g}}
		out := file.Render()
		back := Parse(out)
		if len(back.Entries) != 2 || !sameEntry(back.Entries[0], e) || !sameEntry(back.Entries[1], g) {
			t.Fatalf("round trip failed\nin:  %#v\n     %#v\nout: %#v\nfile:\n%s", e, g, back.Entries, out)
		}
		// ralph dialect: content lines and tags survive too; the title is
		// the content's first line (ralph has no title line).
		{
			r := &File{Dialect: Ralph, Preamble: Header + "\n", Entries: []Entry{{ID: "mem-1-abcd", Type: "pattern", Tags: e.Tags, Date: e.Date, Content: e.Content}}}
			rb := Parse(r.Render())
			// ralph has no line for a blank content line but ">  " (which it
			// reads as one space): a content line of one space reads back blank.
			want := r.Entries[0]
			want.Content = ralphBlank(want.Content)
			want.Title = TitleFrom(want.Content)
			if len(rb.Entries) != 1 || rb.Entries[0].Content != want.Content || !sameEntry(rb.Entries[0], want) {
				t.Fatalf("ralph round trip failed: %#v\n%s", rb.Entries, r.Render())
			}
		}
	})
}

// FuzzParse: the parser never panics, reports positions inside the file, and
// a rewrite never loses a non-blank line of valid text.
func FuzzParse(f *testing.F) {
	f.Add([]byte(seedExample))
	f.Add([]byte("# Memories\n\n## A\n<<<<<<< HEAD\n- Content: \x00\xff\n"))
	f.Add([]byte("## Patterns\n\n### mem-1-a\n> x\n<!-- tags: a | created: b -->\n"))
	f.Add([]byte("- Content: before any heading\n## \n##\n- :\n- Tags:"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := Parse(data)
		lines := strings.Count(string(data), "\n") + 1
		for _, pr := range p.Problems {
			if pr.Line < 1 || pr.Line > lines {
				t.Fatalf("problem line %d outside 1..%d", pr.Line, lines)
			}
		}
		// Spacing and separators may be normalized ("###  id", "- Tags: ,"),
		// but no word of valid text may go.
		out := string(p.Render())
		words := func(l string) []string {
			return strings.FieldsFunc(l, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		}
		for _, l := range strings.Split(string(data), "\n") {
			if !utf8.ValidString(l) || strings.IndexByte(l, 0) >= 0 {
				continue
			}
			for _, w := range words(l) {
				if !strings.Contains(out, w) {
					t.Fatalf("word %q of line %q lost in rewrite:\n%q\n->\n%q", w, l, data, out)
				}
			}
		}
	})
}
