// Package merge joins two versions of a memory that grew apart from a common
// base, entry by entry (by ID), never line by line: what either side added
// is kept, a deletion on one side wins over an unchanged entry on the other,
// a move to the archive is kept, and an entry edited on both sides gets the
// other side's edit applied as a go-diff patch where it applies cleanly, or
// else is recorded as a conflict with both versions, ours staying live.
package merge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/memsync/memsync/memfile"
)

// State is one version of a memory: its active entries and its archive.
type State struct {
	Active  []memfile.Entry
	Archive []memfile.Entry
}

// Conflict is an entry edited differently on both sides. Ours is what the
// merge keeps; Theirs is kept for inspection. Base is nil when both sides
// added the ID.
type Conflict struct {
	ID     string
	Base   *memfile.Entry
	Ours   memfile.Entry
	Theirs memfile.Entry
	// Before is set for an entry edited on both sides whose edits were
	// merged as text: ours before the merge (Ours is the merged entry). It
	// is kept for a person to review, as a conflict is, though the merge
	// needed no one.
	Before *memfile.Entry
}

// Result is a merged memory.
type Result struct {
	State
	Conflicts []Conflict
	// Merged are the entries edited on both sides whose edits were merged
	// as text (Conflict.Before set), for review.
	Merged []Conflict
	// Notes say, one line each, what the merge did that a person should
	// know: two different entries added under one ID on both sides, one of
	// them renamed; one fact added under two IDs, kept once.
	Notes []string
}

// where an entry is in a State.
type place int

const (
	absent place = iota
	active
	archived
)

type version struct {
	e     *memfile.Entry
	place place
}

func index(s State) map[string]version {
	m := make(map[string]version, len(s.Active)+len(s.Archive))
	for i := range s.Archive {
		m[s.Archive[i].ID] = version{&s.Archive[i], archived}
	}
	for i := range s.Active { // an entry in both files is active (a move cut short)
		m[s.Active[i].ID] = version{&s.Active[i], active}
	}
	return m
}

// Merge joins ours and theirs against base. The result keeps ours' order;
// entries only theirs has follow in theirs' order. An ID both sides added
// with different content is an entry edited on both sides: a conflict.
func Merge(base, ours, theirs State) Result {
	var res Result
	merge(indexOf(base, ours, theirs), ours, theirs, false, &res)
	return res
}

// indexes are a merge's three states by ID.
type indexes struct{ b, o, t map[string]version }

func indexOf(base, ours, theirs State) indexes {
	return indexes{index(base), index(ours), index(theirs)}
}

// Clones is Merge for two clones' memories (a sync), where each side
// adds entries of its own. Two rules make every clone agree on one entry
// per fact, whichever side merges: two different entries added on both
// sides under one ID (ralph draws 16 random bits a second) are told apart,
// the one whose text sorts later getting a new ID (memfile.FreshID, derived
// from it, so every clone picks the same); and one fact added on both sides
// under two IDs is kept once, under the older entry (the earlier date, then
// the smaller ID), the other ID recorded on it as an Alias bullet
// (memfile.AliasField) so references to it still resolve. Notes says so.
//
// The order is the same whichever side merges (interleave): entries both
// sides hold keep ours' order, and what one side alone holds follows the
// entry it follows on that side, the two sides' runs after one entry in
// the order of their first entries' dates, then IDs. So clones that
// exchanged the same entries write the same file, but for what they added
// since, and their snapshots share the chunks (and a merge reads, and
// writes, what changed).
func Clones(base, ours, theirs State) Result {
	var res Result
	ix := indexOf(base, ours, theirs)
	var renamed bool
	if ours, theirs, renamed = apart(ix, ours, theirs, &res); renamed {
		ix.o, ix.t = index(ours), index(theirs)
	}
	merge(ix, ours, theirs, true, &res)
	onePerFact(ix, &res)
	return res
}

