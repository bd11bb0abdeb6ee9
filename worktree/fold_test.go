package worktree

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/memsync/memsync/internal/provenance"
	"github.com/memsync/memsync/memfile"
)

// TestUnionProperties: for random memories and copies (shared entries,
// entries only on one side, entries without a stored ID, repeated text),
// union keeps the memory's entries in order, adds every entry only in the
// copy once, in the copy's order, and adds nothing when run again.
func TestUnionProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	render := func(ids []int, withID bool) []byte {
		b := []byte(memfile.Header + "\n")
		for i, id := range ids {
			if i > 0 {
				b = append(b, '\n')
			}
			b = append(b, fmt.Sprintf("## Pattern: entry %d\n- Tags: t\n", id%7)...)
			if withID {
				b = append(b, fmt.Sprintf("- ID: id%04d\n", id)...)
			}
			b = append(b, fmt.Sprintf("- Content: text of %d\n", id)...)
		}
		return b
	}
	for range 300 {
		withID := rng.IntN(2) == 0
		var mine, theirs []int
		for id := range 30 {
			switch rng.IntN(4) {
			case 0:
				mine = append(mine, id)
			case 1:
				theirs = append(theirs, id)
			case 2:
				mine, theirs = append(mine, id), append(theirs, id)
			}
		}
		rng.Shuffle(len(theirs), func(i, j int) { theirs[i], theirs[j] = theirs[j], theirs[i] })
		dst, src := memfile.Parse(render(mine, withID)), memfile.Parse(render(theirs, withID))
		before := slices.Clone(dst.Entries)
		want := 0
		for _, id := range theirs {
			if !slices.Contains(mine, id) {
				want++
			}
		}
		if n := union(dst, src, nil, provenance.Info{}); n != want {
			t.Fatalf("withID=%v: added %d, want %d", withID, n, want)
		}
		// Round trip through the file, as Fold does, then check.
		got := memfile.Parse(dst.Render())
		if len(got.Problems) > 0 {
			t.Fatalf("problems: %v", got.Problems)
		}
		var contents []string
		for _, e := range got.Entries {
			contents = append(contents, e.Content)
		}
		var expect []string
		for _, e := range before {
			expect = append(expect, e.Content)
		}
		for _, id := range theirs {
			if !slices.Contains(mine, id) {
				expect = append(expect, fmt.Sprintf("text of %d", id))
			}
		}
		if !slices.Equal(contents, expect) {
			t.Fatalf("withID=%v mine=%v theirs=%v:\n got %q\nwant %q", withID, mine, theirs, contents, expect)
		}
		if n := union(got, memfile.Parse(render(theirs, withID)), nil, provenance.Info{}); n != 0 {
			t.Fatalf("second union added %d", n)
		}
	}
}

// The fold follows the duplicate rule add follows (memfile.Dups): an entry
// of the copy whose content a stored entry in its session's view holds
// (whitespace and case folded) is not added again; another session's is.
func TestUnionFollowsTheDuplicateRule(t *testing.T) {
	stored := memfile.Parse([]byte(memfile.Header + "\n"))
	e := memfile.Entry{ID: "a", Title: "a", Content: "Run the linter first"}
	e.SetField("Session", "s1")
	stored.Entries = append(stored.Entries, e)
	src := &memfile.File{}
	for i, session := range []string{"s1", "", "s2"} {
		c := memfile.Entry{ID: fmt.Sprint("c", i), Title: "c", Content: "run  the LINTER first"}
		c.SetField("Session", session)
		src.Entries = append(src.Entries, c)
	}
	dst := &memfile.File{Entries: slices.Clone(stored.Entries)}
	if n := union(dst, src, []*memfile.File{stored}, provenance.Info{}); n != 1 || dst.Entries[len(dst.Entries)-1].ID != "c2" {
		t.Fatalf("added %d: %+v; want only s2's copy", n, dst.Entries)
	}
}
