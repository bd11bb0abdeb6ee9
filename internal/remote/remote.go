// Package remote shares a repository's memory between clones through the
// user's own git remotes. Each clone pushes its snapshots to a ref of its
// own on the remote, refs/memsync/clones/<clone ID> (CloneID), so no two
// clones ever race for one ref; a sync fetches every clone's ref (and the
// team's shared ref refs/memsync/snapshots) into
// refs/memsync/remotes/<remote>/, merges by entry the snapshots the memory
// lacks (history.MergeAll), and pushes the result to its own ref and,
// when no other clone moved it meanwhile, to the shared ref. Transport and
// authentication are git's; nothing but refs/memsync/ is ever pushed.
package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/gitconfig"
	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/lock"
	"github.com/memsync/memsync/memfile"
)

// Errors a caller can test for with errors.Is. None of them loses a local
// entry: the memory and its snapshots stay as the merge left them.
var (
	// ErrBadRemote: the name is no remote's name.
	ErrBadRemote = errors.New("not a remote name")
	// ErrFetch: git fetch failed (network, authentication, no such remote).
	ErrFetch = errors.New("fetch failed")
	// ErrPush: git push failed for another reason than a race.
	ErrPush = errors.New("push failed")
	// ErrRaced: another clone pushed to this clone's own ref, twice (two
	// repositories with one clone ID, even after a new one was drawn).
	ErrRaced = errors.New("others kept pushing first")
	// ErrTimeout: the remote did not answer a fetch or push in time.
	ErrTimeout = errors.New("the remote did not answer in time")
	// ErrBusy: another sync of this repository held the sync lock too long.
	ErrBusy = errors.New("another memsync sync of this repository is under way")
)

// DefaultTimeout bounds each fetch and push (a slow link's worth; a stuck
// SSH server never answers).
const DefaultTimeout = 2 * time.Minute

// Options tunes Sync.
type Options struct {
	Force bool // pass the mass-deletion guard of the merge
	// AllowUnrelated merges a remote's memory that shares no snapshot with
	// this clone's and comes from another project's commits (ErrUnrelated).
	AllowUnrelated bool
	DryRun         bool // fetch, then report what the merge would change; write nothing else
	// Timeout bounds each git fetch and push (0: DefaultTimeout): then git
	// and its children are stopped, and Sync returns ErrTimeout.
	Timeout    time.Duration
	Provenance history.Provenance
	// Pushing, when set, is called once the merge is written and the
	// memory's lock let go, before the push: what it starts runs while git
	// pushes, and Sync calls the function it returns before it returns.
	Pushing func() (wait func())
}

// Result is what Sync did.
type Result struct {
	Remote string `json:"remote"`
	// Clone is this clone's ID: its snapshots are on the remote at
	// ClonesPrefix + Clone.
	Clone string `json:"clone"`
	// Fetched is the remote's newest shared snapshot (its
	// refs/memsync/snapshots, else a clone's), "" when it has none.
	Fetched string `json:"fetched"`
	// Merged names the remote refs whose snapshots were merged in (or with
	// DryRun would be), e.g. "refs/memsync/clones/ana-1f2e3d4c".
	Merged []string `json:"merged"`
	Kind   string   `json:"kind"` // history.UpToDate, FastForward or Merged: the most any merge did
	Pushed bool     `json:"pushed"`
	Tries  int      `json:"tries"`
	// Snapshot is our newest snapshot after the sync: what the remote holds
	// at this clone's ref after a push.
	Snapshot string `json:"snapshot"`
	// Changes, ArchiveChanges and Conflicts are what the merges made.
	Changes        []history.Change `json:"-"`
	ArchiveChanges []history.Change `json:"-"`
	Conflicts      []merge.Conflict `json:"-"`
	Notes          []string         `json:"notes,omitempty"` // what the merges did a person should know
	// Purged are the entries purged here because the remote's tombstones
	// name them (another clone ran memsync purge).
	Purged []string `json:"purged,omitempty"`
	Backup string   `json:"backup,omitempty"`
	// Refused is, for a dry run, why the sync would stop without Force.
	Refused string `json:"refused,omitempty"`

	contained []string // the fetched snapshots the merge left in ours (for saveContained)
}