// merge decides every ID and lists the result: in ours' order, then
// theirs' for what ours lacks, or with symmetric in interleave's order.
func merge(ix indexes, ours, theirs State, symmetric bool, res *Result) {
	b, o, t := ix.b, ix.o, ix.t
	decided := map[string]version{}
	for _, s := range []State{ours, theirs} {
		for _, list := range [][]memfile.Entry{s.Active, s.Archive} {
			for _, e := range list {
				if _, ok := decided[e.ID]; !ok {
					decided[e.ID] = resolve(e.ID, b[e.ID], o[e.ID], t[e.ID], res)
				}
			}
		}
	}
	emit := func(list []memfile.Entry) {
		for _, e := range list {
			v, ok := decided[e.ID]
			if !ok || v.place == absent {
				continue
			}
			delete(decided, e.ID)
			if v.place == active {
				res.Active = append(res.Active, *v.e)
			} else {
				res.Archive = append(res.Archive, *v.e)
			}
		}
	}
	if symmetric {
		for _, pl := range []place{active, archived} {
			in := func(s State) []*memfile.Entry {
				list := s.Active
				if pl == archived {
					list = s.Archive
				}
				var out []*memfile.Entry
				for i := range list {
					if decided[list[i].ID].place == pl {
						out = append(out, &list[i])
					}
				}
				return out
			}
			var order []memfile.Entry
			old := func(id string) bool { return b[id].place == pl }
			for _, e := range interleave(in(ours), in(theirs), old) {
				order = append(order, *e)
			}
			emit(order)
		}
	}
	emit(ours.Active)
	emit(ours.Archive)
	emit(theirs.Active)
	emit(theirs.Archive)
}

// interleave orders the entries of two lists, each ID once: those base
// and both lists hold (the anchors; old tells them) in ours' order (or
// theirs', where the two differ and theirs' sorts first), each followed by the runs of the other entries right after it on each side (a
// run before the first anchor leads). The two runs at one place go in the
// order of their first entries (runFirst), the second without what the
// first holds, and an entry both sides added goes where it comes first: so
// the order does not depend on which side is ours.
func interleave(ours, theirs []*memfile.Entry, old func(id string) bool) []*memfile.Entry {
	inOurs, inTheirs := map[string]bool{}, map[string]bool{}
	for _, e := range ours {
		inOurs[e.ID] = true
	}
	for _, e := range theirs {
		inTheirs[e.ID] = true
	}
	anchor := func(id string) bool { return inOurs[id] && inTheirs[id] && old(id) }
	// runs cuts a list into the runs of entries between anchors, by the
	// anchor they follow ("" leads).
	runs := func(list []*memfile.Entry) map[string][]*memfile.Entry {
		out := map[string][]*memfile.Entry{}
		after := ""
		for _, e := range list {
			if anchor(e.ID) {
				after = e.ID
				continue
			}
			out[after] = append(out[after], e)
		}
		return out
	}
	ourRuns, theirRuns := runs(ours), runs(theirs)
	out := make([]*memfile.Entry, 0, len(ours)+len(theirs))
	done := map[string]bool{}
	emit := func(run []*memfile.Entry) {
		for _, e := range run {
			if !done[e.ID] {
				done[e.ID] = true
				out = append(out, e)
			}
		}
	}
	place := func(after string) {
		a, b := ourRuns[after], theirRuns[after]
		if runBefore(b, a) {
			a, b = b, a
		}
		emit(a)
		emit(b)
	}
	// The anchors in one order: ours' and theirs' agree unless the two
	// sides moved the same entries in two orders (each one's base has its
	// own); then the order whose first differing ID is smaller.
	walk := ours
	var a, b []string
	for _, e := range ours {
		if anchor(e.ID) {
			a = append(a, e.ID)
		}
	}
	for _, e := range theirs {
		if anchor(e.ID) {
			b = append(b, e.ID)
		}
	}
	if slices.Compare(b, a) < 0 {
		walk = theirs
	}
	place("")
	for _, e := range walk {
		if anchor(e.ID) && !done[e.ID] {
			emit([]*memfile.Entry{e})
			place(e.ID)
		}
	}
	return out
}

// runBefore tells whether run a goes before run b at one place: by their
// first entries (runFirst), and between runs that start alike, by their
// IDs in order; an empty run goes last.
func runBefore(a, b []*memfile.Entry) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i].ID != b[i].ID {
			return runFirst(a[i], b[i])
		}
	}
	return len(a) > len(b)
}

// runFirst tells whether a run starting with a goes before one starting
// with b at the same place: the earlier date, then the smaller ID.
func runFirst(a, b *memfile.Entry) bool {
	if a.Date != b.Date {
		return a.Date < b.Date
	}
	return a.ID < b.ID
}

