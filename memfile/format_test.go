package memfile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const seedExample = `# Memories

## Pattern: Error Handling
- Tags: pattern, error-handling
- Date: 2026-01-26
- Content: Always use try-catch blocks for async operations

## Architecture Decision: Database
- Tags: architecture, database
- Date: 2026-01-25
- Content: Use PostgreSQL for relational data, Redis for caching

## Solution: CI Timeout
- Tags: solution, ci
- Date: 2026-01-24
- Content: Increase CI timeout to 600 seconds for integration tests
`

func TestParseSeedExample(t *testing.T) {
	f := Parse([]byte(seedExample))
	if len(f.Problems) != 0 || f.Dialect != Orch {
		t.Fatalf("problems %v dialect %v", f.Problems, f.Dialect)
	}
	if len(f.Entries) != 3 {
		t.Fatalf("entries: %d", len(f.Entries))
	}
	e := f.Entries[1]
	if e.Type != "architecture decision" || e.Title != "Database" || e.Date != "2026-01-25" ||
		!reflect.DeepEqual(e.Tags, []string{"architecture", "database"}) ||
		e.Content != "Use PostgreSQL for relational data, Redis for caching" || e.Line != 8 {
		t.Fatalf("entry: %+v", e)
	}
	if !e.DerivedID() || len(e.ID) != idLen {
		t.Fatalf("derived id %q", e.ID)
	}
	again := Parse([]byte(seedExample))
	for i := range f.Entries {
		if f.Entries[i].ID != again.Entries[i].ID {
			t.Fatal("derived IDs differ between two parses of the same file")
		}
	}
	// The rewrite writes the derived IDs, and they stay the same afterwards.
	out := f.Render()
	if !strings.Contains(string(out), "- ID: "+e.ID+"\n- Content: Use PostgreSQL") {
		t.Fatalf("rendered:\n%s", out)
	}
	g := Parse(out)
	for i := range f.Entries {
		if g.Entries[i].ID != f.Entries[i].ID || g.Entries[i].DerivedID() {
			t.Fatalf("ID changed by rewrite: %q -> %q", f.Entries[i].ID, g.Entries[i].ID)
		}
	}
	if string(g.Render()) != string(out) {
		t.Fatal("second render differs")
	}
}

func TestDerivedIDsOfIdenticalEntriesDiffer(t *testing.T) {
	one := "## Pattern: X\n- Content: same\n"
	f := Parse([]byte("# Memories\n\n" + one + "\n" + one))
	if f.Entries[0].ID == f.Entries[1].ID {
		t.Fatal("identical entries got the same derived ID")
	}
}

func TestMultilineContentRoundTrip(t *testing.T) {
	content := "first\n\n# not a heading\n## not an entry\n- Tags: not tags\n<<<<<<< HEAD\n=======\n>>>>>>> x\n  indented\n\ttab\n\n"
	e := Entry{ID: NewID(), Type: "fix", Title: "T", Tags: []string{"a", "b"}, Date: "2026-01-01", Content: content}
	f := &File{Preamble: Header + "\n", Entries: []Entry{e, {ID: NewID(), Title: "second", Content: "x"}}}
	out := f.Render()
	g := Parse(out)
	if len(g.Problems) != 0 {
		t.Fatalf("problems: %v\n%s", g.Problems, out)
	}
	if len(g.Entries) != 2 || g.Entries[0].Content != content || g.Entries[1].Title != "second" {
		t.Fatalf("round trip:\n%s\n%+v", out, g.Entries)
	}
	if string(g.Render()) != string(out) {
		t.Fatal("render not stable")
	}
}

func TestUnknownBulletsAndStrayLinesKept(t *testing.T) {
	in := "# Memories\n\n## Pattern: A\n- Source: loop-3\n- Tags: x\nfree text line\n- Date: 2026-01-01\n- ID: abcdabcdabcd\n- Content: c\n- Confidence: high\n  second line\n"
	f := Parse([]byte(in))
	e := f.Entries[0]
	if e.ID != "abcdabcdabcd" || len(e.Extra) != 3 || e.Extra[2].Value != "high\nsecond line" {
		t.Fatalf("%+v", e)
	}
	if got := string(f.Render()); got != in {
		t.Fatalf("not kept exactly:\n%s", got)
	}
}

func TestDamageReportedWithLines(t *testing.T) {
	in := "# Memories\n\n## A\n- Content: a\n<<<<<<< HEAD\n## B\n- Content: b\n=======\n## C\n- Content: c\x00\n>>>>>>> branch\n## D\n- Content: \xff\n"
	f := Parse([]byte(in))
	want := map[int]string{5: "conflict", 8: "conflict", 10: "NUL", 11: "conflict", 13: "UTF-8"}
	if len(f.Problems) != len(want) {
		t.Fatalf("problems: %v", f.Problems)
	}
	for _, p := range f.Problems {
		if !strings.Contains(p.Msg, want[p.Line]) {
			t.Fatalf("problem %v, want %q at line %d", p, want[p.Line], p.Line)
		}
	}
	if len(f.Entries) != 4 {
		t.Fatalf("entries %d", len(f.Entries))
	}
	// Nothing is dropped by a rewrite: every line of the input is still there.
	out := string(f.Render())
	for _, l := range strings.Split(strings.TrimSpace(in), "\n") {
		if !strings.Contains(out, l) {
			t.Fatalf("line %q lost:\n%s", l, out)
		}
	}
}

