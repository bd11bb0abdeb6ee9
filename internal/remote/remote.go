// Package remote shares a repository's memory between clones through the
// user's own git remotes: the snapshot ref refs/memsync/snapshots is fetched
// into refs/memsync/remotes/<remote>/snapshots, merged by entry into the
// memory (history.MergeFrom), and pushed back with a lease. Transport and
// authentication are git's; nothing but the snapshot ref is ever pushed.
package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
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
	// ErrRaced: others pushed first on every try.
	ErrRaced = errors.New("others kept pushing first")
	// ErrTimeout: the remote did not answer a fetch or push in time.
	ErrTimeout = errors.New("the remote did not answer in time")
	// ErrBusy: another sync of this repository held the sync lock too long.
	ErrBusy = errors.New("another memsync sync of this repository is under way")
)

// DefaultTimeout bounds each fetch and push (a slow link's worth; a stuck
// SSH server never answers).
const DefaultTimeout = 2 * time.Minute

// DefaultRaceTime bounds how long Sync keeps trying while other clones
// push first: it backs off between tries (exponentially, with full jitter)
// and gives up with ErrRaced once the next try would start after it.
const DefaultRaceTime = 30 * time.Second

// Backoff between tries that lost a race: a random wait up to
// backoffBase·2^(try-1), never more than backoffMax (variables only as a
// seam for tests).
var backoffBase, backoffMax = 50 * time.Millisecond, 2 * time.Second

// Options tunes Sync.
type Options struct {
	Force  bool // pass the mass-deletion guard of the merge
	DryRun bool // fetch, then report what the merge would change; write nothing else
	// RaceTime bounds the tries while others push first (0:
	// DefaultRaceTime).
	RaceTime time.Duration
	// Timeout bounds each git fetch and push (0: DefaultTimeout): then git
	// and its children are stopped, and Sync returns ErrTimeout.
	Timeout    time.Duration
	Provenance history.Provenance
}

// Result is what Sync did.
type Result struct {
	Remote  string `json:"remote"`
	Fetched string `json:"fetched"` // the remote's snapshot, "" when it has none
	Kind    string `json:"kind"`    // the last merge's kind (history.UpToDate, ...)
	Pushed  bool   `json:"pushed"`
	Tries   int    `json:"tries"`
	// Snapshot is what the remote holds after a push or when up to date,
	// else our newest snapshot.
	Snapshot string `json:"snapshot"`
	// Changes, ArchiveChanges and Conflicts are what the merge made (a try
	// that lost a race made none).
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
}

// TrackingRef is where a remote's snapshots are fetched to.
func TrackingRef(remote string) string { return "refs/memsync/remotes/" + remote + "/snapshots" }

var remoteName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

// DefaultRemote is the remote of the worktree's current branch
// (branch.<name>.remote in the repository's config), else "origin".
func DefaultRemote(h *history.History) string {
	if b := h.CurrentProvenance("").Branch; b != "" {
		if r := h.BranchRemote(b); r != "" && r != "." && remoteName.MatchString(r) {
			return r
		}
	}
	return "origin"
}

