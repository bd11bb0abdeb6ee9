package history

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/words"
)

// ErrDamaged is what a *RefDamage satisfies (errors.Is): a snapshot ref
// names objects the repository lacks.
var ErrDamaged = errors.New("the memory's snapshot history is damaged")

// RefDamage is a snapshot ref (Ref, or one fetched from a remote under refs/memsync/remotes/NAME/)
// that points at a commit the repository lacks, or at one whose history
// (trees, blobs, parents) it lacks: a 'git gc --prune=now' that ran during
// a snapshot, or a damaged object store. Repair mends it.
type RefDamage struct {
	Ref    string // the full ref name
	Commit string // what it points at
	Why    string // the first missing object, as git or go-git said it
}

func (d *RefDamage) Error() string {
	return fmt.Sprintf("%s points at %s, whose objects the repository lacks (%s): a 'git gc --prune=now' during a snapshot, or a damaged object store; 'memsync doctor --fix' repairs the history", d.Ref, words.Short(d.Commit), d.Why)
}

// Is makes a *RefDamage ErrDamaged.
func (d *RefDamage) Is(target error) bool { return target == ErrDamaged }

// remoteRef matches the snapshot refs fetched from remotes.
var remoteRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^refs/memsync/remotes/[^/]+/(snapshots|clones/[^/]+)$`)
})

// Damaged checks Ref and every remote's snapshot ref: each must point at a
// commit whose whole history is in the repository (git rev-list --objects
// --missing=print). It returns the damaged ones; no error means git could
// tell.
func (h *History) Damaged(ctx context.Context) ([]RefDamage, error) {
	out, err := h.git(ctx, "for-each-ref", "--format=%(objectname) %(refname)", "refs/memsync/")
	if err != nil {
		return nil, err
	}
	var found []RefDamage
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		hash, name, ok := strings.Cut(l, " ")
		if !ok || (name != Ref && !remoteRef().MatchString(name)) {
			continue
		}
		if why := h.missing(ctx, hash); why != "" {
			found = append(found, RefDamage{Ref: name, Commit: hash, Why: why})
		}
	}
	return found, ctx.Err()
}

// git runs git on the common git dir.
func (h *History) git(ctx context.Context, args ...string) (string, error) {
	return gitcmd.OutputContext(ctx, h.Repo.CommonDir, append([]string{"--git-dir=" + h.Repo.CommonDir}, args...)...)
}

// missingObject finds the object git names in a "bad object" or "Could not
// read" message.
var missingObject = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:bad object|[Cc]ould not read|missing \w+) ([0-9a-f]{40,64})`)
})

// missing says what commit's history lacks ("" when it is whole).
func (h *History) missing(ctx context.Context, commit string) string {
	out, err := h.git(ctx, "rev-list", "--objects", "--missing=print", commit, "--")
	if ctx.Err() != nil {
		return ""
	}
	if err != nil {
		if m := missingObject().FindStringSubmatch(err.Error()); m != nil {
			return "missing object " + m[1]
		}
		return err.Error()
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "?") {
			return "missing object " + strings.TrimPrefix(l, "?")
		}
	}
	return ""
}

// RepairResult is what Repair did to one damaged ref.
type RepairResult struct {
	RefDamage
	To string // the whole snapshot the ref points at now ("" when the ref was deleted)
	// Dropped is how many snapshots of the damaged history were left out
	// (-1: unknown, the damaged commit itself is gone).
	Dropped int
	Rebuilt bool   // no whole snapshot was found: a new root snapshot of the live memory was made
	Deleted bool   // a remote's ref with no whole snapshot was deleted (the next sync fetches it again)
	From    string // where the ref went back to was found: "parents" or "reflog"
	// Snapshot is the snapshot of the live memory taken on top ("" when the
	// live memory is what To holds, and for a remote's ref).
	Snapshot string
}

