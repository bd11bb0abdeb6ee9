package merge

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"

	"github.com/memsync/memsync/memfile"
)

// contents is the entries of a State by ID (active and archive).
func contents(s State) map[string]string {
	m := map[string]string{}
	for _, list := range [][]memfile.Entry{s.Active, s.Archive} {
		for _, e := range list {
			m[e.ID] = e.Content
		}
	}
	return m
}

// TestMergeClonesOnePerFact: random memories of two clones that grew from
// one base, with collisions made on purpose (one ID for two different
// entries added on both sides, ralph's and memsync's IDs; one fact added on
// both sides under two IDs). Whichever side merges, the result is the same;
// every fact either side added is in it exactly once; no ID is in it twice;
// a renamed ralph ID keeps ralph's shape; an alias resolves.
func TestMergeClonesOnePerFact(t *testing.T) {
	ralphID := regexp.MustCompile(`^mem-\d+-[0-9a-f]{4}$`)
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 19))
		entry := func(id, content string) memfile.Entry {
			return memfile.Entry{ID: id, Title: content, Date: fmt.Sprintf("2026-01-%02d", 1+r.IntN(28)), Content: content}
		}
		var base State
		for i := range r.IntN(5) {
			base.Active = append(base.Active, entry(fmt.Sprintf("base%02d", i), fmt.Sprintf("base fact %d", i)))
		}
		ours := State{Active: append([]memfile.Entry(nil), base.Active...)}
		theirs := State{Active: append([]memfile.Entry(nil), base.Active...)}
		facts := map[string]bool{}
		for _, e := range base.Active {
			facts[e.Content] = true
		}
		for i := range 1 + r.IntN(6) {
			switch r.IntN(4) {
			case 0: // one ID, two different entries (ralph's ID shape)
				id := fmt.Sprintf("mem-17672256%02d-%04x", i, r.IntN(1<<16))
				a, b := fmt.Sprintf("ours %d/%d", seed, i), fmt.Sprintf("theirs %d/%d", seed, i)
				ours.Active, theirs.Active = append(ours.Active, entry(id, a)), append(theirs.Active, entry(id, b))
				facts[a], facts[b] = true, true
			case 1: // one ID, two different entries (memsync's ID shape)
				id := memfile.NewID()
				a, b := fmt.Sprintf("ours %d/%d", seed, i), fmt.Sprintf("theirs %d/%d", seed, i)
				ours.Active, theirs.Active = append(ours.Active, entry(id, a)), append(theirs.Active, entry(id, b))
				facts[a], facts[b] = true, true
			case 2: // one fact, two IDs
				c := fmt.Sprintf("both learned %d/%d", seed, i)
				ours.Active, theirs.Active = append(ours.Active, entry(memfile.NewID(), c)), append(theirs.Active, entry(memfile.NewID(), c))
				facts[c] = true
			case 3: // a fact of one side only
				c := fmt.Sprintf("one side %d/%d", seed, i)
				if r.IntN(2) == 0 {
					ours.Active = append(ours.Active, entry(memfile.NewID(), c))
				} else {
					theirs.Active = append(theirs.Active, entry(memfile.NewID(), c))
				}
				facts[c] = true
			}
		}
		r.Shuffle(len(theirs.Active), func(i, j int) { theirs.Active[i], theirs.Active[j] = theirs.Active[j], theirs.Active[i] })

		ab, ba := Clones(base, ours, theirs), Clones(base, theirs, ours)
		x, y := contents(ab.State), contents(ba.State)
		if fmt.Sprint(x) != fmt.Sprint(y) {
			t.Fatalf("seed %d: the two sides merge differently:\n%v\n%v", seed, x, y)
		}
		if n := len(ab.Active) + len(ab.Archive); n != len(x) {
			t.Fatalf("seed %d: an ID twice in %d entries: %v", seed, n, x)
		}
		seen := map[string]int{}
		for id, c := range x {
			seen[c]++
			if len(id) > 4 && id[:4] == "mem-" && !ralphID.MatchString(id) {
				t.Errorf("seed %d: renamed ralph ID %q lost ralph's shape", seed, id)
			}
		}
		for c := range facts {
			if seen[c] != 1 {
				t.Fatalf("seed %d: fact %q is there %d times: %v", seed, c, seen[c], x)
			}
		}
		if len(ab.Conflicts) != 0 {
			t.Fatalf("seed %d: conflicts %+v", seed, ab.Conflicts)
		}
		f := &memfile.File{Entries: ab.Active}
		for _, e := range ab.Active {
			for _, al := range e.Extra {
				if al.Key != memfile.AliasField {
					continue
				}
				if i, err := f.Find(al.Value); err != nil || f.Entries[i].ID != e.ID {
					t.Fatalf("seed %d: alias %s does not resolve to %s: %v", seed, al.Value, e.ID, err)
				}
			}
		}
	}
}

