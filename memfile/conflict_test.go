package memfile

import (
	"slices"
	"testing"
)

func entryIDs(list []Entry) []string {
	out := make([]string, len(list))
	for i := range list {
		out[i] = list[i].ID
	}
	return out
}

func TestUnmark(t *testing.T) {
	data := "# Memories\n\n## Keep\n- ID: keep\n- Content: k\n\n" +
		"<<<<<<< HEAD\n## Ours\n- ID: ours\n- Content: o\n\n## Both\n- ID: both\n- Content: ours' words\n" +
		"||||||| base\n## Old\n- ID: old\n- Content: gone\n" +
		"=======\n## Theirs\n- ID: theirs\n- Content: t\n\n## Both\n- ID: both\n- Content: their words\n" +
		">>>>>>> side\n\n## Tail\n- ID: tail\n- Content: z\n"
	f, ours, theirs, ok := Unmark([]byte(data))
	if !ok {
		t.Fatal("not unmarked")
	}
	if got, want := entryIDs(f.Entries), []string{"keep", "ours", "both", "tail", "theirs"}; !slices.Equal(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	if len(theirs) != 1 || ours[0].ID != "both" || theirs[0].ID != "both" || theirs[0].Content != "their words" || ours[0].Content != "ours' words" || f.Entries[2].Content != "ours' words" {
		t.Fatalf("conflicts %+v %+v", ours, theirs)
	}
	if out := f.Render(); HasConflictMarkers(out) || len(Parse(out).Problems) > 0 {
		t.Fatalf("rendered with damage:\n%s", out)
	}
	for _, bad := range []string{"no markers\n", "<<<<<<< a\nx\n", "=======\n<<<<<<< a\n>>>>>>> b\n", "<<<<<<< a\n<<<<<<< b\n=======\n>>>>>>> c\n=======\n>>>>>>> d\n"} {
		if _, _, _, ok := Unmark([]byte(bad)); ok {
			t.Fatalf("unmarked malformed %q", bad)
		}
	}
}

// FuzzUnmark: a file with conflict markers, whatever else it holds, is
// merged back without a panic and without losing an entry of either side;
// what it renders holds no conflict markers and reads back as the same
// entries (in the order of its sections).
func FuzzUnmark(f *testing.F) {
	f.Add([]byte("# Memories\n\n<<<<<<< HEAD\n## A\n- ID: a\n- Content: x\n=======\n## A\n- ID: a\n- Content: y\n>>>>>>> b\n"))
	f.Add([]byte("## Patterns\n\n<<<<<<< ours\n### mem-1-abcd\n> x\n<!-- tags: | created: 2026-01-01 -->\n=======\n### mem-1-abcd\n> y\n>>>>>>> theirs\n"))
	f.Add([]byte("<<<<<<< a\n## Note: n\n- Content: <<<<<<< nested\n||||||| base\n## Old\n=======\n>>>>>>> b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, th, ok := splitConflictSides(data)
		g, ours, theirs, unmarked := Unmark(data)
		if unmarked != ok {
			t.Fatalf("Unmark says %v, splitConflictSides %v", unmarked, ok)
		}
		if !ok {
			return
		}
		kept := map[string]bool{}
		for _, e := range g.Entries {
			kept[e.ID] = true
		}
		for _, side := range [][]byte{o, th} {
			for _, e := range Parse(side).Entries {
				if !kept[e.ID] {
					t.Fatalf("entry %s lost\ninput: %q", e.ID, data)
				}
			}
		}
		if len(ours) != len(theirs) {
			t.Fatalf("%d ours, %d theirs\ninput: %q", len(ours), len(theirs), data)
		}
		for i := range theirs {
			if !kept[theirs[i].ID] || ours[i].ID != theirs[i].ID {
				t.Fatalf("conflict %s/%s not kept\ninput: %q", ours[i].ID, theirs[i].ID, data)
			}
		}
		out := g.Render()
		if HasConflictMarkers(out) {
			t.Fatalf("rendered with conflict markers\ninput: %q\nout: %q", data, out)
		}
		// (ralph's dialect writes entries by section: the order may change)
		got, want := entryIDs(Parse(out).Entries), entryIDs(g.Entries)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("read back %v, want %v\ninput: %q\nout: %q", got, want, data, out)
		}
	})
}