// TrackingRef is where a remote's shared snapshots are fetched to.
func TrackingRef(remote string) string { return trackingPrefix(remote) + "snapshots" }

// trackingPrefix is where a remote's snapshot refs are fetched to: the
// shared ref as snapshots, each clone's as clones/<ID>.
func trackingPrefix(remote string) string { return "refs/memsync/remotes/" + remote + "/" }

var remoteName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`) })

// DefaultRemote is the remote of the worktree's current branch
// (branch.<name>.remote in the repository's config), else "origin".
func DefaultRemote(h *history.History) string {
	if b := h.CurrentProvenance("").Branch; b != "" {
		if r := h.BranchRemote(b); r != "" && r != "." && remoteName().MatchString(r) {
			return r
		}
	}
	return "origin"
}

// Sync exchanges the memory with a remote: fetch every clone's snapshots
// and the shared ones, merge into the memory (snapshotted first), in one
// merge, those the memory lacks and no other fetched snapshot holds, and
// push the result to this clone's own ref (with a lease naming what was
// fetched there) and to the shared ref (with a lease too; when another
// clone moved it meanwhile, that clone's push stands and ours waits for the
// next sync: our snapshots are on our own ref, where every clone merges
// them from). Syncs of one repository run one at a time (a lock beside its
// conflict log), without holding the memory's lock during network work. ctx
// kills a git fetch or push under way and stops Sync between steps
// (history.MergeFrom says what a merge does when ctx is done).
func Sync(ctx context.Context, h *history.History, remote string, opts Options) (*Result, error) {
	if !remoteName().MatchString(remote) || strings.Contains(remote, "..") {
		return nil, fmt.Errorf("%w: %q (sync takes the name of a remote; 'git remote -v' lists them, 'git remote add NAME URL' adds one)", ErrBadRemote, remote)
	}
	release, err := lockSync(h)
	if err != nil {
		return nil, err
	}
	defer release()
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	res := &Result{Remote: remote, Tries: 1, Merged: []string{}}
	var note string
	if res.Clone, note, err = CloneID(h); err != nil {
		return res, err
	}
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	before, err := h.RefsUnder(trackingPrefix(remote))
	if err != nil {
		return res, err
	}
	if err := fetch(ctx, h, remote, opts.Timeout); err != nil {
		return res, err
	}
	fetched, err := fetchedRefs(h, remote, res)
	if err != nil {
		return res, err
	}
	rewritten, err := mergeAll(ctx, h, remote, opts, res, before, fetched)
	if errors.Is(err, plumbing.ErrObjectNotFound) && partialClone(h, remote) {
		// A partial clone whose snapshots came without their blobs (a
		// fetch that took the clone's filter: an older memsync's, or git's
		// own): fetch them whole again, once. The merge wrote nothing.
		if ferr := fetch(ctx, h, remote, opts.Timeout, "--refetch"); ferr == nil {
			if fetched, err = fetchedRefs(h, remote, res); err != nil {
				return res, err
			}
			rewritten, err = mergeAll(ctx, h, remote, opts, res, before, fetched)
		}
	}
	if err != nil || opts.DryRun {
		return res, err
	}
	if res.Snapshot, err = h.RefHash(history.Ref); err != nil || res.Snapshot == "" {
		return res, err
	}
	if opts.Pushing != nil {
		defer opts.Pushing()()
	}
	if err := pushAll(ctx, h, remote, opts, res, fetched, rewritten); err != nil {
		return res, err
	}
	if len(rewritten) == 0 && len(res.Purged) == 0 {
		saveContained(h, res.Snapshot, res.contained)
	}
	return res, nil
}

// lockSync takes the sync lock of the repository (a file beside its
// conflict log): syncs of one repository run one at a time.
func lockSync(h *history.History) (release func(), err error) {
	dir := filepath.Join(h.Repo.CommonDir, "memsync")
	if err := fsutil.MkdirAll(dir, h.Store.DirPerm()); err != nil {
		return nil, err
	}
	syncLock := filepath.Join(dir, "sync.lock")
	if f, err := fsutil.OpenFile(syncLock, os.O_RDONLY|os.O_CREATE, h.Store.FilePerm()); err == nil {
		_ = f.Close() // created with the repository's sharing; lock.Exclusive would use the umask
	}
	l, err := lock.Exclusive(h.Store.Context(), syncLock, h.Store.LockTimeout)
	if te := new(lock.TimeoutError); errors.As(err, &te) {
		who := "another process"
		if te.PID > 0 {
			who = fmt.Sprintf("pid %d", te.PID)
		}
		return nil, fmt.Errorf("%w (%s; waited %s for it): %w", ErrBusy, who, te.Waited.Round(time.Millisecond), err)
	}
	if err != nil {
		return nil, err
	}
	return func() { _ = l.Release() }, nil
}

// Fetch brings the remote's snapshot refs into refs/memsync/remotes/<remote>/
// as a sync does, and merges nothing: purge looks there for entries only
// another clone's snapshots hold (a secret a sync refused to merge).
func Fetch(ctx context.Context, h *history.History, remote string, timeout time.Duration) error {
	if !remoteName().MatchString(remote) || strings.Contains(remote, "..") {
		return fmt.Errorf("%w: %q", ErrBadRemote, remote)
	}
	release, err := lockSync(h)
	if err != nil {
		return err
	}
	defer release()
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return fetch(ctx, h, remote, timeout)
}

// fetchedRefs is what the fetch brought: the tracking refs of remote and
// their snapshots; res.Fetched is set to the newest shared one.
func fetchedRefs(h *history.History, remote string, res *Result) (map[string]string, error) {
	fetched, err := h.RefsUnder(trackingPrefix(remote))
	if err != nil {
		return nil, err
	}
	res.Fetched = fetched[TrackingRef(remote)]
	for _, ref := range slices.Sorted(maps.Keys(fetched)) {
		if res.Fetched == "" {
			res.Fetched = fetched[ref]
		}
	}
	return fetched, nil
}

// partialClone tells whether git fetches from remote into this repository
// with a filter (git clone --filter): a promisor remote.
func partialClone(h *history.History, remote string) bool {
	cfg := gitconfig.Repo(h.Repo.CommonDir, h.Repo.GitDir)
	if v, ok := cfg.Get("extensions.partialClone"); ok && v != "" {
		return true
	}
	promisor, _ := cfg.Bool("remote." + remote + ".promisor")
	return promisor
}

// mergeAll merges into the memory, in one merge, the fetched snapshots
// that neither the memory nor another fetched snapshot holds; with none, it
// snapshots the memory (a merge of nothing). It returns the tracking refs
// whose snapshots were rewritten for a purge (their remote refs get ours).
func mergeAll(ctx context.Context, h *history.History, remote string, opts Options, res *Result, before, fetched map[string]string) (rewritten []string, err error) {
	ours, err := h.RefHash(history.Ref)
	if err != nil {
		return nil, err
	}
	known := loadContained(h, ours)
	commits := passOverNonCommits(h, remote, res, fetched, ours, known)
	refs, oursListed, err := independent(ctx, h, ours, commits, known)
	if err != nil {
		return nil, err
	}
	// A commit that is no snapshot (a branch's, pushed there with plain
	// git) is passed over, with a note: it holds no memory, and it must not
	// stop the sync of every clone. The push replaces it on the shared ref
	// and on this clone's own (under the lease on it); another clone's ref
	// is left to its owner.
	all := len(refs)
	passed := map[string]bool{}
	refs = slices.DeleteFunc(refs, func(ref string) bool {
		cerr := h.CheckSnapshot(fetched[ref])
		if errors.Is(cerr, history.ErrNotSnapshot) {
			passed[fetched[ref]] = true
			res.Notes = append(res.Notes, fmt.Sprintf("passed over %s's %s (%s): %v (pushed there with plain git?); 'git push %s :%s' drops it", remote, cloneRefOf(remote, ref), fetched[ref][:12], cerr, remote, cloneRefOf(remote, ref)))
			return true
		}
		if cerr != nil && err == nil {
			err = cerr
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	if !opts.AllowUnrelated {
		if err := checkRelated(ctx, h, remote, ours, refs, fetched, res.Clone); err != nil {
			return nil, err
		}
	}
	// Purged entries stay purged: the tombstones of every snapshot to merge
	// are purged here before any is merged, and a history that still
	// reaches a tombstoned entry is merged rewritten (the push replaces it,
	// under the lease on what was fetched).
	merging := map[string]string{}
	for _, ref := range refs {
		merging[ref] = fetched[ref]
	}
	if !opts.DryRun {
		var oursRewritten bool
		if merging, res.Purged, oursRewritten, err = h.Reconcile(ctx, merging, opts.Provenance, opts.Force); err != nil {
			return nil, err
		}
		for _, ref := range slices.Sorted(maps.Keys(fetched)) {
			if oursRewritten || (merging[ref] != "" && merging[ref] != fetched[ref]) {
				rewritten = append(rewritten, ref)
			}
		}
	}
	var heads []string
	refOf := map[string]string{}
	for _, ref := range refs {
		heads = append(heads, merging[ref])
		refOf[merging[ref]] = ref
	}
	mopts := history.MergeOptions{Force: opts.Force, DryRun: opts.DryRun, Source: remote, Provenance: opts.Provenance, Independent: true}
	// ours is no ancestor of theirs (unless a purge rewrote either side).
	mopts.Apart = oursListed && ours != "" && len(rewritten) == 0 && len(res.Purged) == 0
	if !oursListed && len(heads) == 1 && heads[0] == fetched[refs[0]] && len(refs) == all {
		mopts.Descends = ours // ours is behind the one snapshot: a fast-forward, unless the memory changed since
	}
	m, err := h.MergeAll(ctx, heads, mopts)
	if errors.Is(err, memfile.ErrSecret) || errors.Is(err, history.ErrTooBig) {
		// Refused unread (too big) or unmerged (a secret): the tracking
		// refs go back to what they were, so nothing of them is pushed on
		// and git gc can drop what the fetch brought.
		for _, ref := range refs {
			untrack(h, ref, before[ref])
		}
		if errors.Is(err, history.ErrTooBig) {
			err = fmt.Errorf("refused %s's %w", remote, err)
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	for _, head := range m.Heads {
		res.Merged = append(res.Merged, cloneRefOf(remote, refOf[head]))
	}
	res.Kind, res.Changes, res.ArchiveChanges = m.Kind, m.Changes, m.ArchiveChanges
	res.Conflicts, res.Backup, res.Refused = m.Conflicts, m.Backup, m.Refused
	res.Notes = append(res.Notes, m.Notes...)
	for _, c := range commits {
		if !passed[c] {
			res.contained = append(res.contained, c)
		}
	}
	return rewritten, nil
}

// passOverNonCommits is fetched without the refs that hold no commit (a
// blob or a tag pushed there with plain git), each named in a note. ours
// and the snapshots known to be in it (loadContained) are commits: their
// objects are not read again (a sync with nothing new spent 6% of its
// time there).
func passOverNonCommits(h *history.History, remote string, res *Result, fetched map[string]string, ours string, known map[string]bool) map[string]string {
	commits := map[string]string{}
	for _, ref := range slices.Sorted(maps.Keys(fetched)) {
		c := fetched[ref]
		if c == ours || known[c] {
			commits[ref] = c
			continue
		}
		if k := h.ObjectKind(c); k != "commit" && k != "missing" {
			res.Notes = append(res.Notes, fmt.Sprintf("passed over %s's %s (%s): a %s, no memsync snapshot (pushed there with plain git?); 'git push %s :%s' drops it", remote, cloneRefOf(remote, ref), c[:12], k, remote, cloneRefOf(remote, ref)))
			continue
		}
		commits[ref] = c
	}
	return commits
}

// independent lists, in order, the tracking refs of fetched whose
// snapshots ours ("" none) lacks and no other fetched snapshot holds
// (git merge-base --independent); one ref per snapshot. oursListed tells
// whether ours is no ancestor of them either. known are snapshots ours is
// known to hold (loadContained): git is not asked about them.
func independent(ctx context.Context, h *history.History, ours string, fetched map[string]string, known map[string]bool) (refs []string, oursListed bool, err error) {
	refOf := map[string]string{}
	var hashes []string
	for _, ref := range slices.Sorted(maps.Keys(fetched)) {
		if c := fetched[ref]; c != ours && !known[c] && refOf[c] == "" {
			refOf[c] = ref
			hashes = append(hashes, c)
		}
	}
	if len(hashes) == 0 {
		return nil, true, nil
	}
	if len(hashes) == 1 && ours != "" {
		// One snapshot and ours: their merge base tells all, and the merge
		// needs it anyway.
		base, err := h.MergeBase(ctx, hashes[0], ours)
		if err != nil || base == hashes[0] {
			return nil, true, err // theirs is in ours
		}
		return []string{refOf[hashes[0]]}, base != ours, nil
	}
	args := []string{"--git-dir=" + h.Repo.CommonDir, "merge-base", "--independent"}
	if ours != "" {
		args = append(args, ours)
	}
	out, err := gitcmd.OutputContext(ctx, h.Repo.CommonDir, append(args, hashes...)...)
	if err != nil {
		return nil, false, err
	}
	for _, c := range strings.Fields(out) {
		ref := refOf[c]
		if ref != "" {
			refs = append(refs, ref)
		}
		// A commit no ref names (a tag's, peeled) may be the one that holds
		// ours: then ours is behind no listed snapshot for sure, and the
		// merge must not assume a fast-forward.
		oursListed = oursListed || c == ours || ref == ""
	}
	slices.Sort(refs)
	return refs, oursListed || ours == "", nil
}

// workDir is where git runs for a remote: where the user runs git, the top
// of the current (else the primary) worktree, so that a remote URL relative
// to it (git remote add origin ../remote.git) means what it means to git;
// the common git dir in a bare repository.
func workDir(h *history.History) string {
	for _, d := range []string{h.Repo.WorkTree, h.Repo.Primary} {
		if d != "" {
			return d
		}
	}
	return h.Repo.CommonDir
}

// untrack sets the tracking ref back to old ("" deletes it), best effort.
func untrack(h *history.History, ref, old string) {
	args := []string{"--git-dir=" + h.Repo.CommonDir, "update-ref", ref, old}
	if old == "" {
		args = []string{"--git-dir=" + h.Repo.CommonDir, "update-ref", "-d", ref}
	}
	_, _ = gitcmd.Output(h.Repo.CommonDir, args...)
}

// fetch brings the remote's shared snapshots and every clone's into
// trackingPrefix(remote), dropping the tracking refs of clone refs the
// remote no longer has. git streams a blob larger than the largest memory
// file memsync reads to disk instead of holding it
// (core.bigFileThreshold), so a refused snapshot costs no memory here
// either.
func fetch(parent context.Context, h *history.History, remote string, timeout time.Duration, extra ...string) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	threshold := max(h.Limit(history.MemoryName), h.Limit(history.ArchiveName))
	prefix := trackingPrefix(remote)
	// "snapshot*" matches the shared ref without failing where the remote
	// has none.
	// fetch.unpackLimit=1: what comes is kept as the one pack it comes in
	// (which Maintain rolls up), not written out as a loose file per
	// object, as git does for fewer than 100.
	// --refmap=: the refs fetched go where these refspecs say and nowhere
	// else; git would also move the refs the remote's own fetch refspecs
	// map them to, and +refs/*:refs/* (git clone --mirror) maps the shared
	// ref onto this clone's Ref.
	// --no-filter: in a partial clone (git clone --filter=blob:none) git
	// would fetch the snapshots without their chunks, which memsync reads
	// from the object store itself (git's lazy fetch never runs for it).
	args := []string{"--git-dir=" + h.Repo.CommonDir, "-c", fmt.Sprintf("core.bigFileThreshold=%d", threshold), "-c", "fetch.unpackLimit=1", "fetch", "--quiet", "--no-tags",
		"--no-write-fetch-head", "--no-auto-gc", "--prune", "--refmap=", "--no-filter"}
	args = append(append(args, extra...), remote, "+refs/memsync/snapshot*:"+prefix+"snapshot*", "+"+ClonesPrefix+"*:"+prefix+"clones/*")
	cmd := gitcmd.CommandContext(ctx, workDir(h), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if parent.Err() == nil && ctx.Err() != nil {
			return fmt.Errorf("%w: git fetch %s: no answer in %s (--timeout, MEMSYNC_SYNC_TIMEOUT)", ErrTimeout, remote, timeout)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: git fetch %s: %w", ErrFetch, remote, ctx.Err())
		}
		return fmt.Errorf("%w: %w", ErrFetch, gitcmd.Wrap(cmd.Args[1:], err, strings.TrimSpace(stderr.String())))
	}
	return nil
}

// update is one ref a push sets to our snapshot, if it still is expect
// ("": it must not exist).
type update struct {
	ref, expect string
	own         bool // this clone's ref: it must get through
}

// pushAll pushes our snapshot (res.Snapshot) to this clone's ref and to the
// shared ref, unless the remote has it already; after a purge rewrote a
// fetched snapshot, over every ref fetched too (so none reaches a purged
// entry); each under a lease on what was fetched.
// Another clone that moved the shared ref or a rewritten ref first keeps
// its push. Another repository that pushed to this clone's own ref has the
// same clone ID (a copied repository): a new ID is drawn and the push made
// again to it.
func pushAll(ctx context.Context, h *history.History, remote string, opts Options, res *Result, fetched map[string]string, rewritten []string) error {
	prefix := trackingPrefix(remote)
	ups := []update{{ClonesPrefix + res.Clone, fetched[prefix+"clones/"+res.Clone], true}, {history.Ref, fetched[TrackingRef(remote)], false}}
	if len(rewritten) > 0 {
		// A purge: every ref there may reach a purged entry (directly, or
		// as an ancestor of a rewritten one); ours holds what each held.
		for _, ref := range slices.Sorted(maps.Keys(fetched)) {
			ups = append(ups, update{cloneRefOf(remote, ref), fetched[ref], false})
		}
	} else if slices.Contains(slices.Collect(maps.Values(fetched)), res.Snapshot) {
		return nil // the remote has our snapshot (a fast-forward, or nothing new)
	}
	ups = slices.DeleteFunc(ups, func(u update) bool { return u.expect == res.Snapshot || u.ref == "" })
	seen := map[string]bool{}
	ups = slices.DeleteFunc(ups, func(u update) bool {
		dup := seen[u.ref]
		seen[u.ref] = true
		return dup
	})
	for ; len(ups) > 0; res.Tries++ {
		raced, err := push(ctx, h, remote, res.Snapshot, ups, opts.Timeout)
		if err != nil {
			return err
		}
		if !raced {
			res.Pushed = true
			return nil
		}
		if res.Tries > 1 {
			return fmt.Errorf("%w: another repository pushed to %s%s too", ErrRaced, ClonesPrefix, res.Clone)
		}
		own := ClonesPrefix + res.Clone
		if at := ownEarlier(ctx, h, remote, own, res.Snapshot, opts.Timeout); at != "" {
			// Our own ref moved to our snapshot or an earlier one: this
			// clone's push, landing after our fetch (the git push of a
			// sync killed while it waited for the remote goes on), not
			// another repository's. Ours holds it: push over it.
			ups = []update{{own, at, true}}
			continue
		}
		old := res.Clone
		if res.Clone, err = newCloneID(h); err != nil {
			return err
		}
		res.Notes = append(res.Notes, fmt.Sprintf("another repository pushed to this clone's ref %s%s (a copy of this repository?): this clone is %s from now on", ClonesPrefix, old, res.Clone))
		ups = []update{{ClonesPrefix + res.Clone, "", true}}
	}
	return nil
}

// ownEarlier is what the remote's ref holds now when that is head or an
// earlier snapshot of its history ("" when it is not, or cannot be told).
func ownEarlier(parent context.Context, h *history.History, remote, ref, head string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	out, err := gitcmd.OutputContext(ctx, workDir(h), "--git-dir="+h.Repo.CommonDir, "ls-remote", "--refs", remote, ref)
	if err != nil {
		return ""
	}
	f := strings.Fields(out)
	if len(f) != 2 || f[1] != ref {
		return ""
	}
	if base, err := h.MergeBase(ctx, f[0], head); err != nil || base != f[0] {
		return "" // not here, or not in our history: another repository's
	}
	return f[0]
}

// push sets the refs of ups on the remote to head, each under a lease on
// its expect. raced reports that this clone's own ref was rejected because
// it moved (git's "[rejected] (stale info | fetch first | non-fast-forward)",
// or the remote found it changed under the update); such a rejection of
// another ref is no failure. Any other refusal (a hook that declines, a
// read-only remote, no access) is an ErrPush with git's own words;
// retrying would not change it.
func push(parent context.Context, h *history.History, remote, head string, ups []update, timeout time.Duration) (raced bool, err error) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	// The tracking refs are set below, not by git: git moves the tracking
	// ref of the remote's first fetch refspec that matches, and the
	// repository's own come before any given with -c. The negative refspec
	// keeps git from moving this clone's refs/memsync/ through a refspec
	// that maps onto them (+refs/*:refs/*, as git clone --mirror sets). A
	// remote git push mirrors to (remote.<name>.mirror) would refuse
	// refspecs.
	args := []string{"--git-dir=" + h.Repo.CommonDir,
		"-c", "remote." + remote + ".fetch=^refs/memsync/*",
		"-c", "remote." + remote + ".mirror=false",
		"push", "--quiet", "--porcelain", "--no-verify"}
	for _, u := range ups {
		args = append(args, "--force-with-lease="+u.ref+":"+u.expect)
	}
	args = append(args, remote)
	for _, u := range ups {
		args = append(args, head+":"+u.ref)
	}
	cmd := gitcmd.CommandContext(ctx, workDir(h), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if runErr != nil && parent.Err() == nil && ctx.Err() != nil {
		return false, fmt.Errorf("%w: git push %s: no answer in %s (--timeout, MEMSYNC_SYNC_TIMEOUT)", ErrTimeout, remote, timeout)
	}
	if runErr != nil && ctx.Err() != nil {
		return false, fmt.Errorf("%w: git push %s: %w", ErrPush, remote, ctx.Err())
	}
	rejected := rejections(stdout.String())
	msg := gitMessage(stderr.String())
	var done []string
	for _, u := range ups {
		status, ok := rejected[u.ref]
		switch {
		case !ok:
			done = append(done, u.ref)
		case isRace(status, msg) && u.own:
			raced = true
		case !isRace(status, msg):
			return false, fmt.Errorf("%w: %w", ErrPush, gitcmd.Wrap(cmd.Args[1:], runErr, strings.TrimSpace(status+"\n"+msg)))
		}
	}
	if runErr != nil && len(rejected) == 0 {
		return false, fmt.Errorf("%w: %w", ErrPush, gitcmd.Wrap(cmd.Args[1:], runErr, msg))
	}
	// The tracking refs follow (best effort: the next fetch sets them
	// anyway).
	var stdin strings.Builder
	for _, ref := range done {
		tracking := TrackingRef(remote)
		if id, ok := strings.CutPrefix(ref, ClonesPrefix); ok {
			tracking = trackingPrefix(remote) + "clones/" + id
		}
		fmt.Fprintf(&stdin, "update %s %s\n", tracking, head)
	}
	if stdin.Len() > 0 {
		up := gitcmd.CommandContext(ctx, h.Repo.CommonDir, "--git-dir="+h.Repo.CommonDir, "update-ref", "--stdin")
		up.Stdin = strings.NewReader(stdin.String())
		_ = up.Run()
	}
	return raced, nil
}

// rejections maps each rejected ref of git push --porcelain's output
// ("!<TAB>from:to<TAB>summary (reason)") to its status, e.g. "[remote
// rejected] (pre-receive hook declined)".
func rejections(porcelain string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(porcelain, "\n") {
		if f := strings.SplitN(line, "\t", 3); len(f) == 3 && f[0] == "!" {
			_, to, _ := strings.Cut(f[1], ":")
			out[to] = strings.TrimSpace(f[2])
		}
	}
	return out
}

// isRace tells whether a rejection means the remote's ref moved.
func isRace(status, stderr string) bool {
	switch status {
	case "[rejected] (stale info)", "[rejected] (fetch first)", "[rejected] (non-fast-forward)":
		return true // decided here, from the ref the remote advertised
	}
	if !strings.HasPrefix(status, "[remote rejected]") {
		return false
	}
	// The remote's ref changed between our lease check and its update
	// ("cannot lock ref 'R': is at X but expected Y"), or another push holds
	// its lock (".lock': File exists").
	return strings.Contains(stderr, "but expected") || strings.Contains(stderr, "reference already exists") ||
		strings.Contains(stderr, ".lock': File exists")
}

// gitMessage is git's stderr with the padding it puts after "remote:" lines
// removed.
func gitMessage(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \r")
	}
	return strings.Join(lines, "\n")
}

// containedFile is where a sync records which fetched snapshots its result
// holds: the next sync, while the memory's snapshot is still that result,
// does not ask git whether it holds them (a sync with nothing new starts
// no git merge-base). A cache: a snapshot is history, immutable, so what
// it holds never changes; a missing or damaged file only costs git's
// answer.
const containedFile = "synced"

// saveContained records that snapshot ours holds the snapshots contained
// (best effort).
func saveContained(h *history.History, ours string, contained []string) {
	if h.Store.StateDir == "" || ours == "" {
		return
	}
	slices.Sort(contained)
	data := ours + "\n" + strings.Join(contained, "\n") + "\n"
	path := filepath.Join(h.Store.StateDir, containedFile)
	if old, err := fsutil.ReadFile(path, 1<<20); err == nil && string(old) == data {
		return // a sync with nothing new writes nothing
	}
	if fsutil.MkdirAll(h.Store.StateDir, h.Store.DirPerm()) == nil {
		_ = fsutil.WriteCache(path, []byte(data), h.Store.FilePerm())
	}
}

// loadContained is the set saveContained recorded for ours, nil when it
// recorded another snapshot's (or nothing).
func loadContained(h *history.History, ours string) map[string]bool {
	if h.Store.StateDir == "" || ours == "" {
		return nil
	}
	data, err := fsutil.ReadFile(filepath.Join(h.Store.StateDir, containedFile), 1<<20)
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if lines[0] != ours {
		return nil
	}
	known := map[string]bool{}
	for _, c := range lines[1:] {
		if plumbing.IsHash(c) {
			known[c] = true
		}
	}
	return known
}
