package merge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/memsync/memsync/memfile"
)

func entry(id, content string) memfile.Entry {
	return memfile.Entry{ID: id, Type: "pattern", Title: id, Content: content, Tags: []string{"t"}}
}

func ids(list []memfile.Entry) []string {
	var out []string
	for _, e := range list {
		out = append(out, e.ID)
	}
	return out
}

func TestRules(t *testing.T) {
	base := State{Active: []memfile.Entry{
		entry("keep", "k"), entry("delOurs", "d"), entry("delTheirsEditOurs", "x"),
		entry("archTheirs", "a"), entry("edit", "line one\nline two\nline three"), entry("clash", "c"),
	}}
	ours := State{Active: []memfile.Entry{
		entry("keep", "k"), entry("delTheirsEditOurs", "x edited"), entry("archTheirs", "a"),
		entry("edit", "line ONE\nline two\nline three"), entry("clash", "ours"), entry("newOurs", "n"),
	}}
	theirs := State{
		Active: []memfile.Entry{entry("keep", "k"), entry("delOurs", "d"),
			entry("edit", "line one\nline two\nline THREE"), entry("clash", "theirs"), entry("newTheirs", "m")},
		Archive: []memfile.Entry{entry("archTheirs", "a")},
	}
	r := Merge(base, ours, theirs)
	if got, want := ids(r.Active), []string{"keep", "delTheirsEditOurs", "edit", "clash", "newOurs", "newTheirs"}; !slices.Equal(got, want) {
		t.Fatalf("active %v, want %v", got, want)
	}
	if got := ids(r.Archive); !slices.Equal(got, []string{"archTheirs"}) {
		t.Fatalf("archive %v", got)
	}
	if c := r.Active[2].Content; c != "line ONE\nline two\nline THREE" {
		t.Fatalf("patched content %q", c)
	}
	if len(r.Conflicts) != 1 || r.Conflicts[0].ID != "clash" || r.Conflicts[0].Theirs.Content != "theirs" || r.Active[3].Content != "ours" {
		t.Fatalf("conflicts %+v", r.Conflicts)
	}
	// What a person should know is said: a text merge of both sides' edits,
	// an edit that kept an entry the other side deleted.
	want := []string{`edit ("edit") was edited on both sides: the edits were merged as text (memsync conflicts shows both)`,
		`delTheirsEditOurs ("delTheirsEditOurs") was deleted on the other side and edited here: kept, as edited`}
	for _, w := range want {
		if !slices.Contains(r.Notes, w) {
			t.Errorf("notes %q lack %q", r.Notes, w)
		}
	}
}

func TestGuard(t *testing.T) {
	base := State{Active: []memfile.Entry{entry("a", "1"), entry("b", "2"), entry("c", "3")}}
	r := Merge(base, base, State{Active: base.Active[:1]})
	if err := r.Guard(base); err == nil {
		t.Fatal("removing 2 of 3 passed the guard")
	}
	r = Merge(base, base, State{Active: base.Active[:2]})
	if err := r.Guard(base); err != nil {
		t.Fatal(err)
	}
}

// randomState derives a version from base by random adds, edits, deletes
// and archive moves.
// randomBase is a base state of 1 to 8 active entries.
func randomBase(r *rand.Rand) State {
	var base State
	for i := range 1 + r.IntN(8) {
		base.Active = append(base.Active, entry(fmt.Sprintf("e%d", i), fmt.Sprintf("content %d", i)))
	}
	return base
}

func randomState(r *rand.Rand, base State, side string) State {
	var s State
	for i, e := range append(slices.Clone(base.Active), base.Archive...) {
		arch := i >= len(base.Active)
		switch r.IntN(6) {
		case 0: // delete
			continue
		case 1: // edit
			e.Content += fmt.Sprintf(" +%s%d", side, r.IntN(3))
		case 2:
			arch = !arch
		case 3:
			e.Tags = append(slices.Clone(e.Tags), side)
		}
		if arch {
			s.Archive = append(s.Archive, e)
		} else {
			s.Active = append(s.Active, e)
		}
	}
	for i := range r.IntN(4) {
		s.Active = append(s.Active, entry(fmt.Sprintf("%s-new-%d", side, i), "new "+side))
	}
	return s
}

func all(s State) map[string]memfile.Entry {
	m := map[string]memfile.Entry{}
	for _, e := range append(slices.Clone(s.Active), s.Archive...) {
		m[e.ID] = e
	}
	return m
}

func TestProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		base := randomBase(r)
		a, b := randomState(r, base, "a"), randomState(r, base, "b")

		// merge(base, x, x) == x
		if m := Merge(base, a, a); !slices.Equal(ids(m.Active), ids(a.Active)) || !slices.Equal(ids(m.Archive), ids(a.Archive)) || len(m.Conflicts) > 0 {
			t.Fatalf("round %d: merge(base, x, x) != x", round)
		} else {
			for i := range m.Active {
				if !same(&m.Active[i], &a.Active[i]) {
					t.Fatalf("round %d: merge(base, x, x) changed %s", round, m.Active[i].ID)
				}
			}
		}
		ab, ba := Merge(base, a, b), Merge(base, b, a)
		abSet, baSet := all(ab.State), all(ba.State)
		if len(abSet) != len(baSet) {
			t.Fatalf("round %d: merge(a,b) has %d entries, merge(b,a) %d", round, len(abSet), len(baSet))
		}
		for id := range abSet {
			if _, ok := baSet[id]; !ok {
				t.Fatalf("round %d: %s only in merge(a,b)", round, id)
			}
		}
		// Nothing present on either side and not deleted on the other is lost.
		baseSet, aSet, bSet := all(base), all(a), all(b)
		for _, side := range []struct{ mine, other map[string]memfile.Entry }{{aSet, bSet}, {bSet, aSet}} {
			for id, e := range side.mine {
				_, inBase := baseSet[id]
				_, inOther := side.other[id]
				deletedByOther := inBase && !inOther
				if deletedByOther && same(&e, ptr(baseSet[id])) {
					continue // unchanged here, deleted there: deleted
				}
				if _, ok := abSet[id]; !ok {
					t.Fatalf("round %d: %s lost", round, id)
				}
			}
		}
	}
}

func ptr(e memfile.Entry) *memfile.Entry { return &e }

func TestPatchIsExact(t *testing.T) {
	if _, ok := Patch("abc def", "abc XYZ", "completely different text"); ok {
		t.Fatal("a patch applied to text it does not match")
	}
	if got, ok := Patch("a\nb\nc", "a\nb\nc\nd", "z\na\nb\nc"); !ok || got != "z\na\nb\nc\nd" {
		t.Fatalf("%q %v", got, ok)
	}
}

// BenchmarkMerge10k: two 10k-entry memories with 1k changes on each side
// (target: under 200 ms).
func BenchmarkMerge10k(b *testing.B) {
	f := memfile.Parse(memfile.GenerateFile(4<<20, 3))
	base := State{Active: f.Entries[:10000]}
	change := func(seed uint64, tag string) State {
		r := rand.New(rand.NewPCG(seed, 9))
		s := State{Active: slices.Clone(base.Active)}
		for range 1000 {
			i := r.IntN(len(s.Active))
			e := s.Active[i]
			e.Content += " " + tag
			s.Active[i] = e
		}
		return s
	}
	ours, theirs := change(1, "ours"), change(2, "theirs")
	b.Run("Merge", func(b *testing.B) {
		for range b.N {
			Merge(base, ours, theirs)
		}
	})
	b.Run("Clones", func(b *testing.B) {
		for range b.N {
			Clones(base, ours, theirs)
		}
	})
}

// TestDerivedTitleFollowsContent: a title that is the content's first line
// (every entry of ralph's dialect, any added without --title) is no field
// of its own: both sides editing that line where the patch applies merge,
// and the title is the merged content's first line.
func TestDerivedTitleFollowsContent(t *testing.T) {
	derived := func(content string) memfile.Entry {
		return memfile.Entry{ID: "mem-1770244838-905b", Type: "fix", Title: memfile.TitleFrom(content), Content: content}
	}
	base := State{Active: []memfile.Entry{derived("Kiro 413 retry needs while loop\nwrapping entire stream logic.")}}
	ours := State{Active: []memfile.Entry{derived("Kiro 413 retries need while loop\nwrapping entire stream logic.")}}
	theirs := State{Active: []memfile.Entry{derived("Kiro 413 retry needs while loop\nwrapping the whole stream logic.")}}
	both := State{Active: []memfile.Entry{derived("Kiro 413 retry needs while loop, always\nwrapping entire stream logic.")}}
	for name, c := range map[string]struct {
		theirs State
		want   string
	}{
		"theirs edits another line": {theirs, "Kiro 413 retries need while loop\nwrapping the whole stream logic."},
		"both edit the first line":  {both, "Kiro 413 retries need while loop, always\nwrapping entire stream logic."},
	} {
		r := Merge(base, ours, c.theirs)
		if len(r.Conflicts) != 0 || len(r.Active) != 1 {
			t.Fatalf("%s: %d conflicts, active %+v", name, len(r.Conflicts), r.Active)
		}
		if e := r.Active[0]; e.Content != c.want || e.Title != memfile.TitleFrom(c.want) {
			t.Errorf("%s: merged %q titled %q", name, e.Content, e.Title)
		}
	}
}
