package memfile

import (
	"reflect"
	"strings"
	"testing"
)

// rewriteN parses and renders data n times, as n successive rewrites do.
func rewriteN(data string, n int) []string {
	out := make([]string, n)
	for i := range n {
		data = string(Parse([]byte(data)).Render())
		out[i] = data
	}
	return out
}

// A repeated built-in bullet and a stray line are kept as they are, once,
// however many times the file is rewritten (issue 10, defect 4).
func TestRepeatedBuiltinBulletsStable(t *testing.T) {
	in := "# Memories\n\n## Note: twice\n- Tags: a\n- Tags: b\n- Date: 2026-01-01\n- Date: 2026-01-02\n- ID: aaaabbbbcccc\n- ID: ddddeeeeffff\n" +
		"- Content: first\n- Content: second\n  more of second\nstray line\n- Other: x\n"
	outs := rewriteN(in, 5)
	want := in
	for i, out := range outs {
		if out != want {
			t.Fatalf("rewrite %d changed the file:\n%q\nwant\n%q", i+1, out, want)
		}
	}
	f := Parse([]byte(in))
	e := f.Entries[0]
	if e.ID != "aaaabbbbcccc" || !reflect.DeepEqual(e.Tags, []string{"a"}) || e.Date != "2026-01-01" || e.Content != "first" {
		t.Fatalf("the first bullet of each key is the field: %#v", e)
	}
	wantExtra := []Field{{"Tags", "b"}, {"Date", "2026-01-02"}, {"ID", "ddddeeeeffff"}, {"Content", "second\nmore of second"}, {"", "stray line"}, {"Other", "x"}}
	if !reflect.DeepEqual(e.Extra, wantExtra) {
		t.Fatalf("repeats are extra bullets:\n%#v\nwant\n%#v", e.Extra, wantExtra)
	}
}

// The reproduction of defect 4: two Tags lines and a stray line, no ID (the
// first rewrite adds the derived ID), then stable.
func TestRepeatedTagsReproStable(t *testing.T) {
	in := "## Note: n\n- Tags: a\n- Tags: b\nstray line\n- Content: c\n"
	outs := rewriteN(in, 5)
	for i := 1; i < len(outs); i++ {
		if outs[i] != outs[0] {
			t.Fatalf("rewrite %d differs from the first:\n%q\n%q", i+1, outs[i], outs[0])
		}
	}
	if n := strings.Count(outs[0], "- Tags:"); n != 2 || strings.Contains(outs[0], "- : ") || !strings.Contains(outs[0], "\nstray line\n") {
		t.Fatalf("%d Tags lines, stray line kept as itself?\n%s", n, outs[0])
	}
}

// A field added by code with an empty key (a stray line) is written as the
// line itself, never as "- : line".
func TestStrayFieldAddedByCode(t *testing.T) {
	e := Entry{ID: "aaaabbbbcccc", Title: "t", Content: "c", Extra: []Field{{"", "a stray line"}}}
	if out := RenderEntry(&e, Orch); strings.Contains(out, "- :") || !strings.Contains(out, "\na stray line\n") {
		t.Fatalf("%q", out)
	}
}

// CRLF files: "\r\n" is a line end, nothing keeps a "\r", and a rewrite
// writes the file's own line ends (issue 10, defect 17).
func TestCRLFFile(t *testing.T) {
	lf := "# Memories\n\n## Pattern: Title\n- Tags: a, b\n- Date: 2026-01-26\n- ID: aaaabbbbcccc\n- Content: line one\n  line two\n\n## Note: other\n- ID: ddddeeeeffff\n- Content: x\n"
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	f := Parse([]byte(crlf))
	if len(f.Problems) != 0 || len(f.Entries) != 2 {
		t.Fatalf("problems %v, %d entries", f.Problems, len(f.Entries))
	}
	e := f.Entries[0]
	if e.Title != "Title" || e.Date != "2026-01-26" || e.Content != "line one\nline two" || !reflect.DeepEqual(e.Tags, []string{"a", "b"}) || f.Entries[1].Content != "x" {
		t.Fatalf("\\r kept: %#v", e)
	}
	if f.Preamble != "# Memories\n\n" {
		t.Fatalf("preamble %q", f.Preamble)
	}
	if out := string(f.Render()); out != crlf {
		t.Fatalf("rewrite of a CRLF file:\n%q\nwant\n%q", out, crlf)
	}
	// An entry added by code is written with the file's line ends too.
	f.Entries = append(f.Entries, Entry{ID: "gggghhhhjjjj", Title: "new", Content: "a\nb"})
	if out := string(f.Render()); strings.Count(out, "\n") != strings.Count(out, "\r\n") {
		t.Fatalf("mixed line ends after adding an entry:\n%q", out)
	}
	// Ralph dialect.
	r := "## Patterns\r\n\r\n### mem-1-abcd\r\n> one\r\n>  \r\n> two\r\n<!-- tags: a | created: 2026-01-22 -->\r\n"
	rf := Parse([]byte(r))
	if rf.Dialect != Ralph || len(rf.Entries) != 1 || rf.Entries[0].Content != "one\n\ntwo" || rf.Entries[0].Date != "2026-01-22" || rf.Entries[0].ID != "mem-1-abcd" {
		t.Fatalf("ralph CRLF: %#v", rf.Entries)
	}
	if out := string(rf.Render()); out != r {
		t.Fatalf("ralph CRLF rewrite:\n%q\nwant\n%q", out, r)
	}
}