// apart renames one of each pair of different entries that ours and theirs
// (ix) both added under one ID, in copies of the states (the callers' are
// left alone); false when there was none, and the states are ours and
// theirs.
func apart(ix indexes, ours, theirs State, res *Result) (State, State, bool) {
	b, o, t := ix.b, ix.o, ix.t
	var ids []string
	for id, ov := range o {
		if tv := t[id]; b[id].place == absent && tv.place != absent && !same(ov.e, tv.e) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return ours, theirs, false
	}
	slices.Sort(ids)
	taken := map[string]bool{}
	for _, m := range []map[string]version{b, o, t} {
		for id := range m {
			taken[id] = true
		}
	}
	ours = State{slices.Clone(ours.Active), slices.Clone(ours.Archive)}
	theirs = State{slices.Clone(theirs.Active), slices.Clone(theirs.Archive)}
	rename := func(s State, id string, e *memfile.Entry) {
		d := memfile.Orch
		if strings.HasPrefix(id, "mem-") {
			d = memfile.Ralph
		}
		n := *e
		n.ID = memfile.FreshID(e, d, taken)
		for _, list := range [][]memfile.Entry{s.Active, s.Archive} {
			for i := range list {
				if list[i].ID == id {
					list[i].ID = n.ID
				}
			}
		}
		res.Notes = append(res.Notes, fmt.Sprintf("two entries were added under one ID %s: %q keeps it, %q is now %s", id, e.Title, n.Title, n.ID))
	}
	for _, id := range ids {
		ov, tv := o[id], t[id]
		// The same choice on every clone: the entry whose text sorts later moves.
		if memfile.RenderEntry(ov.e, memfile.Orch) > memfile.RenderEntry(tv.e, memfile.Orch) {
			rename(ours, id, ov.e)
		} else {
			rename(theirs, id, tv.e)
		}
	}
	return ours, theirs, true
}

// onePerFact keeps once each fact that ours and theirs (ix) added under two IDs
// (one entry says what the other does, memfile.Dups; neither ID in base):
// the older entry stays, with the other ID as an Alias bullet.
func onePerFact(ix indexes, res *Result) {
	b, o, t := ix.b, ix.o, ix.t
	added := func(id string) (mine, yours bool) {
		return b[id].place == absent && o[id].place != absent && t[id].place == absent,
			b[id].place == absent && t[id].place != absent && o[id].place == absent
	}
	for _, list := range []*[]memfile.Entry{&res.Active, &res.Archive} {
		var dups memfile.Dups // the entries ours added
		at := map[*memfile.Entry]int{}
		for i := range *list {
			if mine, _ := added((*list)[i].ID); mine {
				dups.Add(&(*list)[i])
				at[&(*list)[i]] = i
			}
		}
		if len(at) == 0 {
			continue
		}
		paired := map[int]bool{}
		var drop []int
		for i := range *list {
			if _, yours := added((*list)[i].ID); !yours {
				continue
			}
			d := dups.Find(&(*list)[i])
			if d == nil || paired[at[d]] {
				continue
			}
			keep, gone := at[d], i
			if older(&(*list)[i], d) {
				keep, gone = i, at[d]
			}
			paired[at[d]] = true
			k, g := &(*list)[keep], (*list)[gone]
			k.Extra = append(k.Extra, memfile.Field{Key: memfile.AliasField, Value: g.ID})
			res.Notes = append(res.Notes, fmt.Sprintf("one fact was added under two IDs: kept as %s (%q), %s is its alias", k.ID, k.Title, g.ID))
			drop = append(drop, gone)
		}
		slices.Sort(drop)
		for n, i := range drop {
			*list = slices.Delete(*list, i-n, i-n+1)
		}
	}
}

// older tells whether a was written before b (its date, then its ID).
func older(a, b *memfile.Entry) bool {
	if a.Date != b.Date {
		return a.Date != "" && (b.Date == "" || a.Date < b.Date)
	}
	return a.ID < b.ID
}

// resolve decides one ID from its base, ours and theirs versions.
func resolve(id string, b, o, t version, res *Result) version {
	switch {
	case o.place == absent && t.place == absent:
		return version{}
	case b.place == absent && o.place == absent: // added by theirs
		return t
	case b.place == absent && t.place == absent: // added by ours
		return o
	case o.place == absent: // deleted by ours: an edit on theirs survives it
		if same(b.e, t.e) {
			return version{}
		}
		res.Notes = append(res.Notes, fmt.Sprintf("%s (%q) was deleted here and edited on the other side: kept, as edited", id, t.e.Title))
		return t
	case t.place == absent:
		if same(b.e, o.e) {
			return version{}
		}
		res.Notes = append(res.Notes, fmt.Sprintf("%s (%q) was deleted on the other side and edited here: kept, as edited", id, o.e.Title))
		return o
	}
	place := o.place
	if o.place == b.place {
		place = t.place // theirs moved it (or nobody did)
	}
	if same(o.e, t.e) {
		return version{o.e, place}
	}
	if b.place == absent { // both added the ID with different content
		res.Conflicts = append(res.Conflicts, Conflict{ID: id, Ours: *o.e, Theirs: *t.e})
		return version{o.e, place}
	}
	switch {
	case same(b.e, t.e):
		return version{o.e, place}
	case same(b.e, o.e):
		return version{t.e, place}
	}
	if merged, ok := mergeEntry(*b.e, *o.e, *t.e); ok {
		res.Notes = append(res.Notes, fmt.Sprintf("%s (%q) was edited on both sides: the edits were merged as text (memsync conflicts shows both)", id, merged.Title))
		res.Merged = append(res.Merged, Conflict{ID: id, Base: b.e, Ours: merged, Theirs: *t.e, Before: o.e})
		return version{&merged, place}
	}
	res.Conflicts = append(res.Conflicts, Conflict{ID: id, Base: b.e, Ours: *o.e, Theirs: *t.e})
	return version{o.e, place}
}

