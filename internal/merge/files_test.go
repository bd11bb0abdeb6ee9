package merge

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/memfile"
)

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
