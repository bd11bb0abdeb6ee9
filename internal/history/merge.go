package history

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/gitrepo"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/internal/words"
	"github.com/memsync/memsync/lock"
	"github.com/memsync/memsync/memfile"
)

// Kinds of MergeResult.
const (
	UpToDate    = "up-to-date"   // theirs is nothing new: no change
	FastForward = "fast-forward" // ours had nothing theirs lacks: theirs' files taken as they are
	Merged      = "merged"       // both sides changed: merged by entry, a merge snapshot committed
)

// MergeOptions tunes MergeFrom.
type MergeOptions struct {
	Force      bool   // pass the mass-deletion guard
	DryRun     bool   // compute and report what would change; write nothing
	Source     string // names the other side in messages and the conflict log ("sync origin")
	Provenance Provenance
	// Detached leaves a merge of two changed sides (Kind Merged) unmade in
	// the memory: its merge snapshot's objects are stored (a kept pack), but
	// neither the memory files nor Ref change and no conflict is logged.
	// res.Snapshot names it. The caller publishes it (a push) and then
	// either Adopts it or Drops it, so a merge commit is only ever made for
	// what was published. Other kinds are made as without Detached.
	Detached bool

	// childOf is set by Adopt: theirs is a merge snapshot made on this
	// commit, so while Ref is still there theirs is a fast-forward, and
	// git need not be asked.
	childOf string
}

// MergeResult is what MergeFrom did, or with DryRun would do.
type MergeResult struct {
	Kind     string `json:"kind"`     // UpToDate, FastForward or Merged
	Ours     string `json:"ours"`     // our newest snapshot before ("" none)
	Theirs   string `json:"theirs"`   // the snapshot merged in
	Base     string `json:"base"`     // their merge base ("" for a fast-forward or none)
	Snapshot string `json:"snapshot"` // our newest snapshot after (a dry run leaves it as it was)
	// Changes and ArchiveChanges are what changes in the live active file
	// and archive, matched by ID.
	Changes        []Change         `json:"-"`
	ArchiveChanges []Change         `json:"-"`
	Conflicts      []merge.Conflict `json:"-"`
	Notes          []string         `json:"notes,omitempty"`  // what the merge did a person should know (merge.Result.Notes)
	Backup         string           `json:"backup,omitempty"` // a damaged live file was kept here
	// Refused is, for a dry run, why the merge would stop without Force.
	Refused string `json:"refused,omitempty"`

	pack *keptPack // a Detached merge's objects, until Adopt or Drop
}

// ConflictLog is where a repository's recorded conflicts are kept (see
// merge.Record and merge.LogPath).
func ConflictLog(r *gitrepo.Repo) string { return merge.LogPath(r.CommonDir) }