// A file with mixed line ends is rewritten with the line end of its first
// line, which appends (written with "\n") do not change.
func TestMixedLineEnds(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"# M\r\n\n## A\n- ID: aaaabbbbcccc\r\n- Content: x\n", "# M\r\n\r\n## A\r\n- ID: aaaabbbbcccc\r\n- Content: x\r\n"},
		{"# M\n\r\n## A\r\n- ID: aaaabbbbcccc\r\n- Content: x\r\n", "# M\n\n## A\n- ID: aaaabbbbcccc\n- Content: x\n"},
		{"## A\r\n- ID: aaaabbbbcccc\r\r\n- Content: x\r", "## A\r\n- ID: aaaabbbbcccc\r\n- Content: x\r\n"},
	} {
		f := Parse([]byte(c.in))
		if len(f.Entries) != 1 || f.Entries[0].ID != "aaaabbbbcccc" || f.Entries[0].Content != "x" || f.Entries[0].Title != "A" {
			t.Fatalf("%q: %#v", c.in, f.Entries)
		}
		if out := string(f.Render()); out != c.want {
			t.Fatalf("%q rewritten as\n%q\nwant\n%q", c.in, out, c.want)
		}
	}
}

// A line "=======" is a setext underline, not a conflict marker, unless it
// sits between a "<<<<<<<" line and a ">>>>>>>" line (issue 10, defect 8).
func TestSetextUnderlineIsNotDamage(t *testing.T) {
	underline := "# Memories\n\n## Note: doc\n- ID: aaaabbbbcccc\n- Content: x\nTitle\n=======\n"
	for _, in := range []string{underline, strings.ReplaceAll(underline, "\n", "\r\n"), "=======", "a\n=======\nb\n>>>>>>> theirs\n"} {
		if ps := Parse([]byte(in)).Problems; len(ps) != 0 && in != "a\n=======\nb\n>>>>>>> theirs\n" {
			t.Errorf("%q: problems %v", in, ps)
		}
		if in == "a\n=======\nb\n>>>>>>> theirs\n" {
			continue
		}
		if HasConflictMarkers([]byte(in)) || len(Damage([]byte(in))) != 0 {
			t.Errorf("%q: reported as damage", in)
		}
	}
	// With no "<<<<<<<" before it, only the ">>>>>>>" line is a marker.
	if ps := Damage([]byte("a\n=======\nb\n>>>>>>> theirs\n")); len(ps) != 1 || ps[0].Line != 4 {
		t.Errorf("lone '>>>>>>>': %v", ps)
	}
	// An unclosed conflict: the "<<<<<<<" is damage, the "=======" is not between markers.
	if ps := Damage([]byte("<<<<<<< HEAD\na\n=======\nb\n")); len(ps) != 1 || ps[0].Line != 1 {
		t.Errorf("unclosed conflict: %v", ps)
	}
	// A real conflict: all three markers, in line order, with other damage between.
	conflict := "# M\n=======\n<<<<<<< HEAD\nours\x00\n=======\ntheirs\n>>>>>>> b\n"
	ps := Damage([]byte(conflict))
	var lines []int
	for _, p := range ps {
		lines = append(lines, p.Line)
	}
	if !reflect.DeepEqual(lines, []int{3, 4, 5, 7}) || !strings.Contains(ps[2].Msg, `"======="`) {
		t.Errorf("conflict: %v", ps)
	}
	if !HasConflictMarkers([]byte(conflict)) {
		t.Error("conflict not found")
	}
	// A CRLF conflict is found too.
	if !HasConflictMarkers([]byte(strings.ReplaceAll("a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> x\n", "\n", "\r\n"))) {
		t.Error("CRLF conflict not found")
	}
	// An underline in the common text or on one side does not stop a merge.
	o, th, ok := splitConflictSides([]byte("Title\n=======\n<<<<<<< HEAD\nours\n=======\nSub\n=======\n>>>>>>> b\n"))
	if !ok || string(o) != "Title\n=======\nours\n" || string(th) != "Title\n=======\nSub\n=======\n" {
		t.Fatalf("%v %q %q", ok, o, th)
	}
}

// A ralph file is rewritten in the order it was read: lines outside entries
// stay before the entries of their section, entries before any section stay
// there, and a repeated section keeps its own entries. Moving them changed
// the file on every rewrite, or made it read as the other dialect.
func TestRalphRewriteKeepsOrder(t *testing.T) {
	for _, in := range []string{
		"### mem-0-0a0a\n>  \n<!-- tags:  | created: 2026-01-01 -->\n# stray in entry\n\n## Pattern: Error Handling\n\n- Tags: outside\n\n### mem-1-0a0b\n> x\n<!-- tags:  | created: 2026-01-01 -->\n",
		"## Patterns\n\n## Fixes\n\n### mem-1-0a0b\n> x\n<!-- tags:  | created: 2026-01-01 -->\n\n## Patterns\n\n### mem-2-0a0c\n> y\n<!-- tags:  | created: 2026-01-01 -->\n- x\n",
	} {
		outs := rewriteN(in, 3)
		for i, out := range outs {
			if out != in {
				t.Fatalf("rewrite %d:\n%q\nwant\n%q", i+1, out, in)
			}
		}
	}
}
