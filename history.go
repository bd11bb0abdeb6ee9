package memsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/memsync/memsync/internal/gitconfig"
	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/internal/remote"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/memfile"
)

// ErrNoHistory is what the history operations (Snapshot, Log, Diff,
// Rollback, Sync) return on the global layer: only a repository's memory
// has snapshots.
var ErrNoHistory = errors.New("the global layer has no history: snapshots, log, diff, rollback and sync work on a git repository's memory")

// history is the snapshot history of the repository's memory; its lock
// waits end with ctx.
func (m *Memory) history(ctx context.Context) (*history.History, error) {
	if m.repo == nil {
		return nil, ErrNoHistory
	}
	h := history.Open(m.repo, m.st(ctx))
	h.Detach = m.opts.Detach
	return h, nil
}

// MaintainResult is what Maintain did.
type MaintainResult struct {
	// Rolled is how many packs of the repository's object store were
	// rolled into one (0: nothing was due).
	Rolled int `json:"rolled"`
}

// Maintain packs the repository's object store, as snapshots and syncs do
// on their own once it holds more than a few packs (in the background when
// Options.Detach is set): the small packs are rolled into one, as `git
// repack --geometric=2` chooses them, and the snapshots join git's
// commit-graph. It does nothing while too few packs are there, and waits
// (up to the lock timeout) for a packing already at work.
func (m *Memory) Maintain(ctx context.Context) (*MaintainResult, error) {
	h, err := m.history(ctx)
	if err != nil {
		return nil, err
	}
	n, err := h.Maintain(ctx, max(0, m.store.LockTimeout))
	return &MaintainResult{Rolled: n}, err
}

// SnapshotOptions tune Snapshot.
type SnapshotOptions struct {
	Message string // the snapshot's subject ("" for memsync's own)
	// AcceptRemoval snapshots a memory that lost more than half of the
	// newest snapshot's entries outside memsync (an editor, a script); without
	// it Snapshot refuses such a memory (KindRefused).
	AcceptRemoval bool
}

// SnapshotResult is what Snapshot did.
type SnapshotResult struct {
	Created  bool      `json:"created"`  // a new snapshot was committed
	Snapshot *Snapshot `json:"snapshot"` // the newest snapshot now; nil when there is none

	problems []memfile.Problem // the damage found in the active file, snapshotted as it is
}

// Snapshot commits the memory (the active file and the archive) onto
// refs/memsync/snapshots, as the hooks do after every commit; nothing is
// committed when the memory is unchanged since the newest snapshot. ctx
// stops it before it moves the ref.
func (m *Memory) Snapshot(ctx context.Context, o SnapshotOptions) (*SnapshotResult, error) {
	res, err := m.snapshot(ctx, o.Message, "", o.AcceptRemoval, nil)
	if err != nil {
		return nil, m.forRole(err)
	}
	if n := len(res.problems); n > 0 {
		m.warn(fmt.Sprintf("%s has %d problem(s) (first: %s); snapshotted as it is", m.Path(), n, res.problems[0]))
	}
	return res, nil
}

// snapshot is Snapshot by hook ("" for none), without the warning,
// recording prov (nil: HEAD as it is now).
func (m *Memory) snapshot(ctx context.Context, msg, hook string, accept bool, prov *history.Provenance) (*SnapshotResult, error) {
	h, err := m.history(ctx)
	if err != nil {
		return nil, err
	}
	h.AcceptRemoval = accept
	if prov == nil {
		p := h.CurrentProvenance(hook)
		prov = &p
	}
	res, err := h.Take(ctx, msg, *prov)
	if err != nil {
		return nil, err
	}
	out := &SnapshotResult{Created: res.Created, problems: res.Problems}
	if res.Snapshot != nil {
		snap := snapshotOf(res.Snapshot)
		out.Snapshot = &snap
	}
	return out, nil
}

