package memfile

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
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
// ralph IDs), and each entry whose ID an earlier entry already has gets a new
// one (returned, for a warning). After it, Render(Parse(Render())) is Render().
func (f *File) Normalize() []Renamed {
	for _, p := range f.Problems {
		if IsDialectProblem(p) {
			f.ConvertDialect()
			break
		}
	}
	dups := DuplicateIDs(f)
	if len(dups) == 0 {
		return nil
	}
	taken := make(map[string]bool, len(f.Entries))
	for i := range f.Entries {
		taken[f.Entries[i].ID] = true
	}
	out := make([]Renamed, 0, len(dups))
	for _, i := range dups {
		e := &f.Entries[i]
		r := Renamed{Line: e.Line, Heading: e.Heading(), Old: e.ID}
		e.ID = freshID(e, f.Dialect, taken)
		e.derived = false
		r.New = e.ID
		out = append(out, r)
	}
	return out
}

// freshID is a new ID for e, not in taken (which it joins), derived from
// e's old ID and text; in ralph's dialect it keeps ralph's "mem-<unix>-<hex>" form.
func freshID(e *Entry, d Dialect, taken map[string]bool) string { return FreshID(e, d, taken) }

// FreshID is a new ID for e that taken lacks (and adds it there), derived
// from e's ID, title and content, so that two processes renaming the same
// entry against the same taken set agree; in ralph's dialect it keeps
// ralph's mem-<unix>-<4 hex> shape and e's time.
func FreshID(e *Entry, d Dialect, taken map[string]bool) string {
	seed := e.ID + "\x00" + e.Title + "\x00" + e.Content
	for n := 1; ; n++ {
		id := deriveID(seed, n)
		if d == Ralph {
			unix := strings.TrimPrefix(e.ID, "mem-")
			if unix, _, _ = strings.Cut(unix, "-"); unix == "" {
				unix = "0"
			}
			sum := sha256.Sum256([]byte(id))
			id = "mem-" + unix + "-" + hex.EncodeToString(sum[:2])
		}
		if !taken[id] {
			taken[id] = true
			return id
		}
	}
}
