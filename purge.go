package memsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/gitconfig"
	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/internal/remote"
)

// PurgeOptions tune Purge.
type PurgeOptions struct {
	// Secret purges every entry the secret rule of this ID finds
	// ("aws-access-token"; an entry whose Secret-Allowed bullet names the
	// rule is left).
	Secret string
	DryRun bool // list what would be purged; write nothing
	// Local leaves the remote alone: no sync after the purge.
	Local bool
	// Remote is the remote to sync with ("" for the current branch's
	// remote, else origin); a repository without it is not synced.
	Remote string
	// Prune drops the old objects from this clone: the remotes' fetched
	// snapshot refs are deleted (the next sync fetches them again), the
	// snapshot ref's reflog expired, and git gc --prune=now run.
	Prune   bool
	Timeout time.Duration // each fetch and push (see SyncOptions.Timeout)
}

// PurgeResult is what Purge did, or with DryRun would do.
type PurgeResult struct {
	IDs       []string    `json:"ids"`       // the entries purged
	Titles    []string    `json:"titles"`    // their titles (one line each), as last seen
	Snapshots int         `json:"snapshots"` // snapshots in the history
	Holding   int         `json:"holding"`   // snapshots that held one of them
	Rewritten int         `json:"rewritten"` // snapshots rewritten (new hashes)
	Live      int         `json:"live"`      // entries taken out of the live memory and archive
	Old       string      `json:"old"`       // the snapshot ref before ("" none)
	Snapshot  string      `json:"snapshot"`  // the snapshot ref after (a dry run: as before)
	DryRun    bool        `json:"dry_run"`
	Remote    string      `json:"remote"`         // the remote synced with ("" none)
	Sync      *SyncResult `json:"sync,omitempty"` // the sync that pushed the new history
	Pruned    bool        `json:"pruned"`         // --prune ran
	// Remains says where the old snapshots may still be: this clone's
	// object store (without Prune), the remote's (until its own gc), and
	// every other clone (until it syncs).
	Remains []string `json:"remains"`
	// Todo is what the purge cannot do and a person must: rotate a leaked
	// key, have every clone sync, drop the old objects in this clone (without
	// Prune) and on the server.
	Todo []string `json:"todo"`
}

