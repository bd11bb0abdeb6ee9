package ui

// This file is the page's only contact with the memory: every call of a
// *memsync.Memory method is here, and what they return is turned into the
// page's own view types, so a change of the library's types changes this
// file only.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memsync/memsync"
)

// entryView is an entry as the page shows it.
type entryView struct {
	memsync.Entry
	Head  string            // the heading, else a preview of the content
	Extra map[string]string // the bullets that are not provenance (shown apart)
	// BroughtBy is who made the snapshot that brought the entry from another
	// clone, when its Author bullet names someone else: the author is then
	// only claimed.
	BroughtBy string
}

func viewOf(e memsync.Entry) entryView {
	v := entryView{Entry: e, Head: e.Heading(), Extra: maps.Clone(e.Fields)}
	maps.DeleteFunc(v.Extra, func(k, _ string) bool { return memsync.ProvenanceField(k) })
	return v
}

// prov is an entry's provenance, empty when it records none.
func (e *entryView) prov() memsync.Provenance {
	if e.Provenance == nil {
		return memsync.Provenance{}
	}
	return *e.Provenance
}

// filters are the index page's: a query and what the entries must match.
type filters struct {
	Query, Type, Tag, Author, Branch, Worktree, Agent string
	Archive                                           bool
}

// facets are the values the index page's filters offer, from the view's entries.
type facets struct {
	Types, Tags, Authors, Branches, Worktrees, Agents []string
}

// entries are the entries f selects, ranked as `memsync search` ranks them
// (without a query: all of them, newest first), and the filters' values.
func entries(ctx context.Context, m *memsync.Memory, f filters) ([]entryView, facets, error) {
	view := memsync.View{Archive: f.Archive}
	all, err := m.List(ctx, view)
	if err != nil {
		return nil, facets{}, err
	}
	var tags []string
	if f.Tag != "" {
		tags = []string{f.Tag}
	}
	hits, err := m.Search(ctx, f.Query, memsync.SearchOptions{View: view, Tags: tags, Type: f.Type,
		Filter: memsync.Filter{Author: f.Author, Branch: f.Branch, Agent: f.Agent}})
	if err != nil {
		return nil, facets{}, err
	}
	out := make([]entryView, 0, len(hits))
	arrived := m.Arrived()
	for _, e := range hits {
		v := viewOf(e)
		v.BroughtBy = arrived.Claimed(e)
		if f.Worktree == "" || v.prov().Worktree == f.Worktree {
			out = append(out, v)
		}
	}
	var fc facets
	for _, e := range all {
		v := viewOf(e)
		p := v.prov()
		fc.Types = append(fc.Types, e.Type)
		fc.Tags = append(fc.Tags, e.Tags...)
		fc.Authors = append(fc.Authors, p.Author)
		fc.Branches = append(fc.Branches, p.Branch)
		fc.Worktrees = append(fc.Worktrees, p.Worktree)
		fc.Agents = append(fc.Agents, p.Agent)
	}
	for _, s := range []*[]string{&fc.Types, &fc.Tags, &fc.Authors, &fc.Branches, &fc.Worktrees, &fc.Agents} {
		*s = distinct(*s)
	}
	return out, fc, nil
}

// distinct is the non-empty values of s, sorted, each once.
func distinct(s []string) []string {
	s = slices.DeleteFunc(s, func(v string) bool { return v == "" })
	slices.Sort(s)
	return slices.Compact(s)
}

// entry is the entry ref names in the memory, else in its archive
// (archived true); memsync's not-found error when neither holds it.
func entry(ctx context.Context, m *memsync.Memory, ref string) (e entryView, archived bool, err error) {
	for _, v := range []memsync.View{{}, {Archive: true}} {
		got, gerr := m.Get(ctx, v, ref)
		if gerr == nil {
			e = viewOf(got[0])
			e.BroughtBy = m.Arrived().Claimed(got[0])
			return e, v.Archive, nil
		}
		if kind, _ := memsync.Classify(gerr); kind != memsync.KindNotFound {
			return entryView{}, false, gerr
		}
		err = cmp.Or(err, gerr) // the active memory's words
	}
	return entryView{}, false, err
}

// snapshotView is one snapshot of the timeline, with the entries it
// changed.
type snapshotView struct {
	Commit, Time, Subject, Author, Branch, Worktree, Hook, Rollback string
	Entries                                                         int // entries in its active file
	Added, Removed, Changed                                         int
	Changes                                                         []changeView
}

// changeView is one entry a snapshot changed.
type changeView struct {
	Kind, ID, Title string
	Archive         bool   // a change inside the archive
	Agent           string // the agent or loop that wrote the entry, when the memory still holds it
	Diff            string // the entry's text before and after (an entry's history only)
}

func snapshotsOf(log []memsync.LogEntry, agents map[string]string) []snapshotView {
	out := make([]snapshotView, 0, len(log))
	for _, l := range log {
		s := snapshotView{Commit: l.Commit, Time: l.Time, Subject: l.Subject, Author: l.Author, Branch: l.Branch,
			Worktree: l.Worktree, Hook: l.Hook, Rollback: l.Rollback, Entries: l.Entries,
			Added: l.Added, Removed: l.Removed, Changed: l.Changed}
		for _, c := range l.Changes {
			cv := changeView{Kind: c.Kind, ID: c.ID, Title: c.Title, Archive: c.Archive, Agent: agents[c.ID]}
			if c.Diff != nil {
				cv.Diff = *c.Diff
			}
			s.Changes = append(s.Changes, cv)
		}
		out = append(out, s)
	}
	return out
}

