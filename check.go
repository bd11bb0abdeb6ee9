package memsync

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memsync/memsync/internal/cite"
	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/memfile"
)

// ErrNoWorkTree is what Check returns (wrapped) where there is no code to
// check against: the global layer, a bare repository.
var ErrNoWorkTree = errors.New("check needs a repository's work tree (not the global layer or a bare repository)")

// CheckOptions choose what Check checks.
type CheckOptions struct {
	// Refs name the entries to check (as Get resolves them); none: every
	// active entry that cites code.
	Refs []string
	// Paths, if set, limit the check to the entries citing one of these
	// files (slash-separated, relative to the top): what the hooks check
	// after a merge or checkout changed them.
	Paths []string
}

// CitationCheck is what Check found of one citation (the JSON of
// 'memsync check --json'; docs/commands.md documents it).
type CitationCheck struct {
	Entry    string   `json:"entry" jsonschema:"the ID of the entry that cites"`
	Title    string   `json:"title"`
	Citation Citation `json:"citation"`
	// State is fresh (unchanged, in place), moved (unchanged, at other
	// lines), renamed (git renamed the file; unchanged there) or stale.
	State string `json:"state" jsonschema:"fresh, moved, renamed or stale"`
	// Now is where the cited lines are now (moved, renamed).
	Now    *Citation `json:"now,omitempty" jsonschema:"where the cited lines are now (moved, renamed)"`
	Reason string    `json:"reason,omitempty" jsonschema:"why it is stale, or where it moved"`
}

// CheckResult is what Check found (the JSON of 'memsync check --json').
type CheckResult struct {
	Entries   int             `json:"entries"`   // entries checked
	Citations []CitationCheck `json:"citations"` // every citation checked, in file order
	Stale     []Entry         `json:"stale"`     // the entries with a stale citation, with their reasons
}

// Check verifies the citations of the active entries (CheckOptions) against
// the work tree of the current worktree: lines that only moved, and files
// git renamed, are followed; changed lines and deleted files are stale,
// with the reason. It reads only the cited files (a file git's index says
// is unchanged since a previous check is not read: findings are cached by
// blob ID in the state dir), runs git only for a cited path that is gone
// (rename detection), and records what is stale in the state dir, where
// List, Search, Get, Inject and the MCP server read it.
func (m *Memory) Check(ctx context.Context, o CheckOptions) (CheckResult, error) {
	out := CheckResult{Citations: []CitationCheck{}, Stale: []Entry{}}
	if m.repo == nil || m.repo.WorkTree == "" {
		return out, ErrNoWorkTree
	}
	f, err := m.load(ctx, View{})
	if err != nil {
		return out, err
	}
	picked, err := m.citing(f, o)
	if err != nil {
		return out, err
	}
	k := m.checker(ctx)
	checked := map[string]bool{}
	found := map[string]cite.Mark{}
	for _, i := range picked {
		e := &f.Entries[i]
		v := e.Field(memfile.CitesField)
		cs, _ := cite.Parse(v)
		checked[e.ID] = true
		out.Entries++
		var reasons []string
		for _, c := range cs {
			if err := ctx.Err(); err != nil { // an entry may cite a lot
				return out, err
			}
			r := k.Check(c)
			out.Citations = append(out.Citations, citationCheck(e, r))
			if r.State == cite.Stale {
				reasons = append(reasons, r.Reason)
			}
		}
		for _, u := range cite.Unreadable(v) {
			out.Citations = append(out.Citations, unreadCheck(e, u))
			reasons = append(reasons, u.Err.Error())
		}
		if len(reasons) > 0 {
			found[e.ID] = cite.Mark{Cites: v, Reason: strings.Join(reasons, "; ")}
			x := entryOf(e, i+1)
			x.Stale, x.StaleReason = true, found[e.ID].Reason
			out.Stale = append(out.Stale, x)
		}
	}
	if err := m.saveCheck(k.Cache, found, checked, len(o.Refs) == 0 && len(o.Paths) == 0); err != nil {
		m.warn("the findings of check were not kept: " + err.Error())
	}
	return out, nil
}

