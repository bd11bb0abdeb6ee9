package memsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/memsync/memsync/internal/similar"
	"github.com/memsync/memsync/memfile"
)

// ReviewItem is one thing for a person to settle (the JSON of 'memsync
// review --json'; docs/commands.md documents it).
type ReviewItem struct {
	// Kind is stale (the code an entry cites changed), duplicate (entries
	// nearly the same) or unused (not returned by search, show or inject
	// within the TTL window).
	Kind    string  `json:"kind" jsonschema:"stale, duplicate or unused"`
	Entries []Entry `json:"entries"`
	Reason  string  `json:"reason" jsonschema:"why it is in the queue"`
	// Commands settle it, each on its own (pick one).
	Commands []string `json:"commands" jsonschema:"commands that settle it; pick one"`
}

// ReviewResult is the review queue, stale entries first, then groups of
// near-duplicates, then unused entries.
type ReviewResult struct {
	Items []ReviewItem `json:"items"`
}

// Review is one queue for a person tidying the memory: entries whose cited
// code changed (a check runs first where there is a work tree), groups of
// near-duplicates among the active entries (package similar), and entries
// nobody read within the TTL window (gc will archive them); each with the
// commands that settle it. It reads only; nothing counts as accessed.
func (m *Memory) Review(ctx context.Context) (ReviewResult, error) {
	out := ReviewResult{Items: []ReviewItem{}}
	if m.repo != nil && m.repo.WorkTree != "" {
		if _, err := m.Check(ctx, CheckOptions{}); err != nil && !errors.Is(err, ErrNoWorkTree) {
			return out, err
		}
	}
	f, err := m.load(ctx, View{})
	if err != nil {
		return out, err
	}
	rec := m.marks()
	var idx []int // the entries in the session's view
	for i := range f.Entries {
		if m.injectable(&f.Entries[i]) {
			idx = append(idx, i)
		}
	}
	entry := func(i int) Entry {
		xs := []Entry{entryOf(&f.Entries[i], i+1)}
		markStale(rec, xs)
		return xs[0]
	}
	for _, i := range idx {
		if x := entry(i); x.Stale {
			out.Items = append(out.Items, ReviewItem{Kind: "stale", Entries: []Entry{x}, Reason: x.StaleReason, Commands: []string{
				"memsync check --update " + x.ID, "memsync edit " + x.ID, "memsync add CONTENT --supersedes " + x.ID, "memsync delete " + x.ID}})
		}
	}
	for _, g := range m.nearGroups(f, idx) {
		item := ReviewItem{Kind: "duplicate", Reason: "nearly the same content"}
		for _, i := range g {
			item.Entries = append(item.Entries, entry(i))
		}
		keep, drop := item.Entries[len(item.Entries)-1].ID, item.Entries[0].ID // the newest stays
		item.Commands = []string{"memsync delete " + drop, "memsync add CONTENT --supersedes " + drop + " (one entry saying both)", "memsync edit " + keep}
		out.Items = append(out.Items, item)
	}
	ttl := m.limits().TTL
	if ttl > 0 {
		last := m.store.LastAccess()
		since := time.Now().Add(-ttl)
		for _, i := range idx {
			e := &f.Entries[i]
			if t, ok := last[e.ID]; (ok && t.After(since)) || !datedBefore(e.Date, since) {
				continue
			}
			x := entry(i)
			out.Items = append(out.Items, ReviewItem{Kind: "unused", Entries: []Entry{x},
				Reason:   fmt.Sprintf("not returned by search, show or inject in %d days; gc will archive it", days(ttl)),
				Commands: []string{"memsync archive " + x.ID, "memsync delete " + x.ID, "memsync show " + x.ID + " (keeps it)"}})
		}
	}
	return out, nil
}

// datedBefore tells an entry dated ("2026-01-26…") before t.
func datedBefore(date string, t time.Time) bool {
	if len(date) < 10 {
		return false
	}
	d, err := time.Parse("2006-01-02", date[:10])
	return err == nil && d.Before(t)
}

// maxReviewPairs bounds the pairs of entries Review compares.
const maxReviewPairs = 4 << 20

// nearGroups are the groups of near-duplicates among the entries idx
// names (each group in file order; pairs linked through a third entry are
// one group).
func (m *Memory) nearGroups(f *memfile.File, idx []int) [][]int {
	sets := m.sets(f)
	parent := map[int]int{}
	var find func(int) int
	find = func(i int) int {
		if p, ok := parent[i]; ok && p != i {
			r := find(p)
			parent[i] = r
			return r
		}
		return i
	}
	pairs := 0
	for a := 0; a < len(idx) && pairs < maxReviewPairs; a++ {
		for b := a + 1; b < len(idx); b++ {
			pairs++
			if similar.Near(sets[idx[a]], sets[idx[b]]) {
				ra, rb := find(idx[a]), find(idx[b])
				if ra != rb {
					parent[max(ra, rb)] = min(ra, rb)
				}
			}
		}
	}
	groups := map[int][]int{}
	for i := range parent {
		r := find(i)
		groups[r] = append(groups[r], i)
	}
	var out [][]int
	for r, g := range groups {
		g = append(g, r)
		slices.Sort(g)
		out = append(out, slices.Compact(g))
	}
	slices.SortFunc(out, func(a, b []int) int { return a[0] - b[0] })
	return out
}