// Sync exchanges the memory with a remote: fetch its snapshots, merge them
// into the memory (the live memory is snapshotted first), and push the
// result with a lease that names the snapshot just fetched. A merge of two
// changed sides is made in the memory only once it is pushed
// (history.MergeOptions.Detached): when another clone pushed in between, the
// push is rejected, the merge is dropped, and Sync waits a random while
// (exponential backoff with full jitter) and fetches and merges again, until
// opts.RaceTime is over. Syncs of one repository run one at a time (a lock
// beside its conflict log), without holding the memory's lock during
// network work. ctx kills a git fetch or push under way and stops Sync
// between steps (history.MergeFrom says what a merge does when ctx is done).
func Sync(ctx context.Context, h *history.History, remote string, opts Options) (*Result, error) {
	if !remoteName.MatchString(remote) || strings.Contains(remote, "..") {
		return nil, fmt.Errorf("%w: %q (sync takes the name of a remote; 'git remote -v' lists them, 'git remote add NAME URL' adds one)", ErrBadRemote, remote)
	}
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
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.RaceTime <= 0 {
		opts.RaceTime = DefaultRaceTime
	}
	defer func() { _ = l.Release() }()

	deadline := time.Now().Add(opts.RaceTime)
	res := &Result{Remote: remote}
	for res.Tries = 1; ; res.Tries++ {
		raced, err := try(ctx, h, remote, opts, res)
		if err != nil || !raced {
			return res, err
		}
		wait := backoff(res.Tries)
		if time.Now().Add(wait).After(deadline) {
			return res, fmt.Errorf("%w: %s's snapshots changed during each of %d tries in %s", ErrRaced, remote, res.Tries, opts.RaceTime)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// backoff is the wait after the try-th try lost a race: full jitter, a
// uniform random duration up to backoffBase·2^(try-1), at most backoffMax.
func backoff(try int) time.Duration {
	ceiling := backoffMax
	if try < 30 && backoffBase<<(try-1) < backoffMax {
		ceiling = backoffBase << (try - 1)
	}
	return rand.N(ceiling + 1)
}

// try is one fetch, merge and push; raced reports a push that others beat
// (nothing of this try is left then). res gets what the try did.
func try(ctx context.Context, h *history.History, remote string, opts Options, res *Result) (raced bool, err error) {
	tracked, err := h.RefHash(TrackingRef(remote))
	if err != nil {
		return false, err
	}
	theirs, err := fetch(ctx, h, remote, opts.Timeout)
	if err != nil {
		return false, err
	}
	res.Fetched = theirs
	// Purged entries stay purged: theirs' tombstones are purged here, and
	// a history of theirs that still holds ours' is merged rewritten (the
	// push replaces it, under the lease on what was fetched).
	merging := theirs
	if !opts.DryRun {
		var purged []string
		if merging, purged, err = h.Reconcile(ctx, theirs, TrackingRef(remote), opts.Provenance); err != nil {
			return false, err
		}
		res.Purged = append(res.Purged, purged...)
	}
	mopts := history.MergeOptions{Force: opts.Force, DryRun: opts.DryRun, Detached: true, Source: remote, Provenance: opts.Provenance}
	m, err := h.MergeFrom(ctx, merging, mopts)
	if errors.Is(err, memfile.ErrSecret) {
		untrack(h, remote, tracked) // nothing of it is kept or pushed on
		return false, err
	}
	if errors.Is(err, history.ErrTooBig) {
		// Refused unread: the tracking ref goes back to what it was, so git
		// gc can drop what the fetch brought.
		untrack(h, remote, tracked)
		return false, fmt.Errorf("refused %s's %w", remote, err)
	}
	if err != nil {
		return false, err
	}
	res.Kind, res.Snapshot = m.Kind, m.Snapshot
	res.Changes, res.ArchiveChanges, res.Conflicts, res.Notes = m.Changes, m.ArchiveChanges, m.Conflicts, m.Notes
	if m.Backup != "" {
		res.Backup = m.Backup
	}
	if opts.DryRun {
		res.Refused = m.Refused
		return false, nil
	}
	head := m.Snapshot // a detached merge's
	if m.Kind != history.Merged {
		if head, err = h.RefHash(history.Ref); err != nil {
			return false, err
		}
	}
	res.Snapshot = head
	if head == "" || head == theirs {
		return false, nil // nothing the remote lacks
	}
	raced, err = push(ctx, h, remote, head, theirs, opts.Timeout)
	if err != nil || raced {
		h.Drop(m)
		res.Changes, res.ArchiveChanges, res.Conflicts, res.Notes = nil, nil, nil, nil
		if m.Kind == history.Merged {
			res.Snapshot, _ = h.RefHash(history.Ref)
		}
		return raced, err
	}
	res.Pushed = true
	if m.Kind == history.Merged {
		a, err := h.Adopt(ctx, m, mopts)
		if a != nil && a.Backup != "" {
			res.Backup = a.Backup
		}
		return false, err
	}
	return false, nil
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

// untrack sets TrackingRef(remote) back to old ("" deletes it), best
// effort.
func untrack(h *history.History, remote, old string) {
	args := []string{"--git-dir=" + h.Repo.CommonDir, "update-ref", TrackingRef(remote), old}
	if old == "" {
		args = []string{"--git-dir=" + h.Repo.CommonDir, "update-ref", "-d", TrackingRef(remote)}
	}
	_, _ = gitcmd.Output(h.Repo.CommonDir, args...)
}

// fetch brings the remote's snapshots into TrackingRef(remote) and returns
// their hash, "" when the remote has no snapshots. git streams a blob
// larger than the largest memory file memsync reads to disk instead of
// holding it (core.bigFileThreshold), so a refused snapshot costs no memory
// here either.
func fetch(parent context.Context, h *history.History, remote string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	threshold := max(h.Limit(history.MemoryName), h.Limit(history.ArchiveName))
	cmd := gitcmd.CommandContext(ctx, workDir(h), "--git-dir="+h.Repo.CommonDir, "-c", fmt.Sprintf("core.bigFileThreshold=%d", threshold), "fetch", "--quiet", "--no-tags",
		"--no-write-fetch-head", "--no-auto-gc", remote, "+"+history.Ref+":"+TrackingRef(remote))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if parent.Err() == nil && ctx.Err() != nil {
			return "", fmt.Errorf("%w: git fetch %s: no answer in %s (--timeout, MEMSYNC_SYNC_TIMEOUT)", ErrTimeout, remote, timeout)
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("%w: git fetch %s: %w", ErrFetch, remote, ctx.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "couldn't find remote ref") {
			return "", nil
		}
		return "", fmt.Errorf("%w: %w", ErrFetch, gitcmd.Wrap(cmd.Args[1:], err, msg))
	}
	return h.RefHash(TrackingRef(remote))
}

// push sends our snapshots to the remote if its ref still is expect ("":
// it must not exist). raced reports a rejection because the remote's ref
// moved: the lease or the fast-forward check failed here (git's
// "[rejected] (stale info | fetch first | non-fast-forward)"), or the
// remote found its ref changed under the update. Any other refusal (a hook
// that declines, a read-only remote, no access) is an ErrPush with git's own
// words; retrying would not change it.
func push(parent context.Context, h *history.History, remote, head, expect string, timeout time.Duration) (raced bool, err error) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	cmd := gitcmd.CommandContext(ctx, workDir(h), "--git-dir="+h.Repo.CommonDir, "push", "--quiet", "--porcelain", "--no-verify",
		"--force-with-lease="+history.Ref+":"+expect, remote, head+":"+history.Ref)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if parent.Err() == nil && ctx.Err() != nil {
			return false, fmt.Errorf("%w: git push %s: no answer in %s (--timeout, MEMSYNC_SYNC_TIMEOUT)", ErrTimeout, remote, timeout)
		}
		if ctx.Err() != nil {
			return false, fmt.Errorf("%w: git push %s: %w", ErrPush, remote, ctx.Err())
		}
		status := rejection(stdout.String())
		msg := gitMessage(stderr.String())
		if isRace(status, msg) {
			return true, nil
		}
		if status != "" {
			msg = strings.TrimSpace(status + "\n" + msg)
		}
		return false, fmt.Errorf("%w: %w", ErrPush, gitcmd.Wrap(cmd.Args[1:], err, msg))
	}
	// The tracking ref follows (best effort: the next fetch sets it anyway).
	_, _ = gitcmd.OutputContext(ctx, h.Repo.CommonDir, "--git-dir="+h.Repo.CommonDir, "update-ref", TrackingRef(remote), head)
	return false, nil
}

// rejection is the status of the rejected ref in git push --porcelain's
// output ("!<TAB>from:to<TAB>summary (reason)"), e.g. "[remote rejected]
// (pre-receive hook declined)"; "" when no ref was rejected.
func rejection(porcelain string) string {
	for _, line := range strings.Split(porcelain, "\n") {
		if f := strings.SplitN(line, "\t", 3); len(f) == 3 && f[0] == "!" {
			return strings.TrimSpace(f[2])
		}
	}
	return ""
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
