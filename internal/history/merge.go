package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	// Independent says that no snapshot MergeAll is given is an ancestor
	// of another or of ours (git merge-base --independent said so);
	// Descends, when set, that the one snapshot given descends from that
	// commit, and Apart that ours is an ancestor of none of them either;
	// so git need not be asked again.
	Independent bool
	Descends    string
	Apart       bool
}

// MergeResult is what MergeFrom did, or with DryRun would do.
type MergeResult struct {
	Kind   string `json:"kind"`   // UpToDate, FastForward or Merged
	Ours   string `json:"ours"`   // our newest snapshot before ("" none)
	Theirs string `json:"theirs"` // the (first) snapshot merged in
	// Heads are the snapshots merged in: those of MergeAll's that ours
	// lacked.
	Heads    []string `json:"heads"`
	Base     string   `json:"base"`     // their merge base ("" for a fast-forward or none)
	Snapshot string   `json:"snapshot"` // our newest snapshot after (a dry run leaves it as it was)
	// Changes and ArchiveChanges are what changes in the live active file
	// and archive, matched by ID.
	Changes        []Change         `json:"-"`
	ArchiveChanges []Change         `json:"-"`
	Conflicts      []merge.Conflict `json:"-"`
	Notes          []string         `json:"notes,omitempty"`  // what the merge did a person should know (merge.Result.Notes)
	Backup         string           `json:"backup,omitempty"` // a damaged live file was kept here
	// Refused is, for a dry run, why the merge would stop without Force.
	Refused string `json:"refused,omitempty"`
}

// ConflictLog is where a repository's recorded conflicts are kept (see
// merge.Record and merge.LogPath).
func ConflictLog(r *gitrepo.Repo) string { return merge.LogPath(r.CommonDir) }

// MergeFrom merges the snapshot theirs (a full hash, e.g. a remote's fetched
// snapshots; "" for none) into the memory: MergeAll of one snapshot.
func (h *History) MergeFrom(ctx context.Context, theirs string, opts MergeOptions) (*MergeResult, error) {
	var heads []string
	if theirs != "" {
		heads = []string{theirs}
	}
	return h.MergeAll(ctx, heads, opts)
}

