package memfile

import (
	"slices"
	"strings"
	"testing"
)

// ralphFile is a ralph-dialect memory as ralph's template writes it, with one
// entry.
const ralphFile = "# Memories\n\n## Patterns\n\n### mem-1770245557-134c\n> Kiro image support.\n<!-- tags: kiro | created: 2026-02-04 -->\n\n## Decisions\n\n## Fixes\n\n## Context\n"

// What ralph's dialect has no line for (a type ralph lacks, a title, a key,
// a session, other fields, a blank content line) is written as tags and
// "> " lines ralph keeps, and memsync reads it back (issue 12).
func TestRalphDialectKeepsWhatRalphLacks(t *testing.T) {
	e := Entry{ID: "mem-1770245558-00aa", Type: "note", Title: "Retries, | then --> fail 100%", Date: "2026-02-05",
		Content: "first paragraph\n\nsecond paragraph", Tags: []string{"net"},
		Extra: []Field{{KeyField, "api,auth"}, {"Session", "s9"}, {"Updated", "2026-02-06"}, {"Promoted-From", "abc"}}}
	text := RenderEntry(&e, Ralph)
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n")[1:] {
		if !strings.HasPrefix(l, "> ") && !strings.HasPrefix(l, "<!-- tags: ") {
			t.Fatalf("line %q is not one ralph's parser reads:\n%s", l, text)
		}
	}
	_, meta, _ := strings.Cut(text, "<!--")
	if strings.Count(meta, "|") != 1 || strings.Count(meta, "-->") != 1 {
		t.Fatalf("metadata line ralph cannot parse: %q", meta)
	}
	f := Parse([]byte(strings.Replace(ralphFile, "## Context\n", "## Context\n\n"+text, 1)))
	if len(f.Problems) != 0 || len(f.Entries) != 2 {
		t.Fatalf("problems %v entries %d", f.Problems, len(f.Entries))
	}
	g := f.Entries[1]
	if g.Type != "note" || g.Title != e.Title || g.Content != e.Content || !slices.Equal(g.Tags, []string{"net"}) || g.Date != e.Date {
		t.Fatalf("read back %#v", g)
	}
	for _, fl := range e.Extra {
		if got := g.Field(fl.Key); got != fl.Value {
			t.Errorf("field %s: got %q want %q", fl.Key, got, fl.Value)
		}
	}
	if i, err := f.Find("api,auth"); err != nil || i != 1 {
		t.Fatalf("find by key: %d %v", i, err)
	}
	if Visible(&g, "s8") || !Visible(&g, "s9") {
		t.Fatal("session not read back")
	}
	if out := string(f.Render()); out != string(Parse([]byte(out)).Render()) {
		t.Fatalf("not stable:\n%s", out)
	}
}

// A type ralph has a section for needs no tag; "solution" (in Fixes) does.
func TestRalphTypeTagOnlyWhereTheSectionDiffers(t *testing.T) {
	for typ, want := range map[string]string{"fix": "", "pattern": "", "solution": "type:solution", "note": "type:note"} {
		e := Entry{ID: "mem-1-abcd", Type: typ, Date: "2026-01-01", Content: "x"}
		out := RenderEntry(&e, Ralph)
		if got := strings.Contains(out, "type:"); got != (want != "") || (want != "" && !strings.Contains(out, want)) {
			t.Errorf("%s: %q", typ, out)
		}
	}
}

