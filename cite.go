package memsync

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/memsync/memsync/internal/cite"
	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/internal/provenance"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/memfile"
)

// Citation is a place in the repository's code an entry is about (docs/keeping-true.md:
// Keeping memory true): a file, optionally lines of it, the commit HEAD
// was at when it was cited and a fingerprint of the cited lines (of the
// file without lines). Check tells whether the code still says the same.
type Citation struct {
	Path        string `json:"path" jsonschema:"the file, relative to the repository's top"`
	Start       int    `json:"start,omitempty" jsonschema:"first cited line (absent: the whole file)"`
	End         int    `json:"end,omitempty" jsonschema:"last cited line"`
	Commit      string `json:"commit,omitempty" jsonschema:"the commit HEAD was at when it was cited"`
	Fingerprint string `json:"fingerprint" jsonschema:"fingerprint of the cited lines (or file)"`
}

// String is the citation as a person writes it: PATH[:LINE[-LINE]].
func (c Citation) String() string { return c.internal().Spec() }

func (c Citation) internal() cite.Citation {
	return cite.Citation{Path: c.Path, Start: c.Start, End: c.End, Commit: c.Commit, Sum: c.Fingerprint}
}

func citationOf(c cite.Citation) Citation {
	return Citation{Path: c.Path, Start: c.Start, End: c.End, Commit: c.Commit, Fingerprint: c.Sum}
}

// citationsOf reads an entry's citations (what of its Cites bullet parses).
func citationsOf(e *memfile.Entry) []Citation {
	v := e.Field(memfile.CitesField)
	if v == "" {
		return nil
	}
	cs, _ := cite.Parse(v)
	out := make([]Citation, len(cs))
	for i, c := range cs {
		out[i] = citationOf(c)
	}
	return out
}

// ErrCitation is wrapped by the error of a citation Add cannot make: a
// malformed PATH[:LINE[-LINE]], a missing file, lines past its end.
var ErrCitation = cite.ErrSpec

// ErrOutside is wrapped by the error of a citation of a file outside the
// repository's work tree (or inside its git dir, or a link that leads out).
var ErrOutside = cite.ErrOutside

// AddOptions are what an add may do besides storing the entry.
type AddOptions struct {
	// Cite are citations as a person writes them, PATH[:LINE[-LINE]]; a
	// relative PATH is relative to Dir.
	Cite []string
	// Dir is the folder relative PATHs start from; "" is the top of the
	// current worktree.
	Dir string
	// NoAutoCite leaves out the automatic citations of the tracked files
	// the content names ("backend/db/pool.go", "pool.go:42").
	NoAutoCite bool
	// Supersedes names an active entry (as Get resolves it) that the new
	// one replaces: it is archived with a Superseded-By bullet naming the
	// new entry, which records Supersedes. Owner and admin only (it
	// archives).
	Supersedes string
}

// AddWith is Add with citations and supersede (AddOptions). An entry
// nearly the same as active ones (package similar) is stored, and Similar
// names them (not the one it supersedes). The citations
// are the ones o names and, unless o.NoAutoCite, those of the tracked
// files the content names; each records HEAD and a fingerprint, in a
// Cites bullet. A bad citation (ErrCitation, ErrOutside) stores nothing.
func (m *Memory) AddWith(ctx context.Context, in Entry, o AddOptions) (Entry, error) {
	if err := m.present(); err != nil { // before the reads that keep caches in the state dir
		return Entry{}, err
	}
	var old *memfile.Entry
	if o.Supersedes != "" {
		var err error
		if old, err = m.supersedable(ctx, o.Supersedes); err != nil {
			return Entry{}, err
		}
	}
	near, err := m.similarTo(ctx, in.Title, in.Content)
	if err != nil {
		return Entry{}, err
	}
	out, err := m.add(ctx, in, func(e *memfile.Entry) error {
		if err := m.cite(e, o); err != nil {
			return err
		}
		if old != nil {
			e.SetField(memfile.SupersedesField, old.ID)
		}
		return nil
	})
	if err == nil && out.Duplicate == "" {
		out.Similar = slices.DeleteFunc(near, func(id string) bool { return old != nil && id == old.ID })
	}
	if err != nil || old == nil {
		return out, err
	}
	if out.Duplicate != "" {
		return out, fmt.Errorf("%w: the content is already stored as %s; %s was not superseded", memfile.ErrInvalid, out.ID, old.ID)
	}
	if err := m.retire(ctx, old.ID, out.ID); err != nil {
		return out, fmt.Errorf("%s is stored, but %s was not archived: %w", out.ID, old.ID, err)
	}
	return out, nil
}