func TestTruncatedLastEntry(t *testing.T) {
	f := Parse([]byte("# Memories\n\n## Pattern: A\n- Content: a\n\n## Fix: B\n- Tags: x, y\n- Conte"))
	if len(f.Entries) != 2 || f.Entries[1].Title != "B" || len(f.Entries[1].Extra) != 1 {
		t.Fatalf("%+v", f.Entries)
	}
	if !strings.Contains(string(f.Render()), "- Conte\n") {
		t.Fatal("truncated line lost")
	}
}

func TestRealRalphFilesRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("testdata/ralph-*.md")
	if len(files) != 3 {
		t.Fatalf("real memory files missing: %v", files)
	}
	counts := map[string]int{"ralph-woocommerce.md": 1, "ralph-pi-mono.md": 5, "ralph-orchestrator.md": 15}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f := Parse(data)
		if f.Dialect != Ralph || len(f.Problems) != 0 {
			t.Fatalf("%s: dialect %v problems %v", p, f.Dialect, f.Problems)
		}
		if want := counts[filepath.Base(p)]; len(f.Entries) != want {
			t.Fatalf("%s: %d entries, want %d", p, len(f.Entries), want)
		}
		for _, e := range f.Entries {
			if !strings.HasPrefix(e.ID, "mem-") || e.Content == "" || e.Date == "" || len(e.Tags) == 0 || e.Type == "" {
				t.Fatalf("%s: %+v", p, e)
			}
		}
		if got := f.Render(); string(got) != string(data) {
			t.Fatalf("%s: render differs:\n%s", p, got)
		}
	}
}

func TestRalphAddGoesToSection(t *testing.T) {
	data, err := os.ReadFile("testdata/ralph-pi-mono.md")
	if err != nil {
		t.Fatal(err)
	}
	f := Parse(data)
	f.Entries = append(f.Entries, Entry{ID: "mem-1-abcd", Type: "decision", Tags: []string{"t"}, Date: "2026-02-05", Content: "new"})
	out := string(f.Render())
	if !strings.Contains(out, "## Decisions\n\n### mem-1-abcd\n> new\n<!-- tags: t | created: 2026-02-05 -->\n\n## Fixes") {
		t.Fatalf("not in its section:\n%s", out)
	}
}

func TestFind(t *testing.T) {
	f := &File{Entries: []Entry{{ID: "abcd1111aaaa"}, {ID: "abcd2222bbbb"}, {ID: "zzzz0000cccc"}}}
	cases := []struct {
		ref  string
		want int
		err  error
	}{
		{"abcd2222bbbb", 1, nil}, {"2", 1, nil}, {"zzzz", 2, nil}, {"abcd", -1, ErrAmbiguous},
		{"4", -1, ErrNotFound}, {"qqqqqq", -1, ErrNotFound}, {"zz", -1, ErrNotFound},
	}
	for _, c := range cases {
		i, err := f.Find(c.ref)
		if i != c.want || (c.err == nil) != (err == nil) || (c.err != nil && !strings.Contains(err.Error(), c.err.Error())) {
			t.Errorf("Find(%q) = %d, %v; want %d, %v", c.ref, i, err, c.want, c.err)
		}
	}
}

// BenchmarkParse10MB: parsing a 10 MB memory (≈30k entries).
func BenchmarkParse10MB(b *testing.B) {
	data := GenerateFile(10<<20, 1)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		if f := Parse(data); len(f.Entries) == 0 {
			b.Fatal("no entries")
		}
	}
}

// BenchmarkRender10MB: rendering a parsed 10 MB memory, as every rewrite does.
func BenchmarkRender10MB(b *testing.B) {
	f := Parse(GenerateFile(10<<20, 1))
	b.SetBytes(int64(len(f.Render())))
	b.ResetTimer()
	for range b.N {
		if len(f.Render()) == 0 {
			b.Fatal("empty render")
		}
	}
}

func TestSplitConflictSides(t *testing.T) {
	data := "# M\n\n<<<<<<< HEAD\nours 1\n||||||| base\nbase\n=======\ntheirs 1\n>>>>>>> b\ncommon\n<<<<<<< HEAD\n=======\ntheirs 2\n>>>>>>> b\n"
	o, th, ok := splitConflictSides([]byte(data))
	if !ok || string(o) != "# M\n\nours 1\ncommon\n" || string(th) != "# M\n\ntheirs 1\ncommon\ntheirs 2\n" {
		t.Fatalf("%v\n%q\n%q", ok, o, th)
	}
	if !HasConflictMarkers([]byte(data)) || HasConflictMarkers([]byte("- Content: a\n  <<<<<<< not at the start\n")) {
		t.Fatal("HasConflictMarkers")
	}
	if _, _, ok := splitConflictSides([]byte("a\n>>>>>>> b\n")); ok {
		t.Fatal("split a malformed conflict")
	}
}

func TestDuplicateIDsReported(t *testing.T) {
	f := Parse([]byte("# Memories\n\n## A\n- ID: aaaabbbbcccc\n- Content: a\n\n## B\n- ID: dddd00000000\n\n## A again\n- ID: aaaabbbbcccc\n- Content: a2\n"))
	if len(f.Problems) != 1 || f.Problems[0].Line != 10 || !strings.Contains(f.Problems[0].Msg, "duplicate entry ID aaaabbbbcccc (first at line 3)") {
		t.Fatalf("%v", f.Problems)
	}
}
