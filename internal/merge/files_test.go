package merge

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/memfile"
)

func TestUnmark(t *testing.T) {
	data := "# Memories\n\n## Keep\n- ID: keep\n- Content: k\n\n" +
		"<<<<<<< HEAD\n## Ours\n- ID: ours\n- Content: o\n\n## Both\n- ID: both\n- Content: ours' words\n" +
		"||||||| base\n## Old\n- ID: old\n- Content: gone\n" +
		"=======\n## Theirs\n- ID: theirs\n- Content: t\n\n## Both\n- ID: both\n- Content: their words\n" +
		">>>>>>> side\n\n## Tail\n- ID: tail\n- Content: z\n"
	f, conflicts, ok := Unmark([]byte(data))
	if !ok {
		t.Fatal("not unmarked")
	}
	if got, want := ids(f.Entries), []string{"keep", "ours", "both", "tail", "theirs"}; !slices.Equal(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	if len(conflicts) != 1 || conflicts[0].ID != "both" || conflicts[0].Theirs.Content != "their words" || f.Entries[2].Content != "ours' words" {
		t.Fatalf("conflicts %+v", conflicts)
	}
	if out := f.Render(); memfile.HasConflictMarkers(out) || len(memfile.Parse(out).Problems) > 0 {
		t.Fatalf("rendered with damage:\n%s", out)
	}
	for _, bad := range []string{"no markers\n", "<<<<<<< a\nx\n", "=======\n<<<<<<< a\n>>>>>>> b\n", "<<<<<<< a\n<<<<<<< b\n=======\n>>>>>>> c\n=======\n>>>>>>> d\n"} {
		if _, _, ok := Unmark([]byte(bad)); ok {
			t.Fatalf("unmarked malformed %q", bad)
		}
	}
}

// TestRenderMarkedUnmark: what the merge driver writes for a merge with
// conflicts, Unmark reads back as the merge's result (ours kept), with the
// same conflicts, theirs' versions included; no entry is lost.
func TestRenderMarkedUnmark(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 500 {
		base := randomBase(r)
		a, b := randomState(r, base, "a"), randomState(r, base, "b")
		a.Archive, b.Archive, base.Archive = nil, nil, nil
		m := Merge(base, a, b)
		f := memfile.Parse([]byte(memfile.Header + "\n"))
		f.Entries = m.Active
		out := RenderMarked(f, m.Conflicts)
		if len(m.Conflicts) == 0 {
			if memfile.HasConflictMarkers(out) {
				t.Fatalf("round %d: markers without conflicts", round)
			}
			continue
		}
		g, conflicts, ok := Unmark(out)
		if !ok {
			t.Fatalf("round %d: not unmarked:\n%s", round, out)
		}
		if !slices.Equal(ids(g.Entries), ids(m.Active)) {
			t.Fatalf("round %d: %v, want %v", round, ids(g.Entries), ids(m.Active))
		}
		for i := range g.Entries {
			if !same(&g.Entries[i], &m.Active[i]) {
				t.Fatalf("round %d: entry %s changed", round, g.Entries[i].ID)
			}
		}
		if len(conflicts) != len(m.Conflicts) {
			t.Fatalf("round %d: %d conflicts, want %d", round, len(conflicts), len(m.Conflicts))
		}
		for i, c := range conflicts {
			if c.ID != m.Conflicts[i].ID || !same(&c.Theirs, &m.Conflicts[i].Theirs) {
				t.Fatalf("round %d: conflict %s lost theirs", round, c.ID)
			}
		}
	}
}

func TestLog(t *testing.T) {
	path := t.TempDir() + "/conflicts.json"
	c := Conflict{ID: "abcdef", Ours: entry("abcdef", "ours\nline"), Theirs: entry("abcdef", "theirs")}
	if err := Log(path, "test", []Conflict{c, c}); err != nil {
		t.Fatal(err)
	}
	rs, err := LoadLog(path)
	if err != nil || len(rs) != 1 {
		t.Fatalf("%+v %v", rs, err)
	}
	_, o, th := rs[0].Versions()
	if !same(&o, &c.Ours) || !same(&th, &c.Theirs) || !strings.Contains(rs[0].Ours, "ours") {
		t.Fatalf("versions %+v %+v", o, th)
	}
	if i, err := Find(rs, "abcd"); err != nil || i != 0 {
		t.Fatal(i, err)
	}
	if err := SaveLog(path, Forget(rs, "abcdef")); err != nil {
		t.Fatal(err)
	}
	if rs, err := LoadLog(path); err != nil || len(rs) != 0 {
		t.Fatalf("%+v %v", rs, err)
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
		o, th, ok := memfile.SplitConflictSides(data)
		g, conflicts, unmarked := Unmark(data)
		if unmarked != ok {
			t.Fatalf("Unmark says %v, SplitConflictSides %v", unmarked, ok)
		}
		if !ok {
			return
		}
		kept := map[string]bool{}
		for _, e := range g.Entries {
			kept[e.ID] = true
		}
		for _, side := range [][]byte{o, th} {
			for _, e := range memfile.Parse(side).Entries {
				if !kept[e.ID] {
					t.Fatalf("entry %s lost\ninput: %q", e.ID, data)
				}
			}
		}
		for _, c := range conflicts {
			if !kept[c.ID] {
				t.Fatalf("conflict %s not kept\ninput: %q", c.ID, data)
			}
		}
		out := g.Render()
		if memfile.HasConflictMarkers(out) {
			t.Fatalf("rendered with conflict markers\ninput: %q\nout: %q", data, out)
		}
		// (ralph's dialect writes entries by section: the order may change)
		got, want := ids(memfile.Parse(out).Entries), ids(g.Entries)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("read back %v, want %v\ninput: %q\nout: %q", got, want, data, out)
		}
	})
}