// Repair mends a damaged ref d (from Damaged), under the writers' lock: the
// ref goes back to the newest snapshot that is whole, found along the
// damaged commit's parents when it is there, else in the ref's reflog
// (logs/REF, which git keeps where core.logAllRefUpdates=always). Then the
// live memory is snapshotted on top, so nothing live is missing from
// history. With no whole snapshot anywhere, Ref gets a new root snapshot of
// the live memory and a remote's ref is deleted. The ref is moved by git
// update-ref, which checks that the new commit exists and that the ref
// still holds the damaged commit.
func (h *History) Repair(ctx context.Context, d RefDamage, p Provenance) (*RepairResult, error) {
	res := &RepairResult{RefDamage: d, Dropped: -1}
	err := h.Store.WithLock(func() error {
		defer h.fixReflog(ctx, d.Ref)
		h.st.Reindex()
		cur, err := h.RefHash(d.Ref)
		if err != nil {
			return err
		}
		if cur != d.Commit {
			return fmt.Errorf("%s moved to %s while memsync repaired it; run 'memsync doctor' again", d.Ref, words.Short(cur))
		}
		to, dropped, from := h.wholeAncestor(ctx, d.Commit), 0, "parents"
		if to != "" {
			dropped = h.distance(d.Commit, to)
		} else if to = h.wholeInReflog(ctx, d.Ref, d.Commit); to != "" {
			dropped, from = -1, "reflog"
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		res.Dropped, res.From = dropped, from
		if to == "" && d.Ref != Ref {
			res.Deleted = true
			_, err := h.git(ctx, "update-ref", "-d", d.Ref, d.Commit)
			return err
		}
		var snap *Result
		if to == "" {
			res.Rebuilt, res.From = true, ""
			snap, err = h.takeOnto(ctx, "memsync snapshot: history rebuilt from the live memory", p, "", plumbing.ZeroHash, plumbing.NewHash(d.Commit), false)
			if err != nil {
				return err
			}
			if !snap.Created { // no memory at all: nothing to keep
				_, err := h.git(ctx, "update-ref", "-d", d.Ref, d.Commit)
				return err
			}
			res.To, res.Snapshot = snap.Snapshot.Commit, snap.Snapshot.Commit
			return nil
		}
		if _, err := h.git(ctx, "update-ref", "-m", "memsync doctor --fix: back to a whole snapshot", d.Ref, to, d.Commit); err != nil {
			return err
		}
		res.To = to
		if d.Ref != Ref {
			return nil
		}
		if snap, err = h.takeLocked(ctx, "memsync snapshot after repairing history", p, "", false); err != nil {
			return err
		}
		if snap.Created {
			res.Snapshot = snap.Snapshot.Commit
		}
		return nil
	})
	return res, err
}

// wholeAncestor walks commit's first parents (as far as they are there) to
// the first whole snapshot; "" when there is none.
func (h *History) wholeAncestor(ctx context.Context, commit string) string {
	for hash := plumbing.NewHash(commit); !hash.IsZero() && ctx.Err() == nil; {
		c, err := readCommit(h.st, hash)
		if err != nil {
			return ""
		}
		if hash.String() != commit && h.missing(ctx, hash.String()) == "" {
			return hash.String()
		}
		hash = plumbing.ZeroHash
		if len(c.parents) > 0 {
			hash = c.parents[0]
		}
	}
	return ""
}

// distance counts the first-parent steps from commit back to ancestor.
func (h *History) distance(commit, ancestor string) int {
	n := 0
	for hash := plumbing.NewHash(commit); hash.String() != ancestor; n++ {
		c, err := readCommit(h.st, hash)
		if err != nil || len(c.parents) == 0 {
			return -1
		}
		hash = c.parents[0]
	}
	return n
}

// wholeInReflog returns the newest value ref had, by its reflog, that is a
// whole snapshot other than damaged (and that, or a parent of it, is whole).
func (h *History) wholeInReflog(ctx context.Context, ref, damaged string) string {
	f, err := os.Open(filepath.Join(h.Repo.CommonDir, "logs", filepath.FromSlash(ref)))
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	var values []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) >= 2 && plumbing.IsHash(fields[1]) {
			values = append(values, fields[1])
		}
	}
	for i := len(values) - 1; i >= 0 && ctx.Err() == nil; i-- {
		v := values[i]
		if v == damaged || plumbing.NewHash(v).IsZero() {
			continue
		}
		if h.missing(ctx, v) == "" {
			return v
		}
		if a := h.wholeAncestor(ctx, v); a != "" {
			return a
		}
	}
	return ""
}

// fixReflog drops the entries of ref's reflog that name missing objects
// (git fsck reports them, and git gc stops on them), keeping the others.
func (h *History) fixReflog(ctx context.Context, ref string) {
	if _, err := os.Stat(filepath.Join(h.Repo.CommonDir, "logs", filepath.FromSlash(ref))); err != nil {
		return
	}
	_, _ = h.git(ctx, "reflog", "expire", "--stale-fix", "--expire=never", "--expire-unreachable=never", ref)
}
