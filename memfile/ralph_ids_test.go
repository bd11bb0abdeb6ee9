package memfile

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

// ralphGenerated is ralph-orchestrator's Memory::generate_id (ralph-core
// src/memory.rs) for a clock reading of secs seconds and micros
// microseconds past them: format!("mem-{}-{:04x}", secs, micros % 0x10000).
func ralphGenerated(secs uint64, micros uint32) string {
	return fmt.Sprintf("mem-%d-%04x", secs, micros%0x10000)
}

// ralphReads is ralph's parser's header regex (ralph-core
// src/memory_parser.rs): the ID it reads from a "### " line.
var ralphReads = regexp.MustCompile(`^### (mem-\d+-[0-9a-f]{4})`)

// TestOwnRalphIDsDisjointFromRalphs: no ID ralph's generator can make, at
// any second and microsecond, is of the form memsync gives out in a ralph
// file; and every ID memsync gives out there (an add, a rename apart, a
// conversion from orch's dialect) is one ralph's parser reads whole.
func TestOwnRalphIDsDisjointFromRalphs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Every microsecond of some seconds (ralph's whole range of suffixes),
	// then random clock readings over all of u64's seconds.
	for _, secs := range []uint64{0, 1, 9, 10, 1796661690, 4102444800, 1<<63 - 1, 1<<64 - 1} {
		for micros := uint32(0); micros < 1_000_000; micros++ {
			if id := ralphGenerated(secs, micros); isOwnRalphID(id) {
				t.Fatalf("ralph's generator makes %s, of memsync's own form", id)
			}
		}
	}
	for range 200_000 {
		secs, micros := rng.Uint64()>>rng.IntN(64), rng.Uint32N(1_000_000)
		if id := ralphGenerated(secs, micros); isOwnRalphID(id) || !validRalphID(id) {
			t.Fatalf("ralph's generator makes %s: own form %v, valid %v", id, isOwnRalphID(id), validRalphID(id))
		}
	}

	var ours []string
	for _, now := range []time.Time{time.Unix(0, 0), time.Unix(1796661690, 172_000_000), time.Now(), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)} {
		for range 1000 {
			ours = append(ours, newRalphID(now))
		}
		// The same second, every microsecond: ralph at the same moment
		// never makes the ID memsync has just given out.
		id := newRalphID(now)
		for micros := uint32(0); micros < 1_000_000; micros += 7 {
			if ralphGenerated(uint64(max(now.Unix(), 0)), micros) == id {
				t.Fatalf("ralph makes %s, given out by memsync in the same second", id)
			}
		}
	}
	taken := map[string]bool{}
	for _, e := range []Entry{{ID: "mem-1796661690-4715", Title: "t"}, {ID: "0123456789ab", Date: "2026-12-07"}, {ID: "x", Date: "1900-01-01"}, {ID: "y"}} {
		ours = append(ours, FreshID(&e, Ralph, taken), ralphIDFrom(&e, taken))
	}
	for _, id := range ours {
		if !isOwnRalphID(id) {
			t.Errorf("memsync gave out %s, not of its own form", id)
		}
		if m := ralphReads.FindStringSubmatch("### " + id); m == nil || m[1] != id || !validRalphID(id) {
			t.Errorf("ralph reads %q from memsync's ID %s", m, id)
		}
	}
}

// TestNormalizeRalphCollision: in a ralph file where an entry ralph made and
// one memsync made share an ID (memsync gave out IDs of ralph's form before),
// a rewrite leaves the ID to ralph's entry (ralph knows it by nothing else)
// and gives memsync's a new ID of memsync's form, keeping the old as its
// Alias, in either order in the file.
func TestNormalizeRalphCollision(t *testing.T) {
	const id = "mem-1796661690-4715"
	ralphs := "### " + id + "\n> ralph's fact\n<!-- tags: build | created: 2026-12-07 -->\n"
	ours := "### " + id + "\n> memsync's fact\n<!-- tags: author:t <t@memsync.invalid>, branch:main | created: 2026-12-07 -->\n"
	for name, body := range map[string]string{
		"memsync's first": "# Memories\n\n## Patterns\n\n" + ours + "\n## Decisions\n\n## Fixes\n\n## Context\n\n" + ralphs,
		"ralph's first":   "# Memories\n\n## Patterns\n\n" + ralphs + "\n" + ours + "\n## Decisions\n\n## Fixes\n\n## Context\n",
	} {
		t.Run(name, func(t *testing.T) {
			f := Parse([]byte(body))
			if f.Dialect != Ralph {
				t.Fatalf("dialect %v", f.Dialect)
			}
			renamed := f.Normalize()
			if len(renamed) != 1 || renamed[0].Old != id || !isOwnRalphID(renamed[0].New) {
				t.Fatalf("renamed %+v, want memsync's entry renamed from %s to memsync's form", renamed, id)
			}
			g := Parse(f.Render())
			if len(DuplicateIDs(g)) != 0 {
				t.Fatalf("duplicate IDs after the rewrite:\n%s", f.Render())
			}
			for ref, want := range map[string]string{id: "ralph's fact", renamed[0].New: "memsync's fact"} {
				i, err := g.Find(ref)
				if err != nil || g.Entries[i].Content != want {
					t.Errorf("Find(%s) = %d, %v; want the entry %q\n%s", ref, i, err, want, f.Render())
				}
			}
			i, _ := g.Find(renamed[0].New)
			if g.Entries[i].Field(AliasField) != id {
				t.Errorf("memsync's renamed entry has no alias %s:\n%s", id, f.Render())
			}
			if !strings.Contains(string(f.Render()), "alias:"+id) {
				t.Errorf("no alias tag in the file:\n%s", f.Render())
			}
		})
	}
}
