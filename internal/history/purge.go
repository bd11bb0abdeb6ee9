package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/internal/secrets"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/worktree"
)

// Purging takes entries out of the whole history: every snapshot reachable
// from Ref (merges too) is rewritten without them, in parent order, each
// commit keeping its author, committer, times and provenance trailers; its
// record of changes (record.go) is recomputed where the entries were, and a
// Memsync-Rollback trailer follows the commit it named. A commit that held
// none of them and whose parents are unchanged keeps its hash, and the
// rewrite is a function of the commits and the purged IDs alone, so two
// clones that purge the same entries from the same snapshots get the same
// commits. All new objects are written as one kept pack, then Ref moves
// once: a killed purge leaves the old history or the new one.
//
// The tombstones: the purged IDs, one per line, in <common dir>/memsync/purged
// and in every later snapshot's tree (the blob "purged"). A purge commit on
// top of the rewritten history names them (trailer Memsync-Purged). A sync
// that fetches a snapshot whose tombstones name entries this clone still
// has purges them here first (Reconcile), so the merge does not bring them
// back; one whose history lacks this clone's tombstones is rewritten the
// same way before it is merged, so what sync pushes holds none of them.

// purgedName is the tombstones' name in a snapshot's tree.
const purgedName = "purged"

// trailerPurged names, in a purge commit, each entry it purged.
const trailerPurged = "Memsync-Purged"

// PurgedPath is where a repository keeps its tombstones.
func PurgedPath(r *worktree.Repo) string {
	return filepath.Join(r.CommonDir, "memsync", purgedName)
}

// ErrNothingToPurge is the error of a purge whose IDs or rule match no
// entry of the memory or its history.
var ErrNothingToPurge = errors.New("no entry of the memory or its history matches")

// parsePurged reads tombstones.
func parsePurged(data []byte) map[string]bool {
	set := map[string]bool{}
	for l := range strings.SplitSeq(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			set[l] = true
		}
	}
	return set
}