// timeline is the newest n snapshots (0: all), each with the entries it
// changed and, where the memory or its archive still holds them, the agent
// or loop that wrote them.
func timeline(ctx context.Context, m *memsync.Memory, n int) ([]snapshotView, error) {
	log, err := m.Log(ctx, memsync.LogOptions{N: n, Stat: true})
	if err != nil {
		return nil, err
	}
	agents := map[string]string{}
	for _, v := range []memsync.View{{}, {Archive: true}} {
		all, err := m.List(ctx, v)
		if err != nil {
			return nil, err
		}
		for _, e := range all {
			if e.Provenance != nil && e.Provenance.Agent != "" {
				agents[e.ID] = e.Provenance.Agent
			}
		}
	}
	return snapshotsOf(log, agents), nil
}

// entryHistory is every snapshot that touched the entry ref names, with
// the entry's diffs; none (and no error) when the memory has no history.
func entryHistory(ctx context.Context, m *memsync.Memory, ref string) ([]snapshotView, error) {
	log, err := m.Log(ctx, memsync.LogOptions{Entry: ref, Patch: true})
	if errors.Is(err, memsync.ErrNoHistory) {
		return nil, nil
	}
	return snapshotsOf(log, nil), err
}

// conflictView is a recorded conflict as the page shows it.
type conflictView struct {
	ID, Title, Source, Time, Diff string
	Merged                        bool // both sides' edits merged as text; Before is ours before the merge
	Base, Before                  *entryView
	Ours, Theirs                  entryView
	EditText                      string // both versions to edit into one
}

func conflictsOf(cs []memsync.Conflict) []conflictView {
	out := make([]conflictView, 0, len(cs))
	for i := range cs {
		c := &cs[i]
		v := conflictView{ID: c.ID, Title: c.Title, Source: c.Source, Time: c.Time, Diff: c.Diff,
			Merged: c.Kind == "merged", Ours: viewOf(c.Ours), Theirs: viewOf(c.Theirs), EditText: c.EditText()}
		if c.Base != nil {
			b := viewOf(*c.Base)
			v.Base = &b
		}
		if c.Before != nil {
			b := viewOf(*c.Before)
			v.Before = &b
		}
		out = append(out, v)
	}
	return out
}

// conflicts are the recorded conflicts, oldest first.
func conflicts(ctx context.Context, m *memsync.Memory) ([]conflictView, error) {
	cs, err := m.Conflicts(ctx)
	return conflictsOf(cs), err
}

// mayResolve tells why the memory's role may not resolve conflicts (nil: it may).
func mayResolve(m *memsync.Memory) error { return m.Allow("resolve") }

// resolved is what a resolution did.
type resolved struct{ ID, Kept, Snapshot string }

// errCancelled is a resolution by an edit that left no entry.
var errCancelled = memsync.ErrEditCancelled

// editError is an edited text that holds more than one entry.
type editError struct{ error }

func (e *editError) Unwrap() error { return e.error }

// resolve settles the conflict whose ID is id (exactly) as `memsync
// resolve` does: keep is "ours", "theirs" or "edit", and text is, for
// "edit", the conflict's EditText as the person edited it.
func resolve(ctx context.Context, m *memsync.Memory, id, keep, text string) (resolved, error) {
	// The page names a conflict by its full ID. Conflict also takes a
	// prefix: once the conflict shown is settled elsewhere, its ID must not
	// name another one that it starts; Resolve is told the same
	// (Resolution.Exact), for a conflict settled after this check.
	c, err := m.Conflict(ctx, id)
	switch {
	case err == nil && c.ID == id:
	case err == nil, errors.Is(err, memsync.ErrAmbiguous):
		return resolved{}, fmt.Errorf("%w: no recorded conflict for %q", memsync.ErrNotFound, id)
	default:
		return resolved{}, err
	}
	r := memsync.Resolution{Keep: memsync.Keep(keep), Exact: true}
	if r.Keep == memsync.KeepEdit {
		e, err := c.Edited([]byte(text))
		if err != nil && !errors.Is(err, errCancelled) {
			err = &editError{err}
		}
		if err != nil {
			return resolved{}, err
		}
		r.Edited = &e
	}
	res, err := m.Resolve(ctx, id, r)
	if err != nil {
		return resolved{}, err
	}
	return resolved{ID: res.ID, Kept: string(res.Kept), Snapshot: res.Snapshot}, nil
}

// checkView is one finding of the doctor.
type checkView struct{ Check, Status, Detail, Fix, Backup string }

// doctor is what `memsync doctor` reports (it repairs nothing).
func doctor(ctx context.Context, m *memsync.Memory) (ok bool, checks []checkView, err error) {
	r, err := m.Doctor(ctx, memsync.DoctorOptions{})
	if err != nil {
		return false, nil, err
	}
	for _, c := range r.Checks {
		checks = append(checks, checkView{Check: c.Check, Status: c.Status, Detail: c.Detail, Fix: c.Fix, Backup: c.Backup})
	}
	return r.OK, checks, nil
}

// where names the memory for the page's header: the repository's folder
// and the memory file.
func where(m *memsync.Memory) (repo, file string) {
	if wt := m.WorkTree(); wt != "" {
		repo = filepath.Base(wt)
	}
	return strings.TrimSpace(repo), m.Path()
}

// errorKind is how the page answers a memory's error: its HTTP status and
// the hint memsync gives for it.
func errorKind(err error) (status int, hint string) {
	kind, hint := memsync.Classify(err)
	return map[memsync.Kind]int{memsync.KindError: 500, memsync.KindUsage: 400, memsync.KindNotFound: 404,
		memsync.KindLocked: 503, memsync.KindRefused: 409, memsync.KindNoRepo: 500}[kind], hint
}
