package memfile

import (
	"crypto/sha256"
	"encoding/hex"
)

// DuplicateIDs returns the indexes of the entries whose ID an earlier entry
// of f already has (doctor reports them; a rewrite gives them new IDs).
func DuplicateIDs(f *File) []int {
	var dups []int
	seen := make(map[string]bool, len(f.Entries))
	for i := range f.Entries {
		if seen[f.Entries[i].ID] {
			dups = append(dups, i)
		}
		seen[f.Entries[i].ID] = true
	}
	return dups
}

// Renamed is an entry Normalize gave a new ID: it repeated the ID of an
// earlier entry.
type Renamed struct {
	Line     int
	Heading  string
	Old, New string
}

// Normalize does to f what every rewrite does before it writes: entries of
// the other dialect are converted to the file's (a ralph file's entries get
// ralph IDs), and of the entries that share an ID all but one get a new one
// (returned, for a warning), keeping the old as an Alias. In a ralph file the
// one that keeps the ID is the one ralph made, if any: ralph knows its entry
// by that ID alone. After it, Render(Parse(Render())) is Render().
func (f *File) Normalize() []Renamed {
	for _, p := range f.Problems {
		if IsDialectProblem(p) {
			f.ConvertDialect()
			break
		}
	}
	if len(DuplicateIDs(f)) == 0 {
		return nil
	}
	taken := make(map[string]bool, len(f.Entries))
	keeper := map[string]int{} // ID -> the entry that keeps it
	for i := range f.Entries {
		id := f.Entries[i].ID
		taken[id] = true
		if k, ok := keeper[id]; !ok || f.Dialect == Ralph && !ralphMade(&f.Entries[k]) && ralphMade(&f.Entries[i]) {
			keeper[id] = i
		}
	}
	var out []Renamed
	for i := range f.Entries {
		e := &f.Entries[i]
		if keeper[e.ID] == i {
			continue
		}
		r := Renamed{Line: e.Line, Heading: e.Heading(), Old: e.ID}
		if !e.derived { // an ID given out once keeps naming the entry (Find)
			e.Extra = append(e.Extra, Field{Key: AliasField, Value: e.ID})
		}
		e.ID = freshID(e, f.Dialect, taken)
		e.derived = false
		r.New = e.ID
		out = append(out, r)
	}
	return out
}

// ralphMade tells an entry of a ralph file that ralph itself may have
// written: an ID of ralph's form, not memsync's, and no field memsync keeps
// as a tag (provenance, a key...).
func ralphMade(e *Entry) bool {
	if !validRalphID(e.ID) || isOwnRalphID(e.ID) {
		return false
	}
	for _, fl := range e.Extra {
		if fl.Key != "" {
			return false
		}
	}
	return true
}

// freshID is a new ID for e, not in taken (which it joins), derived from
// e's old ID and text; in ralph's dialect of memsync's own form (ownRalphID).
func freshID(e *Entry, d Dialect, taken map[string]bool) string { return FreshID(e, d, taken) }

// FreshID is a new ID for e that taken lacks (and adds it there), derived
// from e's ID, title and content, so that two processes renaming the same
// entry against the same taken set agree; in ralph's dialect it is of
// memsync's own form (ownRalphID, which ralph never makes) with e's time.
func FreshID(e *Entry, d Dialect, taken map[string]bool) string {
	seed := e.ID + "\x00" + e.Title + "\x00" + e.Content
	for n := 1; ; n++ {
		id := deriveID(seed, n)
		if d == Ralph {
			sum := sha256.Sum256([]byte(id))
			id = ownRalphID(ralphUnix(e.ID), hex.EncodeToString(sum[:2]))
		}
		if !taken[id] {
			taken[id] = true
			return id
		}
	}
}