// citing are the indexes of the entries of f that o picks and that cite code.
func (m *Memory) citing(f *memfile.File, o CheckOptions) ([]int, error) {
	var picked []int
	if len(o.Refs) > 0 {
		idx, err := f.FindAll(o.Refs)
		if err != nil {
			return nil, err
		}
		picked = idx
	} else {
		for i := range f.Entries {
			picked = append(picked, i)
		}
	}
	paths := map[string]bool{}
	for _, p := range o.Paths {
		paths[p] = true
	}
	out := picked[:0]
	for _, i := range picked {
		e := &f.Entries[i]
		v := e.Field(memfile.CitesField)
		if v == "" || !m.inView(e) {
			continue
		}
		if len(paths) > 0 {
			cs, _ := cite.Parse(v)
			if !slices.ContainsFunc(cs, func(c cite.Citation) bool { return paths[c.Path] }) {
				continue
			}
		}
		out = append(out, i)
	}
	return out, nil
}

// checker checks citations in the current worktree, with the state dir's
// cache and git's rename detection.
func (m *Memory) checker(ctx context.Context) *cite.Checker {
	k := &cite.Checker{Top: m.repo.WorkTree, Cache: cite.OpenCache(filepath.Join(m.store.StateDir, "cite-cache")),
		Renames: cite.GitRenames(ctx, m.repo.WorkTree)}
	if ix, err := cite.ReadIndex(filepath.Join(m.repo.GitDir, "index")); err == nil {
		k.Index = ix // else every cited file is read
	}
	return k
}

// unreadCheck is the finding of a citation that cannot be read: stale,
// with the citation as written for its path.
func unreadCheck(e *memfile.Entry, u cite.Unread) CitationCheck {
	return CitationCheck{Entry: e.ID, Title: e.Heading(), Citation: Citation{Path: u.Text}, State: string(cite.Stale), Reason: u.Err.Error()}
}

func citationCheck(e *memfile.Entry, r cite.Result) CitationCheck {
	c := CitationCheck{Entry: e.ID, Title: e.Heading(), Citation: citationOf(r.Citation), State: string(r.State), Reason: r.Reason}
	if r.State == cite.Moved || r.State == cite.Renamed {
		now := citationOf(r.Now)
		c.Now = &now
	}
	return c
}

// staleRecord is where the staleness record is kept.
func (m *Memory) staleRecord() string { return filepath.Join(m.store.StateDir, "stale.json") }

// saveCheck keeps the cache and the staleness record: all of it anew after
// a full check, else the entries checked.
func (m *Memory) saveCheck(cache *cite.Cache, found map[string]cite.Mark, checked map[string]bool, full bool) error {
	if err := fsutil.MkdirAll(m.store.StateDir, m.store.DirPerm()); err != nil {
		return err
	}
	if err := cache.Save(m.store.FilePerm()); err != nil {
		return err
	}
	rec := cite.Record{Entries: found}
	if !full {
		rec = cite.ReadRecord(m.staleRecord())
		for id := range checked {
			delete(rec.Entries, id)
		}
		for id, mk := range found {
			rec.Entries[id] = mk
		}
	}
	return rec.Write(m.staleRecord(), m.store.FilePerm())
}

// marks reads the staleness record (nil when there is nothing to mark:
// the global layer).
func (m *Memory) marks() *cite.Record {
	if m.repo == nil {
		return nil
	}
	r := cite.ReadRecord(m.staleRecord())
	if len(r.Entries) == 0 {
		return nil
	}
	return &r
}

// markStale sets Stale and StaleReason of entries the record marks.
func markStale(rec *cite.Record, es []Entry) {
	if rec == nil {
		return
	}
	for i := range es {
		if why := rec.Reason(es[i].ID, es[i].Fields[memfile.CitesField]); why != "" {
			es[i].Stale, es[i].StaleReason = true, why
		}
	}
}