// A file holding both dialects (ralph inserts its block after the first
// "## Context…" line, inside memsync's entry) is read entry by entry, each
// minority entry reported with its line; a rewrite converts them to the
// file's dialect (issue 12).
func TestMixedDialects(t *testing.T) {
	orch := "# Memories\n\n## Context: first\n- Tags: a\n- Date: 2026-01-01\n- ID: aaaabbbbcccc\n- Content: orch one\n  second line\n\n## Pattern: two\n- Date: 2026-01-02\n- ID: ddddeeeeffff\n- Content: orch two\n"
	ralph := "\n### mem-1770245557-134c\n> ralph one\n<!-- tags: r | created: 2026-02-04 -->\n"
	mixed := strings.Replace(orch, "## Context: first\n", "## Context: first\n"+ralph, 1)
	f := Parse([]byte(mixed))
	if f.Dialect != Orch || len(f.Entries) != 3 {
		t.Fatalf("dialect %v entries %#v", f.Dialect, f.Entries)
	}
	byID := map[string]Entry{}
	for _, e := range f.Entries {
		byID[e.ID] = e
	}
	if byID["aaaabbbbcccc"].Content != "orch one\nsecond line" || byID["mem-1770245557-134c"].Content != "ralph one" || byID["ddddeeeeffff"].Content != "orch two" {
		t.Fatalf("%#v", f.Entries)
	}
	if len(f.Problems) != 1 || f.Problems[0].Line != 5 || !IsDialectProblem(f.Problems[0]) {
		t.Fatalf("problems %v", f.Problems)
	}
	f.ConvertDialect()
	out := Parse(f.Render())
	if out.Dialect != Orch || len(out.Problems) != 0 || len(out.Entries) != 3 || out.Entries[1].Content != "ralph one" || !slices.Equal(out.Entries[1].Tags, []string{"r"}) {
		t.Fatalf("converted:\n%s", f.Render())
	}

	// Mostly ralph: the orch entry is the minority and becomes ralph's.
	rmixed := ralphFile + "\n## Note: by memsync\n- ID: aaaabbbbcccc\n- Content: orch entry\n" + "\n## Fixes\n" + strings.Replace(ralph, "134c", "134e", 1) + strings.Replace(ralph, "134c", "134d", 1)
	f = Parse([]byte(rmixed))
	if f.Dialect != Ralph || len(f.Entries) != 4 || len(f.Problems) != 1 || f.Problems[0].Line != 15 {
		t.Fatalf("dialect %v entries %d problems %v", f.Dialect, len(f.Entries), f.Problems)
	}
	// Parse gives the minority ralph's form (IDs too); nothing is left to convert.
	for _, e := range f.Entries {
		if !validRalphID(e.ID) {
			t.Fatalf("entry %q keeps a non-ralph ID after Parse", e.ID)
		}
	}
	if n := f.ConvertDialect(); n != 0 {
		t.Fatalf("converted again: %d", n)
	}
	r := f.Render()
	g := Parse(r)
	if g.Dialect != Ralph || len(g.Problems) != 0 || len(g.Entries) != 4 || strings.Contains(string(r), "- ID:") {
		t.Fatalf("converted:\n%s\n%v", r, g.Problems)
	}
	if i, err := g.Find("aaaabbbbcccc"); err != nil || g.Entries[i].Content != "orch entry" || g.Entries[i].Type != "note" {
		t.Fatalf("%v %#v", err, g.Entries)
	}
}

// An entry carried into ralph's dialect (by a merge or an import) with
// stray lines that would read back as a heading or content keeps them as
// stray lines, and a heading without an ID gets one: no entry is lost,
// split or left without an ID to name it by.
func TestRalphStrayLinesStayStray(t *testing.T) {
	orch := Parse([]byte("## Note: n\n- ID: n1\n- Content: c\n### not a heading\n> not content\n"))
	if len(orch.Entries) != 1 {
		t.Fatalf("orch entries %+v", orch.Entries)
	}
	f := Parse([]byte(ralphFile))
	f.Entries = append(f.Entries, orch.Entries[0])
	out := f.Render()
	back := Parse(out)
	if got := len(back.Entries); got != 2 {
		t.Fatalf("%d entries read back, want 2:\n%s", got, out)
	}
	for _, l := range []string{"### not a heading", "> not content"} {
		if !strings.Contains(string(out), l) {
			t.Fatalf("stray line %q lost:\n%s", l, out)
		}
	}
	if again := back.Render(); string(again) != string(out) {
		t.Fatalf("second rewrite differs:\n%s\n---\n%s", out, again)
	}

	p := Parse([]byte("## Patterns\n\n### \n> x\n<!-- tags: | created: 2026-01-01 -->\n"))
	if len(p.Entries) != 1 || p.Entries[0].ID == "" {
		t.Fatalf("a heading without an ID: %+v", p.Entries)
	}
	if id := Parse(p.Render()).Entries[0].ID; id != p.Entries[0].ID {
		t.Fatalf("the ID given, %q, reads back as %q", p.Entries[0].ID, id)
	}
}