// LogOptions tune Log.
type LogOptions struct {
	N     int  // at most N snapshots (0: all)
	Stat  bool // name the entries each snapshot added, removed and changed (LogEntry.Changes)
	Patch bool // Stat, and each change as a line diff of the entry
	// Entry lists only the snapshots that touched one entry: an ID, a
	// unique prefix, a number, key or alias as Get resolves them in the
	// active memory, then in the archive; an entry no longer in either by
	// its ID or a unique prefix of it.
	Entry string
}

// Log lists the snapshots newest first, each with its provenance and what
// changed in the active file since the snapshot before it; o bounds the
// list, names the entries each snapshot changed, or follows one entry
// (every snapshot, merges' second parents too, compared with its first
// parent). An Entry that no snapshot touched is ErrNotFound.
func (m *Memory) Log(ctx context.Context, o LogOptions) ([]LogEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h, err := m.history(ctx)
	if err != nil {
		return nil, err
	}
	var entries []history.LogEntry
	switch {
	case o.Entry != "":
		ref, rerr := m.entryRef(ctx, o.Entry)
		if rerr != nil {
			return nil, rerr
		}
		entries, err = h.EntryLog(ref, o.N, o.Patch)
		if err == nil && len(entries) == 0 && ref.Prefix != "" {
			return nil, fmt.Errorf("%w: %q (not in the memory, its archive or any snapshot)", memfile.ErrNotFound, o.Entry)
		}
	case o.Stat || o.Patch:
		entries, err = h.LogChanges(o.N, o.Patch)
	default:
		entries, err = h.Log(o.N)
	}
	return logOf(entries), err
}

// entryRef resolves the entry LogOptions.Entry names: in the active
// memory, then (unless it is a number, a place in the list) in the
// archive, else as an ID or prefix of one that only history holds.
func (m *Memory) entryRef(ctx context.Context, ref string) (history.EntryRef, error) {
	ref = strings.TrimSpace(ref)
	for _, v := range []View{{}, {Archive: true}} {
		f, err := m.load(ctx, v)
		if err != nil {
			return history.EntryRef{}, err
		}
		i, err := f.Find(ref)
		if err == nil {
			e := &f.Entries[i]
			r := history.EntryRef{IDs: []string{e.ID}, Derived: e.DerivedID()}
			for _, fl := range e.Extra {
				if v := strings.TrimSpace(fl.Value); (fl.Key == memfile.AliasField || fl.Key == memfile.SourceIDField) && v != "" {
					r.IDs = append(r.IDs, v)
				}
			}
			return r, nil
		}
		if !errors.Is(err, memfile.ErrNotFound) {
			return history.EntryRef{}, err
		}
		if _, nerr := strconv.Atoi(ref); nerr == nil {
			return history.EntryRef{}, err
		}
	}
	if len(ref) < memfile.MinPrefix || strings.ContainsFunc(ref, unicode.IsSpace) {
		return history.EntryRef{}, fmt.Errorf("%w: %q (an entry no longer in the memory is named by its ID or a prefix of at least %d characters)", memfile.ErrNotFound, ref, memfile.MinPrefix)
	}
	return history.EntryRef{Prefix: ref}, nil
}

// Change is one entry that differs between two states of the memory,
// matched by ID.
type Change struct {
	Kind   string `json:"kind"` // added, removed or changed
	ID     string `json:"id"`
	Before *Entry `json:"before"` // nil when added
	After  *Entry `json:"after"`  // nil when removed
}

// changesOf converts history's changes.
func changesOf(changes []history.Change) []Change {
	out := []Change{}
	for _, ch := range changes {
		c := Change{Kind: ch.Kind, ID: ch.ID}
		if ch.Before != nil {
			e := entryOf(ch.Before, 0)
			c.Before = &e
		}
		if ch.After != nil {
			e := entryOf(ch.After, 0)
			c.After = &e
		}
		out = append(out, c)
	}
	return out
}

// LiveRev names the memory files as they are now, for Diff.
const LiveRev = "live"