// MergeAll merges the snapshots theirs (full hashes, none an ancestor of
// another, e.g. the independent ones of a remote's fetched refs) into the
// memory, under the writers' lock:
//
//   - the live memory is snapshotted first, so nothing unrecorded is merged;
//   - what is nothing new (ours, or an ancestor of ours) is left out; with
//     nothing left: no change;
//   - ours is empty or an ancestor of the one snapshot left: a
//     fast-forward, theirs' files are written (archive first) and Ref moves
//     to theirs;
//   - else each is merged by entry in turn (merge.Clones), against the
//     merge base of it and what was merged before it (ours and the
//     snapshots before it); the result is written (archive first, then the
//     active file), and one merge snapshot with parents ours and theirs is
//     committed, even when its tree is ours', so the next merge finds the
//     right base. Conflicts keep ours live and are added to the conflict
//     log.
//
// A step that would remove more than half of the entries stops with
// merge.ErrMassDeletion unless opts.Force, whatever theirs' snapshots say.
// A damaged live file is backed up before it is replaced.
//
// ctx stops MergeAll before it changes a file (a git it spawned is
// killed); once the files are rewritten, the ref is moved whatever ctx says.
func (h *History) MergeAll(ctx context.Context, theirs []string, opts MergeOptions) (*MergeResult, error) {
	h.reopen() // see objects a fetch just brought
	res := &MergeResult{}
	if len(theirs) > 0 {
		res.Theirs = theirs[0]
	}
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
		res.Snapshot, res.Kind = res.Ours, UpToDate
		for _, t := range theirs {
			if t == res.Ours {
				continue
			}
			if res.Ours != "" && !opts.Independent {
				if behind, err := h.isAncestor(ctx, t, res.Ours); err != nil || behind {
					if err != nil {
						return err
					}
					continue
				}
			}
			res.Heads = append(res.Heads, t)
		}
		if len(res.Heads) == 0 {
			return nil
		}
		res.Theirs = res.Heads[0]
		live, err := h.readLiveLocked()
		if err != nil {
			return err
		}
		p, err := h.planMerge(ctx, res, live, opts)
		if err != nil || opts.DryRun {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return h.applyMerge(res, old, live, p, opts)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// mergePlan is what a merge writes.
type mergePlan struct {
	next Files
	ff   bool
	log  []merge.Record // the conflict log after the merge
	rec  record         // the active file's change, for the merge snapshot's record
}

// planMerge computes the merge of res.Heads into the live files: res gets
// its kind, changes, conflicts and notes; the plan what to write.
func (h *History) planMerge(ctx context.Context, res *MergeResult, live Files, opts MergeOptions) (*mergePlan, error) {
	ff := res.Ours == ""
	if !ff && len(res.Heads) == 1 {
		var err error
		if ff = res.Ours == opts.Descends; !ff && opts.Descends == "" && !opts.Apart {
			if ff, err = h.isAncestor(ctx, res.Ours, res.Theirs); err != nil {
				return nil, err
			}
		}
		if ff && opts.DryRun { // unsnapshotted live changes make it a merge
			at, err := h.Files(res.Ours)
			if err != nil {
				return nil, err
			}
			ff = bytes.Equal(at.Memory, live.Memory) && bytes.Equal(at.Archive, live.Archive)
		}
	}
	ff = ff && len(res.Heads) == 1
	gone, err := h.Store.Gone()
	if err != nil {
		return nil, err
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
	p := &mergePlan{ff: ff}
	var sides []Files // each head's files
	for _, t := range res.Heads {
		f, err := h.Files(t)
		if err != nil {
			return nil, err
		}
		sides = append(sides, f)
	}
	if ff && len(gone) > 0 { // theirs brings back what this clone removed: merged, without it
		theirs := merge.Parse(sides[0].Memory, sides[0].Archive)
		kept := dropGone(theirs, ours, merge.State{}, gone)
		ff = len(kept.Active)+len(kept.Archive) == len(theirs.Active)+len(theirs.Archive)
		p.ff = ff
	}
	if ff {
		res.Kind = FastForward
		p.next = sides[0]
		theirLog, err := merge.ParseLog("of snapshot "+words.Short(res.Theirs), p.next.Conflicts)
		if err != nil {
			return nil, err
		}
		p.log = theirLog
		if err := h.guard(res, ours, merge.Result{State: merge.Parse(p.next.Memory, p.next.Archive)}, res.Theirs, opts); err != nil {
			return nil, err
		}
	} else {
		res.Kind = Merged
		state, err := h.mergeSides(ctx, res, ours, live, sides, p, gone, opts)
		if err != nil {
			return nil, err
		}
		p.next.Memory = renderLike(activeFile, live.Memory, sides[0].Memory, state.Active)
		p.next.Archive = renderLike(archiveFile, live.Archive, sides[0].Archive, state.Archive)
	}
	// Conflicts found in the live files' markers join the log; a merge
	// snapshot holds the log, so they travel with it.
	p.log = merge.Add(p.log, "conflict markers in "+h.Store.Path(), unmarked)
	p.next.Conflicts = merge.EncodeLog(p.log)
	tombs := live
	for _, side := range sides { // purged entries never come back
		p.next = withTombstones(p.next, tombs, side)
		tombs.Purged = p.next.Purged
	}
	p.rec = recordBetween(activeFile, live.Memory, p.next.Memory)
	res.Changes = p.rec.changes
	res.ArchiveChanges = recordBetween(archiveFile, live.Archive, p.next.Archive).changes
	return p, scanMerged(res, opts.Source) // a secret from the other side is neither merged nor pushed on
}

// mergeSides merges each head's files (sides, in res.Heads' order) into
// ours by entry, each against the merge base of it and what was merged
// before it; p gets the conflict log, res the conflicts, notes and the
// first merge base. It returns the merged state.
func (h *History) mergeSides(ctx context.Context, res *MergeResult, ours merge.State, live Files, sides []Files, p *mergePlan, gone map[string]bool, opts MergeOptions) (merge.State, error) {
	log, err := merge.ParseLog(ConflictLog(h.Repo), live.Conflicts)
	if err != nil {
		return ours, err
	}
	state := ours
	var merged []string // ours and the heads merged so far
	if res.Ours != "" {
		merged = append(merged, res.Ours)
	}
	for i, side := range sides {
		t := res.Heads[i]
		base, err := h.MergeBase(ctx, t, merged...)
		if err != nil {
			return ours, err
		}
		if i == 0 {
			res.Base = base
		}
		var baseState merge.State
		var baseLog []merge.Record
		if base != "" {
			bf, err := h.Files(base)
			if err != nil {
				return ours, err
			}
			baseState = merge.Parse(bf.Memory, bf.Archive)
			if baseLog, err = merge.ParseLog("of snapshot "+words.Short(base), bf.Conflicts); err != nil {
				return ours, err
			}
		}
		theirLog, err := merge.ParseLog("of snapshot "+words.Short(t), side.Conflicts)
		if err != nil {
			return ours, err
		}
		result := merge.Clones(baseState, state, merge.Parse(side.Memory, side.Archive))
		result.State = dropGone(result.State, state, baseState, gone)
		if err := h.guard(res, state, result, t, opts); err != nil {
			return ours, err
		}
		res.Conflicts, res.Notes = append(res.Conflicts, result.Conflicts...), append(res.Notes, result.Notes...)
		log = merge.Add(merge.Logs(baseLog, log, theirLog), opts.Source, append(result.Merged, result.Conflicts...))
		state = result.State
		merged = append(merged, t)
	}
	p.log = log
	return state, nil
}

// dropGone takes out of merged the entries whose ID this clone removed
// (gone: store.Store.Gone) that neither ours nor base holds: another
// clone brought them back (an older memsync's fold of an old copy, an
// editor's paste), after its own merge of the removal. An entry base holds
// is an edit on their side, which survives a deletion as merge.Clones says.
func dropGone(merged, ours, base merge.State, gone map[string]bool) merge.State {
	if len(gone) == 0 {
		return merged
	}
	held := map[string]bool{}
	for _, s := range []merge.State{ours, base} {
		for _, es := range [][]memfile.Entry{s.Active, s.Archive} {
			for i := range es {
				held[es[i].ID] = true
			}
		}
	}
	keep := func(es []memfile.Entry) []memfile.Entry {
		var out []memfile.Entry
		for _, e := range es {
			if !gone[e.ID] || held[e.ID] {
				out = append(out, e)
			}
		}
		return out
	}
	return merge.State{Active: keep(merged.Active), Archive: keep(merged.Archive)}
}

// guard stops a merge step from before to result that removes more than
// half of before's entries, unless opts.Force; a dry run notes it in
// res.Refused. What another clone's snapshot says of its removals
// (Memsync-Removal: deliberate) is not taken: anyone can write it.
func (h *History) guard(res *MergeResult, before merge.State, result merge.Result, theirs string, opts MergeOptions) error {
	if opts.Force {
		return nil
	}
	err := result.Guard(before)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("snapshot %s: %w", words.Short(theirs), err)
	if !opts.DryRun {
		return err
	}
	res.Refused = err.Error()
	return nil
}

// applyMerge writes a planned merge: a damaged live file is backed up, the
// conflict log, tombstones, archive and active file are written, and Ref
// moves to theirs (a fast-forward) or to a new merge snapshot.
func (h *History) applyMerge(res *MergeResult, old plumbing.Hash, live Files, p *mergePlan, opts MergeOptions) error {
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
	if err := merge.SaveLog(ConflictLog(h.Repo), p.log); err != nil {
		return err
	}
	if err := h.savePurged(live.Purged, p.next.Purged); err != nil {
		return err
	}
	if err := h.writeLocked(h.Store.ArchivePath(), live.Archive, p.next.Archive); err != nil {
		return err
	}
	if err := h.writeLocked(h.Store.Path(), live.Memory, p.next.Memory); err != nil {
		return err
	}
	commit := plumbing.NewHash(res.Theirs)
	b := &batch{}
	if !p.ff {
		commit = h.mergeCommit(b, res, old, p.rec, p.next, opts)
	}
	if err := h.publish(b, commit, old); err != nil {
		return err
	}
	res.Snapshot = commit.String()
	before, after := merge.Parse(live.Memory, live.Archive), merge.Parse(p.next.Memory, p.next.Archive)
	if err := h.Store.RecordGone(append(before.Active, before.Archive...), append(after.Active, after.Archive...)); err != nil {
		return err
	}
	if err := h.Store.RecordArrived(h.arrivals(res.Heads, before, after)); err != nil {
		return err
	}
	return h.Store.ClearRemovals()
}

// arrivals is, for each entry after holds and before does not, the author
// of the first of heads whose snapshot holds it: what history proves of
// who brought it, whatever its Author bullet claims.
func (h *History) arrivals(heads []string, before, after merge.State) map[string]string {
	had := map[string]bool{}
	for _, e := range append(before.Active, before.Archive...) {
		had[e.ID] = true
	}
	out := map[string]string{}
	for _, t := range heads {
		c, err := readCommit(h.st, plumbing.NewHash(t))
		if err != nil || c.author == "" {
			continue
		}
		f, err := h.Files(t)
		if err != nil {
			continue
		}
		theirs := merge.Parse(f.Memory, f.Archive)
		holds := map[string]bool{}
		for _, e := range append(theirs.Active, theirs.Archive...) {
			holds[e.ID] = true
		}
		for _, e := range append(after.Active, after.Archive...) {
			if _, done := out[e.ID]; !done && !had[e.ID] && holds[e.ID] {
				out[e.ID] = c.author
			}
		}
	}
	return out
}

// mergeCommit adds to b the merge snapshot of ours (old: the live files,
// snapshotted first) and theirs holding next, whose active file changed
// from ours' as rec says, and returns its hash.
func (h *History) mergeCommit(b *batch, res *MergeResult, old plumbing.Hash, rec record, next Files, opts MergeOptions) plumbing.Hash {
	// The chunks both sides hold are in the repository already.
	var parents []plumbing.Hash
	if !old.IsZero() {
		parents = append(parents, old)
	}
	for _, t := range res.Heads {
		parents = append(parents, plumbing.NewHash(t))
	}
	var sides []layout
	for _, c := range parents {
		if l, err := h.layoutAt(c); err == nil {
			sides = append(sides, l)
		}
	}
	tree := addFiles(b, next, haveOf(sides...))
	msg := message("memsync merge of "+opts.Source, opts.Provenance, "", rec, true)
	return b.add(newObject(plumbing.CommitObject,
		encodeCommit(tree, parents, time.Now(), msg, h.identity())))
}

// readLocked runs fn under the readers' lock: it creates nothing (no
// home, no lock file) where there is no memory yet, and, as memfile's
// readers do, reads without the lock where the lock file cannot be created
// (a read-only home): appends are single writes and rewrites renames, so
// the files read are whole.
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
// its preamble and dialect; a file that did not exist takes other's (the
// file other holds), or the plain header. No entries and no file stay no
// file.
func renderLike(f *memfile.File, data, other []byte, entries []memfile.Entry) []byte {
	out := *f
	if data == nil {
		if len(entries) == 0 {
			return nil
		}
		out = *memfile.Parse(other)
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

// MergeBase is the best common ancestor of a and a merge of others, ""
// when they have none (or others is empty). The answer for two commits is
// kept, so a sync that asks before merging does not ask git twice.
func (h *History) MergeBase(ctx context.Context, a string, others ...string) (string, error) {
	if len(others) != 1 {
		return h.mergeBase(ctx, a, others...)
	}
	key := [2]string{min(a, others[0]), max(a, others[0])} // symmetric for two
	if base, ok := h.bases[key]; ok {
		return base, nil
	}
	base, err := h.mergeBase(ctx, a, others...)
	if err == nil {
		if h.bases == nil {
			h.bases = map[[2]string]string{}
		}
		h.bases[key] = base
	}
	return base, err
}

// mergeBase is MergeBase, asking git.
func (h *History) mergeBase(ctx context.Context, a string, others ...string) (string, error) {
	if len(others) == 0 {
		return "", nil
	}
	cmd := gitcmd.CommandContext(ctx, h.Repo.CommonDir, append([]string{"--git-dir=" + h.Repo.CommonDir, "merge-base", a}, others...)...)
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
