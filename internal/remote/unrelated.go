package remote

import (
	"context"
	"errors"
	"fmt"

	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/memfile"
)

// ErrUnrelated is the refusal of a remote memory that shares no snapshot with this clone's,
// and was taken in commits this repository lacks: another project's (a
// mistyped URL, a re-pointed remote). Options.AllowUnrelated merges anyway.
var ErrUnrelated = errors.New("unrelated memories")

// sourcesWalked bounds how many snapshots of the remote's are read for
// their source commits.
const sourcesWalked = 64

// checkRelated refuses (ErrUnrelated) to merge heads (fetched refs) into
// ours when none shares a snapshot with ours, both hold entries, and the
// heads' snapshots name source commits of which this repository has none.
// A clone with no snapshot, or only empty ones, takes the remote's memory
// (a first sync); clones of one project that each snapshotted before their
// first sync share the project's commits, and merge.
func checkRelated(ctx context.Context, h *history.History, remote, ours string, refs []string, fetched map[string]string, clone string) error {
	if ours == "" || len(refs) == 0 || !holds(h, ours) {
		return nil
	}
	theirs := ""
	for _, ref := range refs {
		base, err := h.MergeBase(ctx, fetched[ref], ours)
		if err != nil || base != "" {
			return err
		}
		if theirs == "" && holds(h, fetched[ref]) {
			theirs = ref
		}
	}
	if theirs == "" {
		return nil
	}
	named := 0
	for _, ref := range refs {
		at := fetched[ref]
		for range sourcesWalked {
			s, err := h.Read(at)
			if err != nil {
				break
			}
			if c := s.SourceCommit; c != "" {
				named++
				if h.ObjectKind(c) == "commit" {
					return nil // the remote's memory was taken in this project's commits
				}
			}
			if at = s.Parent; at == "" {
				break
			}
		}
	}
	if named == 0 {
		return nil // nothing to tell the projects apart by
	}
	return fmt.Errorf("%w: %s's %s (%s) shares no snapshot with this clone's memory (%s, clone %s), and was taken in commits this repository does not have: another project's memory?",
		ErrUnrelated, remote, cloneRefOf(remote, theirs), fetched[theirs][:12], h.Repo.CommonDir, clone)
}

// holds tells whether snapshot hash holds an entry, active or archived.
func holds(h *history.History, hash string) bool {
	f, err := h.Files(hash)
	if err != nil {
		return true // unreadable: let the merge say what is wrong
	}
	return len(memfile.Parse(f.Memory).Entries)+len(memfile.Parse(f.Archive).Entries) > 0
}