// DiffOptions tune Diff.
type DiffOptions struct {
	Text bool // also a line diff of the files (DiffResult.Text)
}

// DiffResult is what changed from one revision to another.
type DiffResult struct {
	From    string   `json:"from"` // the snapshot's full hash, or "live"
	To      string   `json:"to"`
	Changes []Change `json:"changes"` // the active file's entries
	// Text is, with DiffOptions.Text, a line diff of memories.md followed by
	// one of the archive ("archive/memories.md:" and its diff) when it
	// changed.
	Text *string `json:"text,omitempty"`
}

// Diff compares the memory at revision a with the memory at b. A revision
// is anything git rev-parse understands that names a snapshot
// (refs/memsync/snapshots~2, a hash or a prefix of one), "~N" for the N-th
// snapshot before the newest, or LiveRev for the files as they are now. a ""
// is the newest snapshot (KindNotFound without one), b "" is live.
func (m *Memory) Diff(ctx context.Context, a, b string, o DiffOptions) (*DiffResult, error) {
	h, err := m.history(ctx)
	if err != nil {
		return nil, err
	}
	if a == "" {
		head, err := h.Head()
		if err != nil {
			return nil, err
		}
		a = head.Commit
	}
	if b == "" {
		b = LiveRev
	}
	from, fa, err := revFiles(ctx, h, a)
	if err != nil {
		return nil, err
	}
	to, fb, err := revFiles(ctx, h, b)
	if err != nil {
		return nil, err
	}
	res := &DiffResult{From: from, To: to, Changes: changesOf(history.Compare(memfile.Parse(fa.Memory), memfile.Parse(fb.Memory)))}
	if o.Text {
		text := history.TextDiff(string(fa.Memory), string(fb.Memory))
		if d := history.TextDiff(string(fa.Archive), string(fb.Archive)); d != "" {
			text += "archive/memories.md:\n" + d
		}
		res.Text = &text
	}
	return res, nil
}

// revFiles reads the memory files of a revision or of LiveRev.
func revFiles(ctx context.Context, h *history.History, rev string) (string, history.Files, error) {
	if rev == LiveRev {
		f, err := h.Live()
		return LiveRev, f, err
	}
	hash, err := h.Resolve(ctx, rev)
	if err != nil {
		return "", history.Files{}, err
	}
	f, err := h.Files(hash)
	return hash, f, err
}