// supersedable is the active entry ref names, when the role may archive it.
func (m *Memory) supersedable(ctx context.Context, ref string) (*memfile.Entry, error) {
	if err := m.allow(policy.OpArchive); err != nil {
		return nil, err
	}
	f, err := m.load(ctx, View{})
	if err != nil {
		return nil, err
	}
	idx, err := f.FindAll([]string{ref})
	if err != nil {
		return nil, fmt.Errorf("supersede %s: %w", ref, err)
	}
	e := f.Entries[idx[0]]
	return &e, nil
}

// retire archives the entry id, recording that newID superseded it.
func (m *Memory) retire(ctx context.Context, id, newID string) error {
	st, err := m.beginWrite(ctx, policy.OpArchive, "supersede")
	if err != nil {
		return err
	}
	_, err = st.Move(store.ToArchive, func(f *memfile.File) ([]int, error) {
		idx, err := f.FindAll([]string{id})
		if err != nil {
			return nil, err
		}
		f.Entries[idx[0]].SetField(memfile.SupersededByField, newID)
		return idx, nil
	})
	return err
}

// cite records the citations o asks for and the automatic ones on e.
func (m *Memory) cite(e *memfile.Entry, o AddOptions) error {
	if m.repo == nil || m.repo.WorkTree == "" {
		if len(o.Cite) > 0 {
			return fmt.Errorf("%w: citations name files of a repository's work tree; the global layer and a bare repository have none", ErrCitation)
		}
		return nil
	}
	mk := &cite.Maker{Top: m.repo.WorkTree, Dir: o.Dir, Commit: e.Field(provenance.CommitField)}
	var cs []cite.Citation
	seen := map[string]bool{}
	for _, spec := range o.Cite {
		c, err := mk.FromSpec(spec)
		if err != nil {
			return err
		}
		if !seen[c.Spec()] {
			seen[c.Spec()] = true
			cs = append(cs, c)
		}
	}
	if !o.NoAutoCite && cite.Mentions(e.Content) {
		ix, err := cite.ReadIndex(filepath.Join(m.repo.GitDir, "index"))
		if err == nil { // an index memsync cannot read: no automatic citations
			mk.Index = ix
			for _, c := range mk.Auto(e.Content) {
				if !seen[c.Spec()] {
					seen[c.Spec()] = true
					cs = append(cs, c)
				}
			}
		}
	}
	if len(cs) > 0 {
		e.SetField(memfile.CitesField, cite.Format(cs))
	}
	return nil
}

// citeHint is the advice for a citation error; "" for other errors.
func citeHint(err error) string {
	switch {
	case errors.Is(err, cite.ErrOutside):
		return "cite files of this repository's work tree, as PATH[:LINE[-LINE]] relative to the current folder"
	case errors.Is(err, cite.ErrSpec):
		return "a citation is PATH, PATH:LINE or PATH:FIRST-LAST, of an existing file whose lines reach that far"
	}
	return ""
}

// injectable tells whether Inject may choose e: in the session's view, and
// not superseded.
func (m *Memory) injectable(e *memfile.Entry) bool {
	return m.inView(e) && e.Field(memfile.SupersededByField) == ""
}