// UpdateCitations re-anchors the citations of the entry ref names, for a
// person who re-checked them against the code: a citation whose lines
// moved (or whose file git renamed) now names where they are; a stale one
// takes the fingerprint of the lines at its place now (the whole file when
// they are past its end); one of a deleted file is dropped. Each records
// the commit HEAD is at. It returns the entry, and what was found of each
// citation with Now the citation as re-anchored (nil: kept, or dropped
// when it was stale).
func (m *Memory) UpdateCitations(ctx context.Context, ref string) (Entry, []CitationCheck, error) {
	if m.repo == nil || m.repo.WorkTree == "" {
		return Entry{}, nil, ErrNoWorkTree
	}
	st, err := m.beginWrite(ctx, policy.OpEdit, "check --update")
	if err != nil {
		return Entry{}, nil, err
	}
	k := m.checker(ctx)
	mk := &cite.Maker{Top: m.repo.WorkTree, Commit: m.writer().Commit}
	var out Entry
	var found []CitationCheck
	err = st.Update(func(f *memfile.File) error {
		m.reportDamage(m.store.Path(), f)
		idx, err := f.FindAll([]string{ref})
		if err != nil {
			return err
		}
		e := &f.Entries[idx[0]]
		v := e.Field(memfile.CitesField)
		cs, _ := cite.Parse(v)
		unread := cite.Unreadable(v)
		if len(cs) == 0 && len(unread) == 0 {
			return fmt.Errorf("%w: %s cites no code", memfile.ErrInvalid, e.ID)
		}
		var now []cite.Citation
		for _, c := range cs {
			if err := ctx.Err(); err != nil {
				return err
			}
			r := k.Check(c)
			found = append(found, citationCheck(e, r))
			if r.State == cite.Fresh {
				now = append(now, c)
			} else if c2, ok := mk.Reanchor(r); ok {
				now = append(now, c2)
				x := citationOf(c2)
				found[len(found)-1].Now = &x
			} else {
				found[len(found)-1].Now = nil // dropped
			}
		}
		for _, u := range unread { // dropped
			found = append(found, unreadCheck(e, u))
		}
		if len(now) > 0 {
			e.SetField(memfile.CitesField, cite.Format(now))
		} else {
			e.Extra = slices.DeleteFunc(e.Extra, func(f memfile.Field) bool { return f.Key == memfile.CitesField })
		}
		out = entryOf(e, idx[0]+1)
		return nil
	})
	if err != nil {
		return Entry{}, found, err
	}
	if err := m.saveCheck(k.Cache, nil, map[string]bool{out.ID: true}, false); err != nil {
		m.warn("the staleness record was not updated: " + err.Error())
	}
	return out, found, nil
}

// checkChanged checks the entries citing the files that changed between
// two commits (the hooks after a merge or a branch switch).
func (m *Memory) checkChanged(ctx context.Context, from, to string) error {
	if m.repo == nil || m.repo.WorkTree == "" {
		return nil
	}
	if rec := m.marks(); rec == nil {
		f, err := m.load(ctx, View{})
		if err != nil || !slices.ContainsFunc(f.Entries, func(e memfile.Entry) bool { return e.Field(memfile.CitesField) != "" }) {
			return err // nothing cites code: no git to run
		}
	}
	out, err := gitcmd.OutputContext(ctx, m.repo.WorkTree, "diff", "--no-ext-diff", "--no-renames", "--name-only", "-z", from, to, "--")
	if err != nil {
		return err
	}
	paths := strings.Split(strings.TrimRight(out, "\x00"), "\x00")
	if len(paths) == 0 || paths[0] == "" {
		return nil
	}
	_, err = m.Check(ctx, CheckOptions{Paths: paths})
	return err
}

// markLayers marks the stale entries among the hits of a search over
// layers (each hit's Layer names its memory when there are several).
func markLayers(layers []*Memory, hits []Entry) {
	for _, m := range layers {
		rec := m.marks()
		if rec == nil {
			continue
		}
		for i := range hits {
			if len(layers) == 1 || hits[i].Layer == m.layerName() {
				markStale(rec, hits[i:i+1])
			}
		}
	}
}