// Rollback brings the memory back as it was at snapshot rev (read as by
// Diff): the whole memory, or only the entries refs name (full IDs, unique
// prefixes, or numbers as rev's list had them) — changed back, put back, or
// removed when they did not exist at rev. The memory is snapshotted before
// and after, so the result's Before undoes it. Owner and admin only.
func (m *Memory) Rollback(ctx context.Context, rev string, refs ...string) (*RollbackResult, error) {
	h, err := m.history(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.allow(policy.OpRollback); err != nil {
		return nil, err
	}
	if err := m.beforeWrite(); err != nil {
		return nil, err
	}
	target, err := h.Resolve(ctx, rev)
	if err != nil {
		return nil, err
	}
	res, err := h.Rollback(ctx, target, refs, h.CurrentProvenance(""))
	return rollbackOf(res), err
}

// SyncOptions tune Sync.
type SyncOptions struct {
	DryRun bool // fetch, and report what the merge would change; write nothing else
	Force  bool // go ahead with a merge that removes more than half of the entries (owner and admin only)
	// AcceptRemoval lets the snapshot before the merge take a memory that
	// lost more than half of its entries outside memsync (see
	// SnapshotOptions.AcceptRemoval), so the removal is pushed.
	AcceptRemoval bool
	// AllowUnrelated merges a remote's memory that shares no snapshot with
	// this one and was taken in another project's commits (refused
	// otherwise: a mistyped or re-pointed remote).
	AllowUnrelated bool
	// Timeout bounds each git fetch and push; zero means
	// Options.SyncTimeout. A remote that does not answer in time is an
	// error (its hint says so); git and its children are stopped.
	Timeout time.Duration
}

// SyncResult is what Sync did.
type SyncResult struct {
	Remote string `json:"remote"`
	// Clone is this clone's ID: its snapshots are on the remote at
	// refs/memsync/clones/<Clone>.
	Clone string `json:"clone"`
	// Fetched is the remote's newest shared snapshot (its
	// refs/memsync/snapshots, else a clone's), "" when it has none.
	Fetched string `json:"fetched"`
	// Merged names the remote refs whose snapshots were merged in (or with
	// DryRun would be), e.g. "refs/memsync/clones/ana-1f2e3d4c".
	Merged []string `json:"merged"`
	// Kind is the most any merge did: "up-to-date" (theirs is nothing
	// new), "fast-forward" (ours had nothing theirs lacks) or "merged" (by
	// entry, in a merge snapshot).
	Kind   string `json:"kind"`
	Pushed bool   `json:"pushed"`
	Tries  int    `json:"tries"` // fetch, merge and push rounds
	// Snapshot is our newest snapshot after the sync: what the remote
	// holds at this clone's ref after a push.
	Snapshot string   `json:"snapshot"`
	Notes    []string `json:"notes,omitempty"` // what the merges did a person should know
	// Purged are the entries purged here because the remote's tombstones
	// name them (another clone ran Purge).
	Purged []string `json:"purged,omitempty"`
	// Prune says, after Purged, whether the old snapshots left this
	// clone's object store (the sync runs git gc --prune=now), or what to run.
	Prune  string `json:"prune,omitempty"`
	Backup string `json:"backup,omitempty"` // where a damaged memory file's content was kept
	// Refused is, for a dry run, why the sync would stop without Force.
	Refused        string         `json:"refused,omitempty"`
	DryRun         bool           `json:"dry_run"`
	Changes        []Change       `json:"changes"`         // the active file's entries the merges changed
	ArchiveChanges []Change       `json:"archive_changes"` // the archive's
	Conflicts      []SyncConflict `json:"conflicts"`       // entries edited differently on both sides: ours kept
}

// SyncConflict is an entry a sync found edited differently on both sides
// (Conflicts shows both versions).
type SyncConflict struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Sync exchanges the memory with a git remote ("" for the current branch's
// remote, else origin): snapshot, fetch the remote's snapshots, merge them
// entry by entry, push back with a lease. It returns what
// it did also when it fails part-way (Remote is always set; a merge of
// both sides is made locally only once it is pushed). ctx kills a fetch or
// push under way.
func (m *Memory) Sync(ctx context.Context, name string, o SyncOptions) (*SyncResult, error) {
	h, err := m.history(ctx)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = remote.DefaultRemote(h)
	}
	res, err := m.sync(ctx, h, name, o)
	if err != nil {
		err = m.forRole(&syncError{remote: name, err: err})
	}
	return res, err
}

// sync is Sync with the remote's name known.
func (m *Memory) sync(ctx context.Context, h *history.History, name string, o SyncOptions) (*SyncResult, error) {
	out := &SyncResult{Remote: name, DryRun: o.DryRun, Changes: []Change{}, ArchiveChanges: []Change{}, Conflicts: []SyncConflict{}}
	if o.Force && !o.DryRun {
		if err := m.allow(policy.OpSyncForce); err != nil {
			return out, err
		}
	}
	if !o.DryRun {
		if err := m.beforeWrite(); err != nil {
			return out, err
		}
	}
	if o.Timeout == 0 {
		o.Timeout = m.opts.SyncTimeout
	}
	h.AcceptRemoval = o.AcceptRemoval
	// The merge's rewrite is indexed for search while git pushes.
	m.index.deferring.Add(1)
	pushing := func() func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			m.refreshIndex(ctx, false) // a cache: the sync does not wait for the lock to be let go
		}()
		return func() { <-done }
	}
	res, err := remote.Sync(ctx, h, name, remote.Options{Force: o.Force, AllowUnrelated: o.AllowUnrelated, DryRun: o.DryRun, Timeout: o.Timeout, Provenance: h.CurrentProvenance(""), Pushing: pushing})
	m.index.deferring.Add(-1)
	m.refreshIndex(ctx, true) // a rewrite no push followed
	if err == nil && res != nil && len(res.Purged) > 0 && !o.DryRun {
		// Another clone's purge, applied here: its old objects go now, as
		// purge --prune drops them, or the secret stays in this clone.
		if perr := prune(ctx, h); perr != nil {
			out.Prune = "not pruned (" + perr.Error() + "): run 'git gc --prune=now' to drop the old snapshots"
		} else {
			out.Prune = "dropped the old snapshots from this clone (git gc --prune=now)"
		}
	}
	if !o.DryRun {
		h.MaintainSoon(ctx) // a fetch adds a pack; the sync stands whatever packing does
	}
	if res == nil {
		return out, err
	}
	out.Remote, out.Clone, out.Fetched, out.Merged = res.Remote, res.Clone, res.Fetched, res.Merged
	out.Kind, out.Pushed, out.Tries, out.Snapshot = res.Kind, res.Pushed, res.Tries, res.Snapshot
	out.Notes, out.Purged, out.Backup, out.Refused = res.Notes, res.Purged, res.Backup, res.Refused
	out.Changes, out.ArchiveChanges = changesOf(res.Changes), changesOf(res.ArchiveChanges)
	for _, cf := range res.Conflicts {
		out.Conflicts = append(out.Conflicts, SyncConflict{cf.ID, cf.Ours.Heading()})
	}
	return out, err
}

