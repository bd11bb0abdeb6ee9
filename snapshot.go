package memsync

import "github.com/memsync/memsync/internal/history"

// Snapshot is one commit of the memory's history, on
// refs/memsync/snapshots: the memory files as they were, and where the
// snapshot came from.
type Snapshot struct {
	Commit  string `json:"commit"`  // full hash
	Parent  string `json:"parent"`  // the previous snapshot, "" for the first
	Tree    string `json:"tree"`    // the tree's hash
	Time    string `json:"time"`    // RFC 3339, the committer time
	Subject string `json:"subject"` // first line of the message
	Author  string `json:"author"`  // who took it: the commit's author, "Name <email>"
	// SourceCommit, Branch and Worktree are what the worktree that took
	// it had checked out; Hook is the git hook that took it ("" for one
	// taken by hand).
	SourceCommit string `json:"source_commit"`
	Branch       string `json:"branch"` // "" when detached
	Worktree     string `json:"worktree"`
	Hook         string `json:"hook"`
	Rollback     string `json:"rollback,omitempty"` // for a rollback: the snapshot it went back to
}

// LogEntry is one snapshot in the log, with how many entries its active
// file held and what changed in it since the snapshot before.
type LogEntry struct {
	Snapshot
	Entries int `json:"entries"`
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Changed int `json:"changed"`
	// Changes are the entries it changed, with LogOptions Stat, Patch or
	// Entry.
	Changes []EntryChange `json:"changes,omitzero"`
}

// EntryChange is one entry a snapshot changed, as the log names it.
type EntryChange struct {
	// Kind is "added", "removed" or "changed"; in one entry's log
	// (LogOptions.Entry) also "archived" and "restored".
	Kind  string `json:"kind"`
	ID    string `json:"id"`
	Title string `json:"title"`
	// Archive is set, in one entry's log, for a change inside the archive
	// (an archived entry edited or removed there).
	Archive bool `json:"archive,omitempty"`
	// Diff is, with LogOptions.Patch, the entry's text before and after
	// as a line diff.
	Diff *string `json:"diff,omitempty"`
}

// RollbackResult is what Rollback did.
type RollbackResult struct {
	Target   string   `json:"target"`   // the snapshot rolled back to
	IDs      []string `json:"ids"`      // the entries brought back (full IDs); empty for the whole memory
	Before   string   `json:"before"`   // the snapshot of the memory as it was before (taken first if needed)
	Snapshot string   `json:"snapshot"` // the snapshot of the result; "" when nothing changed
}

func snapshotOf(s *history.Snapshot) Snapshot {
	return Snapshot{Commit: s.Commit, Parent: s.Parent, Tree: s.Tree, Time: s.Time, Subject: s.Subject, Author: s.Author,
		SourceCommit: s.SourceCommit, Branch: s.Branch, Worktree: s.Worktree, Hook: s.Hook, Rollback: s.Rollback}
}

func logOf(entries []history.LogEntry) []LogEntry {
	out := make([]LogEntry, len(entries))
	for i, e := range entries {
		out[i] = LogEntry{Snapshot: snapshotOf(&e.Snapshot), Entries: e.Entries, Added: e.Added, Removed: e.Removed, Changed: e.Changed}
		if e.Changes != nil {
			out[i].Changes = make([]EntryChange, len(e.Changes))
			for k, c := range e.Changes {
				out[i].Changes[k] = EntryChange(c)
			}
		}
	}
	return out
}

func rollbackOf(r *history.RollbackResult) *RollbackResult {
	if r == nil {
		return nil
	}
	out := RollbackResult(*r)
	return &out
}