// TestMergeClonesFollowsTheDuplicateRule: two clones' merge keeps one entry
// per fact by the rule add follows (memfile.Dups): content the same with
// whitespace and case folded is one fact; two sessions' entries stay apart.
func TestMergeClonesFollowsTheDuplicateRule(t *testing.T) {
	withSession := func(id, content, session string) memfile.Entry {
		e := memfile.Entry{ID: id, Title: id, Date: "2026-01-02", Content: content}
		if session != "" {
			e.SetField("Session", session)
		}
		return e
	}
	ours := State{Active: []memfile.Entry{
		withSession("o1", "Run the linter first", ""),
		withSession("o2", "keep logs short", "s1"),
	}}
	theirs := State{Active: []memfile.Entry{
		withSession("t1", "run  the LINTER first\n", ""),
		withSession("t2", "keep logs short", "s2"),
	}}
	for _, r := range []Result{Clones(State{}, ours, theirs), Clones(State{}, theirs, ours)} {
		got := contents(r.State)
		if len(got) != 3 || got["o1"] == "" || got["o2"] == "" || got["t2"] == "" {
			t.Fatalf("merged: %v; want o1 (t1 its alias), o2 and t2", got)
		}
		if len(r.Notes) != 1 {
			t.Fatalf("notes: %q", r.Notes)
		}
	}
}

// order is a State's IDs in order, the active file's, then "|", then the
// archive's.
func order(s State) []string {
	var out []string
	for _, e := range s.Active {
		out = append(out, e.ID)
	}
	out = append(out, "|")
	for _, e := range s.Archive {
		out = append(out, e.ID)
	}
	return out
}

// TestMergeClonesOrderConverges: two clones that each append runs of
// entries, archive some, delete some, and merge each other's latest state
// in turn (as syncs do) write their entries in one order: whichever side
// merges, the same order (Clones(b, o, t) and Clones(b, t, o)), and the
// two clones hold what both hold in one order, but for entries added or
// moved in the last rounds: their files differ where one holds what the
// other lacks, and their snapshots share the chunks in between. Under the
// order of Merge (ours first) they drift apart for good.
func TestMergeClonesOrderConverges(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 25))
		n := 0
		changed := map[string]int{} // the round each entry was added or last moved in
		add := func(s *State, round int) {
			for range 1 + r.IntN(4) {
				n++
				e := memfile.Entry{ID: fmt.Sprintf("e%04d-%x", n, r.IntN(1<<16)), Date: fmt.Sprintf("2026-02-%02d", 1+round/3), Content: fmt.Sprintf("fact %d", n)}
				s.Active, changed[e.ID] = append(s.Active, e), round
			}
			if len(s.Active) > 6 && r.IntN(3) == 0 { // gc: some of the oldest to the archive, in the order of their last access
				old := slices.Clone(s.Active[:4])
				r.Shuffle(len(old), func(i, j int) { old[i], old[j] = old[j], old[i] })
				moved := old[:1+r.IntN(3)]
				for _, e := range moved {
					changed[e.ID] = round
				}
				s.Archive = append(s.Archive, moved...)
				s.Active = slices.DeleteFunc(s.Active, func(e memfile.Entry) bool {
					return slices.ContainsFunc(moved, func(m memfile.Entry) bool { return m.ID == e.ID })
				})
			}
			if len(s.Active) > 3 && r.IntN(5) == 0 { // a delete
				i := r.IntN(len(s.Active))
				s.Active = append(s.Active[:i:i], s.Active[i+1:]...)
			}
		}
		var a, b State // the clones' memories
		for round := range 12 {
			side, other := &a, &b
			if round%2 == 1 {
				side, other = &b, &a
			}
			// The merge base: this side's state before its adds, which the
			// other merged in its last round.
			base := State{Active: slices.Clone(side.Active), Archive: slices.Clone(side.Archive)}
			add(side, round)
			got := Clones(base, *side, *other)
			swapped := Clones(base, *other, *side)
			if g, s := fmt.Sprint(order(got.State)), fmt.Sprint(order(swapped.State)); g != s {
				t.Fatalf("seed %d round %d: the order depends on the side merging:\n%s\n%s", seed, round, g, s)
			}
			*side = got.State
			// The clones hold what both hold in one order, but for entries
			// added or moved in the last rounds.
			for _, pair := range [][2][]memfile.Entry{{a.Active, b.Active}, {a.Archive, b.Archive}} {
				common := func(x, y []memfile.Entry) []string {
					in := map[string]bool{}
					for _, e := range y {
						in[e.ID] = true
					}
					var out []string
					for _, e := range x {
						if in[e.ID] {
							out = append(out, e.ID)
						}
					}
					return out
				}
				x, y := common(pair[0], pair[1]), common(pair[1], pair[0])
				for i := range x {
					if x[i] != y[i] {
						if min(changed[x[i]], changed[y[i]]) < round-3 {
							t.Fatalf("seed %d round %d: the clones hold entries in two orders from %s (changed in round %d) and %s (round %d) on:\n%v\n%v", seed, round, x[i], changed[x[i]], y[i], changed[y[i]], x, y)
						}
						break
					}
				}
			}
		}
	}
}