// MergeFrom merges the snapshot theirs (a full hash, e.g. a remote's fetched
// snapshots; "" for none) into the memory, under the writers' lock:
//
//   - the live memory is snapshotted first, so nothing unrecorded is merged;
//   - theirs is nothing new (empty, ours, or an ancestor of ours): no change;
//   - ours is empty or an ancestor of theirs: a fast-forward, theirs' files
//     are written (archive first) and Ref moves to theirs;
//   - else the two are merged by entry against their merge base
//     (merge.Merge), the result is written (archive first, then the active
//     file), and a merge snapshot with parents ours and theirs is committed,
//     even when its tree is ours', so the next merge finds the right base.
//     Conflicts keep ours live and are added to the conflict log.
//
// A result that would remove more than half of our entries stops with
// merge.ErrMassDeletion unless opts.Force. A damaged live file is backed up
// before it is replaced.
//
// ctx stops MergeFrom before it changes a file (a git it spawned is
// killed); once the files are rewritten, the ref is moved whatever ctx says.
func (h *History) MergeFrom(ctx context.Context, theirs string, opts MergeOptions) (*MergeResult, error) {
	h.st = openStorage(h.Repo.CommonDir) // see objects a fetch just brought
	res := &MergeResult{Theirs: theirs}
	with := h.Store.WithLock
	if opts.DryRun {
		with = h.readLocked
	}
	err := with(func() error {
		if !opts.DryRun {
			if _, err := h.takeLocked(ctx, "memsync snapshot before merging "+opts.Source, opts.Provenance, "", true); err != nil {
				return err
			}
		}
		old, err := h.head()
		if err != nil {
			return err
		}
		if !old.IsZero() {
			res.Ours = old.String()
		}
		res.Snapshot = res.Ours
		if theirs == "" || theirs == res.Ours {
			res.Kind = UpToDate
			return nil
		}
		if res.Ours != "" {
			if res.Ours == opts.childOf {
				// theirs is made on ours: not behind it
			} else if behind, err := h.isAncestor(ctx, theirs, res.Ours); err != nil || behind {
				res.Kind = UpToDate
				return err
			}
		}
		live, err := h.readLiveLocked()
		if err != nil {
			return err
		}
		return h.mergeLocked(ctx, res, old, live, opts)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (h *History) mergeLocked(ctx context.Context, res *MergeResult, old plumbing.Hash, live Files, opts MergeOptions) error {
	theirFiles, err := h.Files(res.Theirs)
	if err != nil {
		return err
	}
	ff := res.Ours == ""
	if !ff {
		if ff = res.Ours == opts.childOf; !ff {
			ff, err = h.isAncestor(ctx, res.Ours, res.Theirs)
		}
		if err != nil {
			return err
		}
	}
	if ff && opts.DryRun && res.Ours != "" { // unsnapshotted live changes make it a merge
		at, err := h.Files(res.Ours)
		if err != nil {
			return err
		}
		ff = bytes.Equal(at.Memory, live.Memory) && bytes.Equal(at.Archive, live.Archive)
	}
	// Live files with git conflict markers are merged by entry first (as
	// every rewrite does); theirs' versions of what differs go to the log.
	var unmarked []merge.Conflict
	parse := func(data []byte) *memfile.File {
		if memfile.HasConflictMarkers(data) {
			if f, cs, ok := merge.Unmark(data); ok {
				unmarked = append(unmarked, cs...)
				return f
			}
		}
		return memfile.Parse(data)
	}
	activeFile, archiveFile := parse(live.Memory), parse(live.Archive)
	ours := merge.State{Active: activeFile.Entries, Archive: archiveFile.Entries}
	theirLog, err := merge.ParseLog("of snapshot "+words.Short(res.Theirs), theirFiles.Conflicts)
	if err != nil {
		return err
	}
	var next Files
	var result merge.Result
	var log []merge.Record // the conflict log after the merge
	if ff {
		res.Kind = FastForward
		next = theirFiles
		result.State = merge.Parse(next.Memory, next.Archive)
		log = theirLog
	} else {
		res.Kind = Merged
		var base merge.State
		var baseLog []merge.Record
		if res.Base, err = h.mergeBase(ctx, res.Ours, res.Theirs); err != nil {
			return err
		}
		if res.Base != "" {
			bf, err := h.Files(res.Base)
			if err != nil {
				return err
			}
			base = merge.Parse(bf.Memory, bf.Archive)
			if baseLog, err = merge.ParseLog("of snapshot "+words.Short(res.Base), bf.Conflicts); err != nil {
				return err
			}
		}
		ourLog, err := merge.ParseLog(ConflictLog(h.Repo), live.Conflicts)
		if err != nil {
			return err
		}
		result = merge.Clones(base, ours, merge.Parse(theirFiles.Memory, theirFiles.Archive))
		res.Conflicts, res.Notes = result.Conflicts, result.Notes
		theirActive := memfile.Parse(theirFiles.Memory)
		next.Memory = renderLike(activeFile, live.Memory, theirActive, result.Active)
		next.Archive = renderLike(archiveFile, live.Archive, memfile.Parse(theirFiles.Archive), result.Archive)
		log = merge.Add(merge.Logs(baseLog, ourLog, theirLog), opts.Source, append(result.Merged, res.Conflicts...))
	}
	// Conflicts found in the live files' markers join the log; a merge
	// snapshot holds the log, so they travel with it.
	log = merge.Add(log, "conflict markers in "+h.Store.Path(), unmarked)
	next.Conflicts = merge.EncodeLog(log)
	next = withTombstones(next, live, theirFiles) // purged entries never come back
	res.Changes = Compare(activeFile, memfile.Parse(next.Memory))
	res.ArchiveChanges = Compare(archiveFile, memfile.Parse(next.Archive))
	if err := scanMerged(res, opts.Source); err != nil {
		return err // a secret from the other side is neither merged nor pushed on
	}
	if !opts.Force {
		if err := result.Guard(ours); err != nil {
			since := res.Base
			if ff {
				since = res.Ours
			}
			if ok, derr := h.deliberate(ctx, since, res.Theirs); derr != nil {
				return derr
			} else if !ok {
				if !opts.DryRun {
					return err
				}
				res.Refused = err.Error()
			}
		}
	}
	if opts.DryRun {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !ff && opts.Detached {
		return h.detachLocked(res, old, next, opts)
	}
	for _, f := range []struct {
		path string
		data []byte
	}{{h.Store.Path(), live.Memory}, {h.Store.ArchivePath(), live.Archive}} {
		if len(memfile.Damage(f.data)) == 0 {
			continue
		}
		target, err := h.Store.Resolve(f.path)
		if err != nil {
			return err
		}
		if res.Backup, err = h.Store.Backup(target, f.data); err != nil {
			return err
		}
	}
	if err := merge.SaveLog(ConflictLog(h.Repo), log); err != nil {
		return err
	}
	if err := h.savePurged(live.Purged, next.Purged); err != nil {
		return err
	}
	if err := h.writeLocked(h.Store.ArchivePath(), live.Archive, next.Archive); err != nil {
		return err
	}
	if err := h.writeLocked(h.Store.Path(), live.Memory, next.Memory); err != nil {
		return err
	}
	commit := plumbing.NewHash(res.Theirs)
	b := &batch{}
	if !ff {
		commit = h.mergeCommit(b, res, old, next, opts)
	}
	if err := h.publish(b, commit, old); err != nil {
		return err
	}
	res.Snapshot = commit.String()
	return h.Store.ClearRemovals()
}

// mergeCommit adds to b the merge snapshot of ours (old) and theirs holding
// next, and returns its hash.
func (h *History) mergeCommit(b *batch, res *MergeResult, old plumbing.Hash, next Files, opts MergeOptions) plumbing.Hash {
	// The chunks both sides hold are in the repository already.
	var sides []layout
	for _, c := range []plumbing.Hash{old, plumbing.NewHash(res.Theirs)} {
		if l, err := h.layoutAt(c); err == nil {
			sides = append(sides, l)
		}
	}
	tree := addFiles(b, next, haveOf(sides...))
	before, err := h.memoryAt(old)
	rec, ok := recordOf(before, next.Memory, err == nil)
	msg := message("memsync merge of "+opts.Source, opts.Provenance, "", rec, ok)
	return b.add(newObject(plumbing.CommitObject,
		encodeCommit(tree, []plumbing.Hash{old, plumbing.NewHash(res.Theirs)}, time.Now(), msg, h.identity())))
}

// detachLocked stores the merge snapshot holding next as a kept pack that
// no ref reaches (see MergeOptions.Detached).
func (h *History) detachLocked(res *MergeResult, old plumbing.Hash, next Files, opts MergeOptions) error {
	b := &batch{}
	commit := h.mergeCommit(b, res, old, next, opts)
	p, err := h.writePack(b.objs)
	if err != nil {
		return err
	}
	h.st.Reindex()
	res.Snapshot, res.pack = commit.String(), p
	return nil
}

// Adopt makes a Detached merge (res, from MergeFrom) the memory once it is
// published: MergeFrom of its snapshot, a fast-forward (or, when the memory
// changed meanwhile, a merge of that change), and the merge's conflicts go
// to the conflict log. opts are the ones the merge was made with. The kept
// pack is released whatever happens: the snapshot is published.
func (h *History) Adopt(ctx context.Context, res *MergeResult, opts MergeOptions) (*MergeResult, error) {
	if res.pack != nil {
		defer res.pack.release()
	}
	opts.Detached, opts.DryRun, opts.childOf = false, false, res.Ours
	// The merge snapshot holds the conflict log with this merge's
	// conflicts: the fast-forward writes it.
	return h.MergeFrom(ctx, res.Snapshot, opts)
}

// Drop removes a Detached merge's objects (res, from MergeFrom) that were
// not published: no ref reaches them, so a lost race leaves nothing behind.
func (h *History) Drop(res *MergeResult) {
	if res.pack != nil {
		res.pack.remove()
		res.pack = nil
	}
}

// readLocked runs fn under the readers' lock, as Live reads: it creates
// nothing (no home, no lock file) where there is no memory yet, and reads
// without the lock where the lock file cannot be created.
func (h *History) readLocked(fn func() error) error {
	if _, err := os.Stat(h.Store.Home); err != nil {
		return fn()
	}
	lp, err := h.Store.LockPath()
	if err != nil {
		return err
	}
	l, err := lock.Shared(h.Store.Context(), lp, h.Store.LockTimeout)
	switch {
	case err == nil:
		defer func() { _ = l.Release() }()
	case errors.Is(err, lock.ErrTimeout):
		return err
	}
	return fn()
}

// renderLike renders entries as the file f (parsed from data) is written:
// its preamble and dialect; a file that did not exist takes other's, or
// the plain header. No entries and no file stay no file.
func renderLike(f *memfile.File, data []byte, other *memfile.File, entries []memfile.Entry) []byte {
	out := *f
	if data == nil {
		if len(entries) == 0 {
			return nil
		}
		out = *other
		if strings.TrimSpace(out.Preamble) == "" {
			out.Preamble = memfile.Header + "\n"
		}
	}
	out.Entries, out.Problems = entries, nil
	return out.Render()
}

// isAncestor tells whether commit a is an ancestor of (or is) commit b.
func (h *History) isAncestor(ctx context.Context, a, b string) (bool, error) {
	cmd := gitcmd.CommandContext(ctx, h.Repo.CommonDir, "--git-dir="+h.Repo.CommonDir, "merge-base", "--is-ancestor", a, b)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return false, ctx.Err()
	case err == nil:
		return true, nil
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return false, nil
	}
	return false, gitcmd.Wrap(cmd.Args[1:], err, stderr.String())
}

// mergeBase is the best common ancestor of a and b, "" when they have none.
func (h *History) mergeBase(ctx context.Context, a, b string) (string, error) {
	cmd := gitcmd.CommandContext(ctx, h.Repo.CommonDir, "--git-dir="+h.Repo.CommonDir, "merge-base", a, b)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err == nil:
		return strings.TrimSpace(string(out)), nil
	case errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0:
		return "", nil
	}
	return "", gitcmd.Wrap(cmd.Args[1:], err, stderr.String())
}

// deliberate tells whether every snapshot on theirs' side since base ("":
// all of theirs) that removed entries says its removals were deliberate
// (trailerRemoval: memsync's own delete, gc, archive…, or a person's
// --accept-removal, which the removal guard of the clone that took it let
// through). A merge's own removals come from the snapshots it merged, which
// are in the range too; a snapshot without a record (an older memsync)
// tells nothing, and is taken as not deliberate.
func (h *History) deliberate(ctx context.Context, base, theirs string) (bool, error) {
	rng := theirs
	if base != "" {
		rng = base + ".." + theirs
	}
	out, err := gitcmd.OutputContext(ctx, h.Repo.CommonDir, "--git-dir="+h.Repo.CommonDir, "log", "--no-merges", "--format=%x00%B", rng, "--")
	if err != nil {
		return false, err
	}
	for _, msg := range strings.Split(out, "\x00")[1:] {
		_, c, ok := recorded(msg)
		if !ok || (c.Removed > 0 && !strings.Contains(msg, "\n"+trailerRemoval+": deliberate\n")) {
			return false, nil
		}
	}
	return true, nil
}
