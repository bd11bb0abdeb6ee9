package memsync

import (
	"os"
	"strings"

	"github.com/memsync/memsync/internal/provenance"
)

// writer is the provenance of a write this process makes now: the git
// author, and in a repository's memory the current worktree's branch, its
// path relative to the primary and the commit HEAD is at; the agent from
// the environment. It reads a few small files, never runs git.
func (m *Memory) writer() provenance.Info {
	var w provenance.Where
	if m.repo != nil {
		w = provenance.Where{CommonDir: m.repo.CommonDir, GitDir: m.repo.GitDir, Primary: m.repo.Primary, WorkTree: m.repo.WorkTree}
	}
	return provenance.Current(w, os.Getenv)
}

// Filter selects entries by their provenance; a field left "" matches every
// entry. Entries that record no provenance match only an empty Filter.
type Filter struct {
	Author string // a part of the author, any case ("jane", "jane@example.com")
	Branch string // the branch, exactly
	Agent  string // the agent or loop, exactly
}

// match tells whether e passes the filter.
func (f Filter) match(e *Entry) bool {
	if f == (Filter{}) {
		return true
	}
	p := e.Provenance
	if p == nil {
		return false
	}
	return (f.Author == "" || strings.Contains(strings.ToLower(p.Author), strings.ToLower(f.Author))) &&
		(f.Branch == "" || p.Branch == f.Branch) &&
		(f.Agent == "" || p.Agent == f.Agent)
}

// Filtered returns the entries that pass f, in their order.
func Filtered(entries []Entry, f Filter) []Entry {
	if f == (Filter{}) {
		return entries
	}
	out := entries[:0:0]
	for i := range entries {
		if f.match(&entries[i]) {
			out = append(out, entries[i])
		}
	}
	return out
}