// same tells whether two versions of an entry say the same thing.
func same(a, b *memfile.Entry) bool {
	return a.Type == b.Type && a.Title == b.Title && a.Date == b.Date && a.Content == b.Content &&
		slices.Equal(a.Tags, b.Tags) && slices.Equal(a.Extra, b.Extra)
}

// mergeEntry merges an entry edited on both sides: each field changed on
// one side only takes that side; content changed on both sides gets theirs'
// edit as a patch onto ours. It fails when a field changed differently on
// both sides or a hunk does not apply.
func mergeEntry(b, o, t memfile.Entry) (memfile.Entry, bool) {
	m := o
	ok := true
	pick := func(bv, ov, tv string) string {
		switch {
		case ov == tv || tv == bv:
			return ov
		case ov == bv:
			return tv
		}
		ok = false
		return ov
	}
	// A title that is the content's first line on every side follows the
	// merged content; it is no field of its own (ralph's dialect has none).
	derived := func(e memfile.Entry) bool { return e.Title == memfile.TitleFrom(e.Content) }
	follows := derived(b) && derived(o) && derived(t)
	m.Type = pick(b.Type, o.Type, t.Type)
	if !follows {
		m.Title = pick(b.Title, o.Title, t.Title)
	}
	m.Date = pick(b.Date, o.Date, t.Date)
	switch {
	case slices.Equal(o.Tags, t.Tags) || slices.Equal(t.Tags, b.Tags):
	case slices.Equal(o.Tags, b.Tags):
		m.Tags = t.Tags
	default:
		m.Tags = union(o.Tags, t.Tags) // tags are a set: keep both sides'
	}
	switch {
	case slices.Equal(o.Extra, t.Extra) || slices.Equal(t.Extra, b.Extra):
	case slices.Equal(o.Extra, b.Extra):
		m.Extra = t.Extra
	default:
		ok = false
	}
	if o.Content != t.Content && t.Content != b.Content && o.Content != b.Content {
		content, applied := Patch(b.Content, t.Content, o.Content)
		if !applied {
			return o, false
		}
		m.Content = content
	} else {
		m.Content = pick(b.Content, o.Content, t.Content)
	}
	if follows {
		m.Title = memfile.TitleFrom(m.Content)
	}
	return m, ok
}

// Patch applies the change from base to theirs onto ours with go-diff.
// A hunk may move anywhere in ours, but its context must match almost
// exactly (5% of a long context may differ); applied is false when a hunk
// does not apply.
func Patch(base, theirs, ours string) (merged string, applied bool) {
	dmp := diffmatchpatch.New()
	dmp.MatchThreshold = 0.05
	dmp.MatchDistance = 1 << 20
	dmp.PatchDeleteThreshold = 0.05
	patches := dmp.PatchMake(base, theirs)
	merged, results := dmp.PatchApply(patches, ours)
	for _, ok := range results {
		if !ok {
			return ours, false
		}
	}
	return merged, true
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// Removed counts the entries of ours (active or archived) that are gone
// from the result: the number a mass-deletion guard looks at.
func (r Result) Removed(ours State) int {
	kept := map[string]bool{}
	for _, e := range r.Active {
		kept[e.ID] = true
	}
	for _, e := range r.Archive {
		kept[e.ID] = true
	}
	n := 0
	for _, list := range [][]memfile.Entry{ours.Active, ours.Archive} {
		for _, e := range list {
			if !kept[e.ID] {
				n++
			}
		}
	}
	return n
}

// ErrMassDeletion is returned by Guard.
var ErrMassDeletion = fmt.Errorf("merge would remove more than half of the entries")

// Guard refuses a result that removes more than half of ours' entries.
func (r Result) Guard(ours State) error {
	total := len(ours.Active) + len(ours.Archive)
	if n := r.Removed(ours); total > 0 && 2*n > total {
		return fmt.Errorf("%w (%d of %d)", ErrMassDeletion, n, total)
	}
	return nil
}