// Purge takes entries out of the memory, the archive and every snapshot of
// the history (refs/memsync/snapshots is rewritten from the first snapshot
// that holds one),
// records them as tombstones that every clone's sync honours, and syncs
// with the remote, which pushes the new history over the old one with a
// lease. ids are entry IDs or unique prefixes, found in the memory or
// anywhere in its history. Owners and admins only.
func (m *Memory) Purge(ctx context.Context, ids []string, o PurgeOptions) (*PurgeResult, error) {
	h, err := m.history(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.allow(policy.OpPurge); err != nil {
		return nil, err
	}
	out := &PurgeResult{DryRun: o.DryRun, Remains: []string{}, Todo: []string{}}
	if !o.DryRun {
		if err := m.beforeWrite(); err != nil {
			return nil, err
		}
	}
	name := o.Remote
	if name == "" {
		name = remote.DefaultRemote(h)
	}
	if o.Timeout == 0 {
		o.Timeout = m.opts.SyncTimeout
	}
	cfg := gitconfig.Repo(h.Repo.CommonDir, h.Repo.GitDir)
	_, hasRemote := cfg.Get("remote." + name + ".url")
	if !o.Local && hasRemote {
		// An entry only another clone's snapshots hold (a secret a sync
		// refused to merge) is found in what the fetch brings; a failed
		// fetch fails the sync below, and is said there.
		_ = remote.Fetch(ctx, h, name, o.Timeout)
	}
	res, err := h.Purge(ctx, history.PurgeOptions{IDs: ids, Rule: o.Secret, DryRun: o.DryRun, Provenance: h.CurrentProvenance("")})
	if err != nil {
		return nil, err
	}
	out.IDs, out.Titles, out.Snapshots, out.Holding, out.Rewritten, out.Live, out.Old, out.Snapshot =
		res.IDs, res.Titles, res.Snapshots, res.Holding, res.Rewritten, res.Live, res.Old, res.Snapshot
	if o.DryRun {
		return out, nil
	}
	var syncErr error
	if !o.Local && hasRemote {
		out.Remote = name
		out.Sync, syncErr = m.Sync(ctx, name, SyncOptions{Timeout: o.Timeout})
	}
	if o.Prune {
		if err := prune(ctx, h); err != nil {
			return out, errors.Join(syncErr, err)
		}
		out.Pruned = true
	}
	out.Remains = remains(h, res.Old, out, syncErr == nil, o.Prune)
	out.Todo = todo(out, syncErr == nil)
	return out, syncErr
}

// prune drops the old history's objects from this clone.
func prune(ctx context.Context, h *history.History) error {
	git := func(args ...string) (string, error) {
		return gitcmd.OutputContext(ctx, h.Repo.CommonDir, append([]string{"--git-dir=" + h.Repo.CommonDir}, args...)...)
	}
	refs, err := git("for-each-ref", "--format=%(refname)", "refs/memsync/remotes/")
	if err != nil {
		return err
	}
	for _, ref := range strings.Fields(refs) {
		if _, err := git("update-ref", "-d", ref); err != nil {
			return err
		}
	}
	// memsync writes no reflog for the ref; git (update-ref with
	// core.logAllRefUpdates=always) may have.
	if _, err := os.Stat(filepath.Join(h.Repo.CommonDir, "logs", filepath.FromSlash(history.Ref))); err == nil {
		if _, err := git("reflog", "expire", "--expire=now", "--expire-unreachable=now", history.Ref); err != nil {
			return err
		}
	}
	_, err = git("gc", "--prune=now", "--quiet")
	return err
}

// remains says where the old history may still be.
func remains(h *history.History, old string, out *PurgeResult, synced, pruned bool) []string {
	var r []string
	switch {
	case old == "" || out.Rewritten == 0:
	case pruned && !objectExists(h, old):
		r = append(r, "this clone: gone (git gc --prune=now ran)")
	case pruned:
		r = append(r, "this clone: the old snapshots are still reachable from another ref or reflog (see 'git for-each-ref', 'git reflog')")
	default:
		r = append(r, "this clone: the old snapshots stay in the object store until git gc expires them; 'memsync purge --prune ID' drops them now")
	}
	switch {
	case out.Remote != "" && synced:
		r = append(r, out.Remote+": the new history is pushed; the old objects stay on the server until its own gc")
	case out.Remote != "":
		r = append(r, out.Remote+": not pushed (the sync failed); run 'memsync sync "+out.Remote+"'")
	default:
		r = append(r, "no remote synced: run 'memsync sync REMOTE' to push the new history")
	}
	return append(r, "every other clone: keeps the entries until it runs 'memsync sync' (its sync purges them); a leaked key must be rotated anyway")
}

// todo is what is left to a person after a purge.
func todo(out *PurgeResult, synced bool) []string {
	t := []string{"rotate every key or password the entries held: a purge stops it spreading, it does not unleak it"}
	if out.Remote == "" || !synced {
		t = append(t, "push the new history: 'memsync sync' (the remote still holds the entries)")
	}
	t = append(t, "have every other clone run 'memsync sync' (its sync purges the entries and drops their old objects there; where the purge takes more than half of its entries, 'memsync sync --force')")
	if !out.Pruned {
		t = append(t, "drop the old objects here: 'git gc --prune=now' (or 'memsync purge --prune' next time)")
	}
	return append(t, "the server keeps the old objects until its own gc ('git gc --prune=now' in a bare repository you host; a hosting service's support for theirs)")
}

// objectExists tells whether this clone still has the object hash.
func objectExists(h *history.History, hash string) bool {
	_, err := gitcmd.Output(h.Repo.CommonDir, "--git-dir="+h.Repo.CommonDir, "cat-file", "-e", hash)
	return err == nil
}