// encodePurged writes tombstones, sorted; nil for none.
func encodePurged(set map[string]bool) []byte {
	if len(set) == 0 {
		return nil
	}
	ids := make([]string, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return []byte(strings.Join(ids, "\n") + "\n")
}

// PurgeOptions says what Purge takes out.
type PurgeOptions struct {
	// IDs are entries by ID or unique ID prefix, found in the live memory
	// or anywhere in the history.
	IDs []string
	// Rule purges every entry the secret rule of this ID finds (a gitleaks
	// rule, e.g. "aws-access-token"), except where the entry's
	// Secret-Allowed bullet names the rule.
	Rule   string
	DryRun bool // find what would be purged; write nothing
	// Provenance is the purge commit's.
	Provenance Provenance
}

// PurgeResult is what Purge did, or with DryRun would do.
type PurgeResult struct {
	IDs       []string `json:"ids"`       // the entries purged
	Titles    []string `json:"titles"`    // their titles (one line each), as last seen
	Snapshots int      `json:"snapshots"` // snapshots in the history
	Holding   int      `json:"holding"`   // snapshots that held one of them
	Rewritten int      `json:"rewritten"` // snapshots rewritten (new hashes)
	Live      int      `json:"live"`      // entries taken out of the live memory and archive
	Old       string   `json:"old"`       // Ref before ("" none)
	Snapshot  string   `json:"snapshot"`  // Ref after (a dry run: as before)
}

// Purge takes entries out of the live memory, the archive, the conflict log
// and every snapshot (see above), and records them as tombstones, all under
// the writers' lock. Pushing the new history is the caller's (a sync).
func (h *History) Purge(ctx context.Context, opts PurgeOptions) (*PurgeResult, error) {
	if len(opts.IDs) == 0 && opts.Rule == "" {
		return nil, fmt.Errorf("%w: name entries or a rule", ErrNothingToPurge)
	}
	res := &PurgeResult{IDs: []string{}, Titles: []string{}}
	with := h.Store.WithLock
	if opts.DryRun {
		with = h.readLocked
	}
	err := with(func() error {
		old, err := h.head()
		if err != nil {
			return err
		}
		live, err := h.readLiveLocked()
		if err != nil {
			return err
		}
		rw := &rewriter{h: h, memo: map[plumbing.Hash]filtered{}}
		commits, err := h.commits(ctx, old)
		if err != nil {
			return err
		}
		drop, titles, holding, err := rw.choose(live, commits, opts)
		if err != nil {
			return err
		}
		res.Snapshots, res.Holding = len(commits), holding
		if !old.IsZero() {
			res.Old, res.Snapshot = old.String(), old.String()
		}
		for _, id := range sortedKeys(drop) {
			res.IDs = append(res.IDs, id)
			res.Titles = append(res.Titles, oneLine(titles[id], maxTitle))
		}
		if opts.DryRun {
			return nil
		}
		return h.purgeLocked(ctx, rw, old, commits, live, drop, opts.Provenance, res)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// purgeLocked rewrites the history from old (its commits in parent order)
// and the live files without drop; the caller holds the writers' lock.
func (h *History) purgeLocked(ctx context.Context, rw *rewriter, old plumbing.Hash, commits []plumbing.Hash, live Files, drop map[string]bool, p Provenance, res *PurgeResult) error {
	rw.drop, rw.b, rw.mapped, rw.memChanged = drop, &batch{}, map[plumbing.Hash]plumbing.Hash{}, map[plumbing.Hash]bool{}
	tip, err := rw.rewrite(commits, old)
	if err != nil {
		return err
	}
	for _, c := range commits {
		if rw.mapped[c] != c {
			res.Rewritten++
		}
	}
	tomb := parsePurged(live.Purged)
	for id := range drop {
		tomb[id] = true
	}
	next := Files{Purged: encodePurged(tomb)}
	var n1, n2 int
	next.Memory, n1 = dropEntries(live.Memory, drop)
	next.Archive, n2 = dropEntries(live.Archive, drop)
	next.Conflicts = dropConflicts(live.Conflicts, drop)
	res.Live = n1 + n2
	// The purge commit: the live memory without the entries, on top of the
	// rewritten history; what it adds to it is scanned as a snapshot's.
	var before Files // the rewritten tip's: old's without the entries
	if !old.IsZero() {
		l, err := h.layoutAt(old)
		if err != nil {
			return err
		}
		for _, x := range []struct {
			s    stored
			name string
			dst  *[]byte
		}{{l.memory, MemoryName, &before.Memory}, {l.archive, ArchiveName, &before.Archive}} {
			f, err := rw.file(x.s, x.name)
			if err != nil {
				return err
			}
			if x.s.present() {
				*x.dst = f.out
			}
		}
	}
	rec, _ := recordOf(before.Memory, next.Memory, true)
	rec.deliberate = true
	if err := scanTaken(next, before, rec, true, true, true); err != nil {
		return err
	}
	var sides []layout
	for _, c := range commits {
		if l, err := h.layoutAt(c); err == nil {
			sides = append(sides, l)
		}
	}
	tree := addFiles(rw.b, next, haveOf(sides...))
	msg := message(fmt.Sprintf("memsync purge of %d entr%s", len(drop), map[bool]string{true: "y", false: "ies"}[len(drop) == 1]), p, "", rec, true)
	for _, id := range sortedKeys(drop) {
		msg += trailerPurged + ": " + oneLine(id, maxID) + "\n"
	}
	commit := rw.b.add(newObject(plumbing.CommitObject, encodeCommit(tree, []plumbing.Hash{tip}, time.Now(), msg, h.identity())))
	if err := ctx.Err(); err != nil {
		return err // nothing written yet
	}
	// The tombstones first (a list of IDs, harmless alone), then the live
	// files (archive first), then the ref, once.
	if err := fsutil.WriteFile(PurgedPath(h.Repo), next.Purged, h.Store.FilePerm()); err != nil {
		return err
	}
	if !bytes.Equal(next.Conflicts, live.Conflicts) {
		if err := merge.SaveLog(ConflictLog(h.Repo), mustLog(next.Conflicts)); err != nil {
			return err
		}
	}
	if err := h.writeLocked(h.Store.ArchivePath(), live.Archive, next.Archive); err != nil {
		return err
	}
	if err := h.writeLocked(h.Store.Path(), live.Memory, next.Memory); err != nil {
		return err
	}
	if err := h.publish(rw.b, commit, old); err != nil {
		return err
	}
	res.Snapshot = commit.String()
	return h.Store.ClearRemovals()
}

// mustLog parses a conflict log memsync wrote itself (dropConflicts).
func mustLog(data []byte) []merge.Record {
	rs, _ := merge.ParseLog("", data)
	return rs
}

// commits lists the snapshots reachable from tip, parents first.
func (h *History) commits(ctx context.Context, tip plumbing.Hash) ([]plumbing.Hash, error) {
	if tip.IsZero() {
		return nil, nil
	}
	out, err := gitcmd.OutputContext(ctx, h.Repo.CommonDir, "--git-dir="+h.Repo.CommonDir, "rev-list", "--topo-order", "--reverse", tip.String(), "--")
	if err != nil {
		return nil, err
	}
	var cs []plumbing.Hash
	for _, l := range strings.Fields(out) {
		cs = append(cs, plumbing.NewHash(l))
	}
	return cs, nil
}

// filtered is a stored file read, and without the dropped entries.
type filtered struct {
	data    []byte // the file as stored
	out     []byte // without the entries (data when none was there)
	changed bool
	done    bool // out is made
}

// rewriter rewrites snapshots without the entries drop names.
type rewriter struct {
	h          *History
	drop       map[string]bool
	b          *batch
	memo       map[plumbing.Hash]filtered      // by the stored file's tree or blob
	mapped     map[plumbing.Hash]plumbing.Hash // old commit → new
	memChanged map[plumbing.Hash]bool          // old commit → its active file lost entries
}

// file reads the stored file s (memoized), and, once drop is set, makes
// it without the dropped entries (memoized too).
func (rw *rewriter) file(s stored, name string) (filtered, error) {
	key := s.tree
	if key.IsZero() {
		key = s.blob
	}
	if key.IsZero() {
		return filtered{}, nil
	}
	f, ok := rw.memo[key]
	if !ok {
		data, err := rw.h.read(s, rw.h.Limit(name), nil)
		if err != nil {
			return f, err
		}
		f = filtered{data: data, out: data}
	}
	if rw.drop != nil && !f.done {
		if name == conflictsName {
			f.out = dropConflicts(f.data, rw.drop)
		} else {
			f.out, _ = dropEntries(f.data, rw.drop)
		}
		f.changed, f.done = !bytes.Equal(f.out, f.data), true
	}
	rw.memo[key] = f
	return f, nil
}

// choose finds what opts names in the live files and the history: the
// IDs to drop, a title for each, and how many snapshots hold one.
func (rw *rewriter) choose(live Files, commits []plumbing.Hash, opts PurgeOptions) (map[string]bool, map[string]string, int, error) {
	titles := map[string]string{} // every ID seen → its title
	matched := map[string]bool{}  // IDs the rule finds
	scanned := map[plumbing.Hash]bool{}
	var perCommit []map[string]bool
	look := func(data []byte, ids map[string]bool) {
		for _, e := range memfile.Parse(data).Entries {
			titles[e.ID] = safeTitle(e.Title)
			ids[e.ID] = true
			if opts.Rule == "" || matched[e.ID] {
				continue
			}
			key := plumbing.ComputeHash(plumbing.BlobObject, []byte(e.Heading()+"\x00"+e.Content+"\x00"+fmt.Sprint(e.Extra, e.Tags)))
			if scanned[key] {
				continue
			}
			scanned[key] = true
			for _, f := range e.Secrets() {
				if f.Rule == opts.Rule {
					matched[e.ID] = true
				}
			}
		}
	}
	lookLog := func(data []byte, ids map[string]bool) {
		rs, _ := merge.ParseLog("", data)
		for _, r := range rs {
			ids[r.ID] = true
			if _, ok := titles[r.ID]; !ok {
				titles[r.ID] = safeTitle(r.Title)
			}
			base, ours, theirs := r.Versions()
			vs := []memfile.Entry{ours, theirs}
			if base != nil {
				vs = append(vs, *base)
			}
			for _, v := range vs {
				for _, f := range v.Secrets() {
					if f.Rule == opts.Rule && opts.Rule != "" {
						matched[r.ID] = true
					}
				}
			}
		}
	}
	liveIDs := map[string]bool{}
	look(live.Memory, liveIDs)
	look(live.Archive, liveIDs)
	lookLog(live.Conflicts, liveIDs)
	seenFile := map[plumbing.Hash]map[string]bool{}
	for _, c := range commits {
		l, err := rw.h.layoutAt(c)
		if err != nil {
			return nil, nil, 0, err
		}
		ids := map[string]bool{}
		for _, x := range []struct {
			s    stored
			name string
		}{{l.memory, MemoryName}, {l.archive, ArchiveName}, {l.conflicts, conflictsName}} {
			key := x.s.tree
			if key.IsZero() {
				key = x.s.blob
			}
			if key.IsZero() {
				continue
			}
			if got, ok := seenFile[key]; ok {
				for id := range got {
					ids[id] = true
				}
				continue
			}
			f, err := rw.file(x.s, x.name)
			if err != nil {
				return nil, nil, 0, err
			}
			got := map[string]bool{}
			if x.name == conflictsName {
				lookLog(f.data, got)
			} else {
				look(f.data, got)
			}
			seenFile[key] = got
			for id := range got {
				ids[id] = true
			}
		}
		perCommit = append(perCommit, ids)
	}
	drop := matched
	for _, ref := range opts.IDs {
		id, err := pickID(ref, titles)
		if err != nil {
			return nil, nil, 0, err
		}
		drop[id] = true
	}
	if len(drop) == 0 {
		return nil, nil, 0, fmt.Errorf("%w the rule %q", ErrNothingToPurge, opts.Rule)
	}
	holding := 0
	for _, ids := range perCommit {
		for id := range drop {
			if ids[id] {
				holding++
				break
			}
		}
	}
	return drop, titles, holding, nil
}

// pickID is the one ID of known that ref is, or that ref begins.
func pickID(ref string, known map[string]string) (string, error) {
	if _, ok := known[ref]; ok {
		return ref, nil
	}
	var found []string
	for id := range known {
		if ref != "" && strings.HasPrefix(id, ref) {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("%w: %q (%w)", memfile.ErrNotFound, ref, ErrNothingToPurge)
	}
	slices.Sort(found)
	return "", fmt.Errorf("%w: %q is the start of %s", memfile.ErrAmbiguous, ref, strings.Join(found, ", "))
}

// rewrite rewrites commits (parents first) without rw.drop and returns
// what tip becomes.
func (rw *rewriter) rewrite(commits []plumbing.Hash, tip plumbing.Hash) (plumbing.Hash, error) {
	for _, c := range commits {
		raw, err := readObject(rw.h.st, plumbing.CommitObject, c, maxMeta)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		info := parseCommit(c, raw)
		l, err := rw.h.readLayout(info.tree)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		var fs [3]filtered
		for i, x := range []struct {
			s    stored
			name string
		}{{l.memory, MemoryName}, {l.archive, ArchiveName}, {l.conflicts, conflictsName}} {
			if fs[i], err = rw.file(x.s, x.name); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		rw.memChanged[c] = fs[0].changed
		parents := make([]plumbing.Hash, len(info.parents))
		moved := false
		for i, p := range info.parents {
			parents[i] = p
			if n, ok := rw.mapped[p]; ok {
				parents[i] = n
			}
			moved = moved || parents[i] != p
		}
		treeChanged := fs[0].changed || fs[1].changed || fs[2].changed
		reRecord := fs[0].changed || (len(info.parents) > 0 && rw.memChanged[info.parents[0]])
		if !treeChanged && !moved && !reRecord {
			rw.mapped[c] = c
			continue
		}
		tree := info.tree
		if treeChanged {
			var purged []byte
			if l.purged.present() {
				if purged, err = readObject(rw.h.st, plumbing.BlobObject, l.purged.blob, rw.h.Limit(MemoryName)); err != nil {
					return plumbing.ZeroHash, err
				}
			}
			files := Files{Memory: fs[0].out, Archive: fs[1].out, Conflicts: fs[2].out, Purged: purged}
			if !l.memory.present() {
				files.Memory = nil
			}
			if !l.archive.present() {
				files.Archive = nil
			}
			if !l.conflicts.present() {
				files.Conflicts = nil
			}
			tree = addFiles(rw.b, files, haveOf(l))
		}
		msg := info.message
		if reRecord {
			var before []byte
			if len(info.parents) > 0 {
				pl, err := rw.h.layoutAt(info.parents[0])
				if err != nil {
					return plumbing.ZeroHash, err
				}
				pf, err := rw.file(pl.memory, MemoryName)
				if err != nil {
					return plumbing.ZeroHash, err
				}
				before = pf.out
			}
			msg = reRecorded(msg, before, fs[0].out)
		}
		msg = rw.remap(msg)
		data := rebuildCommit(raw, tree, parents, msg)
		rw.mapped[c] = rw.b.add(newObject(plumbing.CommitObject, data))
	}
	if n, ok := rw.mapped[tip]; ok {
		return n, nil
	}
	return tip, nil
}

// remap points a Memsync-Rollback trailer at the rewritten commit.
func (rw *rewriter) remap(msg string) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		if v, ok := strings.CutPrefix(l, trailerRollback+": "); ok && plumbing.IsHash(v) {
			if n, ok := rw.mapped[plumbing.NewHash(v)]; ok {
				lines[i] = trailerRollback + ": " + n.String()
			}
		}
	}
	return strings.Join(lines, "\n")
}

// reRecorded is msg with its record of changes (record.go) made again for
// the active files before and after; a message without one stays as it is.
func reRecorded(msg string, before, after []byte) string {
	if _, _, ok := recorded(msg); !ok {
		return msg
	}
	deliberate := strings.Contains(msg, "\n"+trailerRemoval+": deliberate\n")
	var kept []string
	for _, l := range strings.SplitAfter(msg, "\n") {
		k, _, _ := strings.Cut(l, ": ")
		switch k {
		case trailerEntries, trailerChanges, trailerAdded, trailerRemoved, trailerChanged, trailerMore, trailerRemoval:
			continue
		}
		kept = append(kept, l)
	}
	rec, _ := recordOf(before, after, true)
	rec.deliberate = deliberate
	out := strings.Join(kept, "")
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out + rec.trailers()
}

// rebuildCommit is the commit raw with another tree, parents and message;
// its other headers (author, committer, times) are kept, a signature is
// dropped (it no longer holds).
func rebuildCommit(raw []byte, tree plumbing.Hash, parents []plumbing.Hash, msg string) []byte {
	head, _, _ := strings.Cut(string(raw), "\n\n")
	var b strings.Builder
	b.WriteString("tree " + tree.String() + "\n")
	for _, p := range parents {
		b.WriteString("parent " + p.String() + "\n")
	}
	inSig := false
	for _, l := range strings.Split(head, "\n") {
		k, _, _ := strings.Cut(l, " ")
		if inSig && strings.HasPrefix(l, " ") {
			continue
		}
		inSig = false
		switch k {
		case "tree", "parent":
			continue
		case "gpgsig", "gpgsig-sha256":
			inSig = true
			continue
		}
		b.WriteString(l + "\n")
	}
	b.WriteString("\n" + msg)
	return []byte(b.String())
}

// dropEntries is data without the entries drop names, and how many went;
// data itself when none was there.
func dropEntries(data []byte, drop map[string]bool) ([]byte, int) {
	if data == nil {
		return nil, 0
	}
	f := memfile.Parse(data)
	kept := f.Entries[:0:0]
	for _, e := range f.Entries {
		if !drop[e.ID] {
			kept = append(kept, e)
		}
	}
	n := len(f.Entries) - len(kept)
	if n == 0 {
		return data, 0
	}
	f.Entries = kept
	return f.Render(), n
}

// dropConflicts is a conflict log without the records of drop's entries;
// data itself when none was there.
func dropConflicts(data []byte, drop map[string]bool) []byte {
	if data == nil {
		return nil
	}
	rs, err := merge.ParseLog("", data)
	if err != nil {
		return data
	}
	kept := slices.DeleteFunc(slices.Clone(rs), func(r merge.Record) bool { return drop[r.ID] })
	if len(kept) == len(rs) {
		return data
	}
	return merge.EncodeLog(kept)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// withTombstones is a merge's result next with the tombstones of both
// sides (live's and theirs'), and without the entries they name.
func withTombstones(next Files, live, theirs Files) Files {
	tomb := parsePurged(live.Purged)
	for id := range parsePurged(theirs.Purged) {
		tomb[id] = true
	}
	next.Purged = encodePurged(tomb)
	if len(tomb) > 0 {
		next.Memory, _ = dropEntries(next.Memory, tomb)
		next.Archive, _ = dropEntries(next.Archive, tomb)
		next.Conflicts = dropConflicts(next.Conflicts, tomb)
	}
	return next
}

// savePurged writes the tombstones data when they are not old; the caller
// holds the writers' lock.
func (h *History) savePurged(old, data []byte) error {
	if bytes.Equal(old, data) || data == nil {
		return nil
	}
	path := PurgedPath(h.Repo)
	if err := fsutil.MkdirAll(filepath.Dir(path), h.Store.DirPerm()); err != nil {
		return err
	}
	return fsutil.WriteFile(path, data, h.Store.FilePerm())
}

// scanMerged refuses a merge whose result brings an entry holding a secret
// (res.Changes and res.ArchiveChanges: what the other side adds or
// changes), naming the snapshot it came from.
func scanMerged(res *MergeResult, source string) error {
	err := joinSecrets(scanChanges(MemoryName, res.Changes), scanChanges(ArchiveName, res.ArchiveChanges))
	if se := new(SecretError); errors.As(err, &se) {
		se.Snapshot, se.Source = res.Theirs, source
	}
	return err
}

// Reconcile readies theirs, a snapshot just fetched into the ref tracking
// (a full name), for a merge, so that no purged entry comes back and none
// is pushed: the entries theirs' tombstones name that this clone has not
// purged are purged here first (Purge, without asking); then, when theirs'
// history lacks some of this clone's tombstones (a clone that has not
// synced since, or a push of an old history), it is rewritten without
// those entries, tracking is moved to the rewritten snapshot, and that is
// returned: merge it, and push it over theirs. Otherwise theirs is
// returned as it is. purged lists the IDs purged here.
func (h *History) Reconcile(ctx context.Context, theirs, tracking string, p Provenance) (merged string, purged []string, err error) {
	if theirs == "" {
		return theirs, nil, nil
	}
	h.st = openStorage(h.Repo.CommonDir) // see objects a fetch just brought
	l, err := h.layoutAt(plumbing.NewHash(theirs))
	if err != nil {
		return "", nil, err
	}
	var data []byte
	if l.purged.present() {
		err = h.relisted(func() (err error) {
			data, err = readObject(h.st, plumbing.BlobObject, l.purged.blob, h.Limit(MemoryName))
			return err
		})
		if err != nil {
			return "", nil, err
		}
	}
	theirTomb := parsePurged(data)
	err = h.Store.WithLock(func() error {
		live, err := h.readLiveLocked()
		if err != nil {
			return err
		}
		ours := parsePurged(live.Purged)
		news := map[string]bool{}
		for id := range theirTomb {
			if !ours[id] {
				news[id], ours[id] = true, true
			}
		}
		old, err := h.head()
		if err != nil {
			return err
		}
		if len(news) > 0 {
			commits, err := h.commits(ctx, old)
			if err != nil {
				return err
			}
			res := &PurgeResult{}
			rw := &rewriter{h: h, memo: map[plumbing.Hash]filtered{}}
			if err := h.purgeLocked(ctx, rw, old, commits, live, news, p, res); err != nil {
				return err
			}
			purged = sortedKeys(news)
			if old, err = h.head(); err != nil {
				return err
			}
		}
		merged = theirs
		missing := false
		for id := range ours {
			missing = missing || !theirTomb[id]
		}
		if !missing {
			return nil
		}
		// Theirs' own commits (those ours lacks), rewritten as this clone's were.
		args := []string{"--git-dir=" + h.Repo.CommonDir, "rev-list", "--topo-order", "--reverse", theirs}
		if !old.IsZero() {
			args = append(args, "^"+old.String())
		}
		out, err := gitcmd.OutputContext(ctx, h.Repo.CommonDir, append(args, "--")...)
		if err != nil {
			return err
		}
		var commits []plumbing.Hash
		for _, c := range strings.Fields(out) {
			commits = append(commits, plumbing.NewHash(c))
		}
		rw := &rewriter{h: h, memo: map[plumbing.Hash]filtered{}, drop: ours, b: &batch{},
			mapped: map[plumbing.Hash]plumbing.Hash{}, memChanged: map[plumbing.Hash]bool{}}
		tip, err := rw.rewrite(commits, plumbing.NewHash(theirs))
		if err != nil || tip.String() == theirs {
			return err
		}
		pack, err := h.writePack(rw.b.objs)
		if err != nil {
			return err
		}
		defer pack.release() // once tracking reaches the objects
		h.st.Reindex()
		if _, err := gitcmd.OutputContext(ctx, h.Repo.CommonDir, "--git-dir="+h.Repo.CommonDir, "update-ref", tracking, tip.String(), theirs); err != nil {
			pack.remove()
			return err
		}
		merged = tip.String()
		return nil
	})
	return merged, purged, err
}

// safeTitle is a title to show, withheld when it holds a secret.
func safeTitle(t string) string {
	if len(secrets.Scan(t)) > 0 {
		return "(title withheld: it holds a secret)"
	}
	return t
}
