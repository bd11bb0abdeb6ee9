package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/gitrepo"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/internal/secrets"
	"github.com/memsync/memsync/internal/words"
	"github.com/memsync/memsync/memfile"
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

// maxPurged bounds the read of the purge record.
const maxPurged = 64 << 20

// trailerPurged names, in a purge commit, each entry it purged.
const trailerPurged = "Memsync-Purged"

// PurgedPath is where a repository keeps its tombstones.
func PurgedPath(r *gitrepo.Repo) string {
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
		// The fetched snapshots too (refs/memsync/remotes/): an entry only
		// another clone's history holds is purged from it at the next sync.
		fetched, err := h.fetchedCommits(ctx, old)
		if err != nil {
			return err
		}
		drop, titles, holding, err := rw.choose(live, commits, fetched, opts)
		if err != nil {
			return err
		}
		res.Snapshots, res.Holding = len(commits), holding
		if !old.IsZero() {
			res.Old, res.Snapshot = old.String(), old.String()
		}
		for _, id := range slices.Sorted(maps.Keys(drop)) {
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
	// Every tombstone is dropped again, not only drop's: a history that
	// took in an entry purged before (a merge made before its purge was
	// adopted) is cleaned too.
	tomb := parsePurged(live.Purged)
	for id := range drop {
		tomb[id] = true
	}
	rw.drop, rw.b, rw.mapped, rw.memChanged = tomb, &batch{}, map[plumbing.Hash]plumbing.Hash{}, map[plumbing.Hash]bool{}
	tip, err := rw.rewrite(commits, old)
	if err != nil {
		return err
	}
	for _, c := range commits {
		if rw.mapped[c] != c {
			res.Rewritten++
		}
	}
	next := Files{Purged: encodePurged(tomb)}
	var n1, n2 int
	next.Memory, n1 = dropEntries(live.Memory, tomb)
	next.Archive, n2 = dropEntries(live.Archive, tomb)
	next.Conflicts = dropConflicts(live.Conflicts, tomb)
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
	msg := message(fmt.Sprintf("memsync purge of %d entr%s", len(drop), words.Plural(len(drop), "y", "ies")), p, "", rec, true)
	for _, id := range slices.Sorted(maps.Keys(drop)) {
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
	h.saveClean(commit, tomb)
	if err := h.scrubBackups(tomb); err != nil {
		return err
	}
	return h.Store.ClearRemovals()
}

// scrubBackups takes the entries drop names out of memsync's backups of
// the memory files (<file>.bak-*: a fold's or a worktree's copy in the
// memory home, this and the primary worktree's folder, a damaged file's
// beside the canonical one in the git dir),
// which would otherwise keep a purged secret in the clone.
func (h *History) scrubBackups(drop map[string]bool) error {
	seen := map[string]bool{}
	paths := []string{h.Store.Path(), h.Store.ArchivePath()}
	for _, wt := range []string{h.Repo.WorkTree, h.Repo.Primary} {
		if wt != "" {
			f := h.Repo.WorktreeFile(wt)
			paths = append(paths, f, filepath.Join(filepath.Dir(f), "archive", "memories.md"))
		}
	}
	for _, path := range paths {
		target, err := h.Store.Resolve(path)
		if err != nil {
			target = path
		}
		for _, p := range []string{path, target} {
			matches, _ := filepath.Glob(p + ".bak-*")
			for _, b := range matches {
				if seen[b] {
					continue
				}
				seen[b] = true
				data, err := fsutil.ReadFile(b, h.Limit(MemoryName))
				if err != nil {
					continue // not a regular file memsync wrote, or unreadable
				}
				if out, n := dropEntries(data, drop); n > 0 {
					if err := fsutil.WriteFile(b, out, h.Store.FilePerm()); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
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

// fetchedCommits lists the snapshots the fetched remote refs reach and ours
// (zero: none) does not, parents first.
func (h *History) fetchedCommits(ctx context.Context, ours plumbing.Hash) ([]plumbing.Hash, error) {
	args := []string{"--git-dir=" + h.Repo.CommonDir, "rev-list", "--topo-order", "--reverse", "--glob=refs/memsync/remotes/"}
	if !ours.IsZero() {
		args = append(args, "^"+ours.String())
	}
	out, err := gitcmd.OutputContext(ctx, h.Repo.CommonDir, append(args, "--")...)
	if err != nil {
		return nil, err
	}
	var cs []plumbing.Hash
	for _, l := range strings.Fields(out) {
		cs = append(cs, plumbing.NewHash(l))
	}
	return cs, nil
}

// Reconcile readies the fetched snapshots (tracking ref, a full name →
// snapshot) for one merge, so that no purged entry comes back and none is
// pushed. First the purge is adopted: the tombstones of every one of them
// are read before anything is merged, and the entries they name that this
// clone has not purged are purged here (Purge, without asking). Then every
// snapshot whose history reaches a tombstoned entry is rewritten without
// it, a commit being rewritten also when only a parent is: this clone's own
// history since the last snapshot found clean (a merge made before the
// purge was adopted may hold one in a parent though its own tree is clean),
// and theirs' commits that ours lacks, each tracking ref moved to its
// rewritten snapshot. It returns what to merge for each ref, the IDs purged
// here, and whether this clone's history was rewritten (then every remote
// ref may reach a purged entry: the push goes over all of them). Unless
// force, tombstones that would purge more than half of this clone's
// entries stop it with merge.ErrMassDeletion before anything changes:
// anyone can write tombstones into a hand-made commit.
func (h *History) Reconcile(ctx context.Context, fetched map[string]string, p Provenance, force bool) (merging map[string]string, purged []string, rewrote bool, err error) {
	merging = maps.Clone(fetched)
	h.reopen() // see objects a fetch just brought
	theirTomb := map[string]bool{}
	for _, theirs := range fetched {
		ids, err := h.tombstonesAt(plumbing.NewHash(theirs))
		if err != nil {
			return nil, nil, false, err
		}
		maps.Copy(theirTomb, ids)
	}
	if len(theirTomb) == 0 {
		if _, err := os.Stat(PurgedPath(h.Repo)); errors.Is(err, fs.ErrNotExist) {
			return merging, nil, false, nil // no tombstones on either side
		}
	}
	err = h.Store.WithLock(func() error {
		live, err := h.readLiveLocked()
		if err != nil {
			return err
		}
		all := parsePurged(live.Purged)
		news := map[string]bool{}
		for id := range theirTomb {
			if !all[id] {
				news[id], all[id] = true, true
			}
		}
		if len(all) == 0 {
			return nil
		}
		if !force {
			if err := tombGuard(live, news); err != nil {
				return err
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
			rw := &rewriter{h: h, memo: map[plumbing.Hash]filtered{}}
			if err := h.purgeLocked(ctx, rw, old, commits, live, news, p, &PurgeResult{}); err != nil {
				return err
			}
			purged, rewrote = slices.Sorted(maps.Keys(news)), true
		} else if !old.IsZero() {
			rw, err := h.rewriteSince(ctx, all, []plumbing.Hash{old}, h.loadClean(all))
			if err != nil {
				return err
			}
			if tip := rw.mapped[old]; tip != old {
				if err := h.publish(rw.b, tip, old); err != nil {
					return err
				}
				rewrote = true
			}
		}
		if old, err = h.head(); err != nil {
			return err
		}
		h.saveClean(old, all)
		// Theirs' own commits (those ours lacks), rewritten as this clone's were.
		var tips []plumbing.Hash
		for _, theirs := range fetched {
			tips = append(tips, plumbing.NewHash(theirs))
		}
		rw, err := h.rewriteSince(ctx, all, tips, old)
		if err != nil || len(rw.b.objs) == 0 {
			return err
		}
		pack, err := h.writePack(rw.b.objs)
		if err != nil {
			return err
		}
		defer pack.release() // once tracking reaches the objects
		h.st.Reindex()
		var stdin strings.Builder
		for _, ref := range slices.Sorted(maps.Keys(fetched)) {
			theirs := plumbing.NewHash(fetched[ref])
			if tip, ok := rw.mapped[theirs]; ok && tip != theirs {
				fmt.Fprintf(&stdin, "update %s %s %s\n", ref, tip, theirs)
				merging[ref] = tip.String()
			}
		}
		up := gitcmd.CommandContext(ctx, h.Repo.CommonDir, "--git-dir="+h.Repo.CommonDir, "update-ref", "--stdin")
		up.Stdin = strings.NewReader(stdin.String())
		if out, err := up.CombinedOutput(); err != nil {
			pack.remove()
			return gitcmd.Wrap(up.Args[1:], err, strings.TrimSpace(string(out)))
		}
		return nil
	})
	if err != nil {
		return nil, nil, false, err
	}
	return merging, purged, rewrote, nil
}

// tombGuard refuses tombstones news that would purge more than half of the
// live entries (active and archive, by ID; at least MinGuarded of them).
func tombGuard(live Files, news map[string]bool) error {
	seen := map[string]bool{}
	n := 0
	for _, data := range [][]byte{live.Memory, live.Archive} {
		for _, e := range memfile.Parse(data).Entries {
			if !seen[e.ID] {
				seen[e.ID] = true
				if news[e.ID] {
					n++
				}
			}
		}
	}
	if len(seen) >= MinGuarded && 2*n > len(seen) {
		return fmt.Errorf("%w (%d of %d): the remote's tombstones would purge them here (another clone's 'memsync purge', or a hand-made commit: tombstones vouch for nothing), and the purge cannot be undone; ask who purged, and if it is meant: 'memsync sync --force'", merge.ErrMassDeletion, n, len(seen))
	}
	return nil
}

// tombstonesAt reads the tombstones of a snapshot (none without them).
func (h *History) tombstonesAt(c plumbing.Hash) (map[string]bool, error) {
	l, err := h.layoutAt(c)
	if err != nil || !l.purged.present() {
		return nil, err
	}
	var data []byte
	err = h.relisted(func() (err error) {
		data, err = readObject(h.st, plumbing.BlobObject, l.purged.blob, h.Limit(MemoryName))
		return err
	})
	return parsePurged(data), err
}

// rewriteSince rewrites, without drop, the commits tips reach and none of
// clean does (clean's whole history is known to hold none of drop: zero
// hashes are left out); rw.mapped says what each tip became, and rw.b
// holds the new objects (none when nothing changed).
func (h *History) rewriteSince(ctx context.Context, drop map[string]bool, tips []plumbing.Hash, clean ...plumbing.Hash) (*rewriter, error) {
	rw := &rewriter{h: h, memo: map[plumbing.Hash]filtered{}, drop: drop, b: &batch{},
		mapped: map[plumbing.Hash]plumbing.Hash{}, memChanged: map[plumbing.Hash]bool{}}
	args := []string{"--git-dir=" + h.Repo.CommonDir, "rev-list", "--topo-order", "--reverse"}
	for _, t := range tips {
		args = append(args, t.String())
	}
	for _, c := range clean {
		if !c.IsZero() {
			args = append(args, "^"+c.String())
		}
	}
	out, err := gitcmd.OutputContext(ctx, h.Repo.CommonDir, append(args, "--")...)
	if err != nil {
		return nil, err
	}
	var commits []plumbing.Hash
	for _, c := range strings.Fields(out) {
		commits = append(commits, plumbing.NewHash(c))
	}
	if _, err := rw.rewrite(commits, plumbing.ZeroHash); err != nil {
		return nil, err
	}
	for _, t := range tips {
		if _, ok := rw.mapped[t]; !ok {
			rw.mapped[t] = t // in clean's history
		}
	}
	return rw, nil
}

// cleanName is where a clone records the last snapshot whose whole history
// was found to hold none of the tombstoned entries, beside a digest of the
// tombstones: a sync rewrites only what came since. A cache: without it
// the whole history is looked at again.
const cleanName = "purged-clean"

// tombDigest names a set of tombstones.
func tombDigest(tomb map[string]bool) string {
	return plumbing.ComputeHash(plumbing.BlobObject, encodePurged(tomb)).String()
}

// loadClean is the snapshot recorded clean of tomb; zero for none (or one
// recorded for other tombstones, or gone from the object store).
func (h *History) loadClean(tomb map[string]bool) plumbing.Hash {
	data, err := fsutil.ReadFile(filepath.Join(h.Repo.CommonDir, "memsync", cleanName), 1<<10)
	f := strings.Fields(string(data))
	if err != nil || len(f) != 2 || !plumbing.IsHash(f[0]) || f[1] != tombDigest(tomb) {
		return plumbing.ZeroHash
	}
	if _, err := h.st.EncodedObject(plumbing.CommitObject, plumbing.NewHash(f[0])); err != nil {
		return plumbing.ZeroHash
	}
	return plumbing.NewHash(f[0])
}

// saveClean records c as clean of tomb (best effort).
func (h *History) saveClean(c plumbing.Hash, tomb map[string]bool) {
	if !c.IsZero() {
		_ = fsutil.WriteCache(filepath.Join(h.Repo.CommonDir, "memsync", cleanName), []byte(c.String()+" "+tombDigest(tomb)+"\n"), h.Store.FilePerm())
	}
}

// safeTitle is a title to show, withheld when it holds a secret.
func safeTitle(t string) string {
	if len(secrets.Scan(t)) > 0 {
		return "(title withheld: it holds a secret)"
	}
	return t
}