// Conflict is a recorded conflict: an entry edited differently on two sides
// (by a sync, a merge of conflict markers or the merge driver). Ours is what
// the memory holds.
type Conflict struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Source string `json:"source"` // what recorded it
	Time   string `json:"time"`
	Base   *Entry `json:"base"` // the common version, nil when unknown
	Ours   Entry  `json:"ours"`
	Theirs Entry  `json:"theirs"`
	Diff   string `json:"diff"` // a line diff from ours to theirs; for a text merge, from Before to Ours
	// Kind is "conflict" (ours kept, theirs recorded) or "merged": both
	// sides' edits merged as text, Ours the merged entry and Before ours
	// before the merge, kept for a person to review.
	Kind   string `json:"kind"`
	Before *Entry `json:"before,omitempty"`

	ours, theirs string
}

// ErrEditCancelled is what Conflict.Edited returns when the edited text holds
// no entry.
var ErrEditCancelled = errors.New("no entry left in the edited file; nothing changed")

// EditText is the text a person edits to settle the conflict by hand: both
// versions as the memory file spells them, ours first, under a comment that
// says what to do. Edited reads it back.
func (c *Conflict) EditText() string {
	return "# memsync resolve " + c.ID + ": keep one version of this entry, or combine the\n" +
		"# two into one, then save and quit. Text above the first '## ' line is ignored;\n" +
		"# leave no entry to cancel. First ours (in the memory now), then theirs.\n\n" +
		c.ours + "\n" + c.theirs
}

// Edited reads back the edited text: the one entry left, with the
// conflict's ID, for Resolution.Edited. No entry is ErrEditCancelled; more
// than one is an error.
func (c *Conflict) Edited(text []byte) (Entry, error) {
	switch f := memfile.Parse(text); len(f.Entries) {
	case 0:
		return Entry{}, ErrEditCancelled
	case 1:
		e := f.Entries[0]
		e.ID = c.ID
		out := entryOf(&e, 0)
		out.src = &e
		return out, nil
	default:
		return Entry{}, fmt.Errorf("the edited file holds %d entries", len(f.Entries))
	}
}

func conflictOf(r *merge.Record) Conflict {
	base, ours, theirs := r.Versions()
	c := Conflict{ID: r.ID, Title: r.Title, Source: r.Source, Time: r.Time,
		Ours: entryOf(&ours, 0), Theirs: entryOf(&theirs, 0), Diff: history.TextDiff(r.Ours, r.Theirs),
		ours: r.Ours, theirs: r.Theirs}
	if base != nil {
		b := entryOf(base, 0)
		c.Base = &b
	}
	c.Kind = "conflict"
	if r.Kind == merge.Merged {
		before := *r
		before.Ours = r.Before
		_, b, _ := before.Versions()
		e := entryOf(&b, 0)
		c.Kind, c.Before, c.Diff = merge.Merged, &e, history.TextDiff(r.Before, r.Ours)
	}
	return c
}

// Conflicts returns the recorded conflicts, oldest first.
func (m *Memory) Conflicts(ctx context.Context) ([]Conflict, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rs, err := merge.LoadLog(m.conflictLog)
	if err != nil {
		return nil, err
	}
	out := []Conflict{}
	for i := range rs {
		out = append(out, conflictOf(&rs[i]))
	}
	return out, nil
}

// Conflict returns the recorded conflict ref names (its ID or a unique
// prefix; ErrNotFound or ErrAmbiguous otherwise).
func (m *Memory) Conflict(ctx context.Context, ref string) (Conflict, error) {
	if err := ctx.Err(); err != nil {
		return Conflict{}, err
	}
	rs, err := merge.LoadLog(m.conflictLog)
	if err != nil {
		return Conflict{}, err
	}
	i, err := merge.Find(rs, ref)
	if err != nil {
		return Conflict{}, err
	}
	return conflictOf(&rs[i]), nil
}

// Keep is the version Resolve keeps.
type Keep string

// The versions Resolve can keep.
const (
	KeepOurs   Keep = "ours"   // the memory's version
	KeepTheirs Keep = "theirs" // the other side's
	KeepEdit   Keep = "edit"   // Resolution.Edited
)

// Resolution is how Resolve settles a conflict.
type Resolution struct {
	Keep Keep
	// Edited is, for KeepEdit, the entry to keep (its ID is set to the
	// conflict's).
	Edited *Entry
	// Exact: the reference is the conflict's whole ID, never a prefix of
	// another's (a page or a program that showed one conflict settles that
	// one, even when another process settled it meanwhile: ErrNotFound).
	Exact bool
}

// ResolveResult is what Resolve did.
type ResolveResult struct {
	ID       string `json:"id"`
	Kept     Keep   `json:"kept"`
	Entry    Entry  `json:"entry"`
	Snapshot string `json:"snapshot"` // "" when the memory was unchanged since the last snapshot (and on the global layer)
}

// ArchivedError is Resolve's refusal to replace an entry that was archived
// since the conflict was recorded.
type ArchivedError struct{ ID string }

func (e *ArchivedError) Error() string { return "entry " + e.ID + " is in the archive now" }

// Resolve settles the recorded conflict ref names (as Conflict finds it):
// the kept version replaces the memory's entry (or is added when the memory
// no longer has it; an archived one is an *ArchivedError), the conflict
// leaves the record, and a repository's memory is snapshotted (before as
// Delete is, and after), so the next sync carries the result. A kept
// version (theirs, or edited) holding a secret is refused (ErrSecret)
// unless ctx comes from AllowSecrets. Owner and admin only.
func (m *Memory) Resolve(ctx context.Context, ref string, r Resolution) (*ResolveResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := m.allow(policy.OpResolve); err != nil {
		return nil, err
	}
	switch r.Keep {
	case KeepOurs, KeepTheirs:
	case KeepEdit:
		if r.Edited == nil {
			return nil, fmt.Errorf("%w: resolve keeping an edited entry needs the entry", memfile.ErrInvalid)
		}
		if strings.TrimSpace(r.Edited.Content) == "" {
			return nil, fmt.Errorf("%w: %w", memfile.ErrInvalid, ErrEmpty)
		}
	default:
		return nil, fmt.Errorf("%w: resolve keeps ours, theirs or an edited entry, not %q", memfile.ErrInvalid, r.Keep)
	}
	if err := m.beforeWrite(); err != nil {
		return nil, err
	}
	st := m.undoable(ctx, "resolve")
	logPath := m.conflictLog
	rs, err := merge.LoadLog(logPath)
	if err != nil {
		return nil, err
	}
	var i int
	if r.Exact { // the whole ID: neither a prefix's match nor its ambiguity
		if i = slices.IndexFunc(rs, func(x merge.Record) bool { return x.ID == ref }); i < 0 {
			return nil, fmt.Errorf("%w: no recorded conflict %q", memfile.ErrNotFound, ref)
		}
	} else if i, err = merge.Find(rs, ref); err != nil {
		return nil, err
	}
	rec := rs[i]
	_, keep, theirs := rec.Versions()
	switch r.Keep {
	case KeepTheirs:
		keep = theirs
	case KeepEdit:
		keep = fileEntry(r.Edited)
		keep.ID = rec.ID
	}
	if r.Keep != KeepOurs {
		if err := m.allowAsked(ctx, &keep); err != nil {
			return nil, err
		}
		if err := m.store.Validate(&keep); err != nil {
			return nil, err
		}
		if err := setEntry(st, keep); err != nil {
			return nil, err
		}
	}
	err = m.st(ctx).WithLock(func() error {
		rs, err := merge.LoadLog(logPath)
		if err != nil {
			return err
		}
		return merge.SaveLog(logPath, merge.Forget(rs, rec.ID))
	})
	if err != nil {
		return nil, err
	}
	out := &ResolveResult{ID: rec.ID, Kept: r.Keep, Entry: entryOf(&keep, 0)}
	if m.repo != nil {
		res, err := m.snapshot(ctx, "memsync resolve "+rec.ID+" ("+string(r.Keep)+")", "", false, nil)
		if err != nil {
			return nil, err
		}
		if res.Created {
			out.Snapshot = res.Snapshot.Commit
		}
	}
	return out, nil
}

// setEntry replaces the active entry with e's ID by e, or appends e when the
// memory no longer has it, through st. An archived entry is left to restore
// first.
func setEntry(st *store.Store, e memfile.Entry) error {
	arch, err := st.LoadArchive()
	if err != nil {
		return err
	}
	return st.Update(func(f *memfile.File) error {
		for i := range f.Entries {
			if f.Entries[i].ID == e.ID {
				f.Entries[i] = e
				return nil
			}
		}
		for _, a := range arch.Entries {
			if a.ID == e.ID {
				return &ArchivedError{e.ID}
			}
		}
		f.Entries = append(f.Entries, e)
		return nil
	})
}

// NeverSynced names the remote a fresh clone would fetch its team's memory
// from ("" when there is nothing to say): the repository has that remote
// (the branch's, else origin), and memsync has neither taken a snapshot
// nor synced here. The CLI says so when a list, search or inject finds the
// memory empty. It reads files only.
func (m *Memory) NeverSynced(ctx context.Context) string {
	if m.repo == nil {
		return ""
	}
	h, err := m.history(ctx)
	if err != nil {
		return ""
	}
	if ref, err := h.RefHash(history.Ref); err != nil || ref != "" {
		return ""
	}
	if entries, err := os.ReadDir(filepath.Join(m.repo.CommonDir, "refs", "memsync", "remotes")); err == nil && len(entries) > 0 {
		return ""
	}
	if packed, err := os.ReadFile(filepath.Join(m.repo.CommonDir, "packed-refs")); err == nil && strings.Contains(string(packed), " refs/memsync/") {
		return ""
	}
	name := remote.DefaultRemote(h)
	if url, ok := gitconfig.Repo(m.repo.CommonDir, m.repo.GitDir).Get("remote." + name + ".url"); !ok || url == "" {
		return ""
	}
	return name
}
