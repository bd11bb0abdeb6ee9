package memsync

import (
	"errors"
	"fmt"
	"os/exec"

	"github.com/memsync/memsync/hooks"
	"github.com/memsync/memsync/internal/agents"
	"github.com/memsync/memsync/internal/config"
	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/internal/remote"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/lock"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/worktree"
)

// Kind is what kind of failure an error of this package is, as every front
// door tells it: the command line's exit code, the MCP server's advice.
type Kind int

// The kinds of failure (docs/commands.md's table of exit codes gives their numbers).
const (
	KindError    Kind = iota // anything not below: I/O, git, a child process
	KindUsage                // bad arguments or a bad configuration; what the global layer does not have (history, worktrees)
	KindNotFound             // no entry, conflict or snapshot matches, or a prefix is ambiguous
	KindLocked               // the lock was not free in time
	KindRefused              // refused to protect data or by a role: unsafe path, too large, secret, mass removal
	KindNoRepo               // not inside a git repository
)

// Classify tells what kind of failure err is, and what a person can do
// about it ("" when there is nothing to add to the error's own words). It
// is the one place that knows the package's errors: the command line maps
// the kind to its exit code and prints the hint, the MCP server adds the
// hint to its tool error.
func Classify(err error) (Kind, string) {
	return kindOf(err), hintOf(err)
}

func kindOf(err error) Kind {
	switch {
	case errors.As(err, new(*SetupFileError)) && errors.As(err, new(*fsutil.OutsideError)):
		return KindRefused // a link out of the repository: before SetupFileError's usage
	case errors.As(err, new(*config.Error)), errors.As(err, new(*ConfigError)), errors.Is(err, remote.ErrBadRemote), errors.Is(err, ErrCitation),
		errors.Is(err, policy.ErrUnknownRole), errors.Is(err, ErrNoHistory), errors.Is(err, ErrGlobalLayer), errors.Is(err, ErrNoWorkTree),
		errors.Is(err, ErrSetup), errors.As(err, new(*SetupFileError)):
		return KindUsage
	case errors.Is(err, memfile.ErrNotFound), errors.Is(err, memfile.ErrAmbiguous),
		errors.Is(err, history.ErrNoSnapshot), errors.Is(err, history.ErrNotSnapshot), errors.Is(err, history.ErrNothingToPurge):
		return KindNotFound
	case errors.Is(err, lock.ErrTimeout):
		return KindLocked
	case errors.Is(err, store.ErrUnsafePath), errors.Is(err, store.ErrTooLarge), errors.Is(err, memfile.ErrInvalid),
		errors.Is(err, worktree.ErrUnsafe), errors.Is(err, policy.ErrRefused),
		errors.Is(err, merge.ErrMassDeletion), errors.Is(err, hooks.ErrInWorktree), errors.Is(err, history.ErrTooBig), errors.Is(err, history.ErrMassRemoval),
		errors.Is(err, remote.ErrUnrelated), errors.Is(err, store.ErrReadOnly), errors.Is(err, memfile.ErrSecret), errors.Is(err, ErrOutside):
		return KindRefused
	case errors.Is(err, worktree.ErrNotRepo):
		return KindNoRepo
	case errors.As(err, new(*gitcmd.Error)), errors.As(err, new(*exec.ExitError)):
		return KindError // git's (or another child's) exit status is not memsync's
	}
	return KindError
}

func hintOf(err error) string {
	var hw *hooksInWorktreeError
	var se *syncError
	var fe *config.Error
	switch {
	case errors.As(err, new(*workerSecretError)):
		return workerSecretHint(err)
	case errors.As(err, new(*SetupFileError)) && errors.As(err, new(*fsutil.OutsideError)):
		return "nothing was changed: a link in the repository leads out of it (a clone can ship any link); remove it, then run memsync setup again"
	case errors.As(err, new(*SetupFileError)):
		return "nothing was changed; fix the file where the error says (or move it aside), then run memsync setup again"
	case errors.Is(err, ErrSetup):
		return "see 'memsync setup --help'"
	case errors.Is(err, worktree.ErrNotRepo) && errors.Is(err, agents.ErrNoRepo):
		return "run memsync setup inside the repository, or use --scope user"
	case errors.As(err, new(*ConfigError)) && errors.As(err, &fe) && fe.Key == "(link)":
		return "a configuration file is read only inside the repository: remove the symlink " + fe.File + " (or the folder link above it), or put the file there"
	case errors.As(err, new(*ConfigError)) && errors.As(err, &fe) && fe.File != "environment":
		return "fix the value in that file (memories: enabled true|false, inject auto|manual|none, budget TOKENS, filter: types, tags, recent_days; role, max_entries, ttl_days, model)"
	case errors.As(err, &hw):
		return hw.hint()
	case errors.As(err, &se) && se.hint() != "":
		return se.hint()
	case errors.As(err, new(*memfile.DialectError)):
		return "this memory is in ralph-orchestrator's format: give the tag another name"
	case errors.Is(err, history.ErrNothingToPurge):
		return "'memsync list' and 'memsync log -p' show the entries' IDs; 'memsync purge --dry-run --secret RULE' lists what a rule finds"
	case errors.As(err, new(*lock.TimeoutError)):
		return "another process holds the memory's lock; retry, or wait longer with --lock-timeout (MEMSYNC_LOCK_TIMEOUT)"
	case errors.Is(err, worktree.ErrNotRepo):
		return "run memsync inside a git repository (or pass -C DIR and run 'memsync init' there), or use --global for the global memory"
	case errors.As(err, new(*history.SecretError)):
		se := new(history.SecretError)
		errors.As(err, &se)
		if se.Snapshot != "" {
			return fmt.Sprintf("nothing was merged or pushed; 'memsync purge %s' drops the entry here and, at the next sync, from %s's history (whoever wrote it must rotate the key)", se.ID, se.Source)
		}
		return secretSnapshotHint(se.ID)
	case citeHint(err) != "":
		return citeHint(err)
	case store.Fix(err) != "":
		return store.Fix(err)
	case errors.Is(err, policy.ErrRefused):
		return "workers may add, search, list, show and summarize (also the archive); ask an owner or admin (--role, MEMSYNC_ROLE) to do this"
	case errors.Is(err, store.ErrTooLarge):
		return "split the content into several smaller entries"
	case errors.Is(err, history.ErrNoSnapshot):
		return "the hooks take snapshots after every commit (memsync hooks install), or take one now: memsync snapshot"
	case errors.Is(err, history.ErrMassRemoval):
		return "nothing was snapshotted; see what went: 'memsync diff'; put it back: memsync rollback '~0'; if the removal is meant: 'memsync snapshot --accept-removal'"
	case errors.Is(err, history.ErrTooBig):
		return "memsync reads a snapshot's memory file up to twice the memory's cap (--max-bytes, MEMSYNC_MAX_BYTES; or twice the live file); a larger one is left unread"
	case errors.Is(err, history.ErrNotSnapshot):
		return "'memsync log' lists the snapshots; '~1' is the one before the newest, 'live' the memory as it is now"
	case errors.Is(err, memfile.ErrNotFound), errors.Is(err, memfile.ErrAmbiguous):
		return "'memsync list' prints each entry's number and ID; an entry is named by its ID, its number, its key, or a unique ID prefix"
	}
	if ge := new(gitcmd.Error); errors.As(err, &ge) {
		return fmt.Sprintf("git's message says why 'git %s' failed; fix what it names (run the command yourself to see more), then run memsync again", ge.Command())
	}
	return ""
}

// syncError is Sync's failure, with the remote's name for its hint.
type syncError struct {
	remote string
	err    error
}

func (e *syncError) Error() string { return e.err.Error() }
func (e *syncError) Unwrap() error { return e.err }

// hint says what a sync's failure left as it was, and what to do.
func (e *syncError) hint() string {
	name := e.remote
	switch err := e.err; {
	case errors.Is(err, remote.ErrBadRemote):
		return "see 'memsync --help' or 'memsync COMMAND --help'"
	case errors.Is(err, remote.ErrBusy):
		return "wait for that sync to finish and run 'memsync sync' again, or wait longer with --lock-timeout"
	case errors.Is(err, remote.ErrTimeout):
		return fmt.Sprintf("your memory is unchanged and no git is left running; check that %s answers ('git fetch %s'), or give it longer with --timeout", name, name)
	case errors.Is(err, remote.ErrFetch):
		return fmt.Sprintf("your memory is unchanged; check the remote ('git remote -v', 'git fetch %s') and sync again", name)
	case errors.Is(err, remote.ErrPush):
		return fmt.Sprintf("your memory holds what was merged, snapshotted; nothing reached %s: check your push access to it and sync again", name)
	case errors.Is(err, remote.ErrUnrelated):
		return fmt.Sprintf("nothing was merged or pushed; check the remote's URL ('git remote -v'); if the two memories are meant to become one: 'memsync sync %s --allow-unrelated'", name)
	case errors.Is(err, remote.ErrRaced):
		return "another repository pushes to this clone's ref (copies of one repository?); your memory holds what was merged; run 'memsync sync' again"
	case errors.Is(err, history.ErrMassRemoval):
		return "nothing was snapshotted or pushed; see what went: 'memsync diff'; put it back: memsync rollback '~0'; if the removal is meant: 'memsync sync --accept-removal'"
	case errors.Is(err, history.ErrTooBig):
		return fmt.Sprintf("nothing was changed here; whoever pushed it can put back an earlier memory (memsync rollback '~1', then memsync sync --force); if the memory is meant to be that large, raise the cap (--max-bytes, MEMSYNC_MAX_BYTES: a snapshot's file may be twice the cap) and sync %s again", name)
	case errors.Is(err, merge.ErrMassDeletion):
		return "nothing was changed; see what would go: 'memsync sync --dry-run'; if that is right: 'memsync sync --force'"
	}
	return ""
}
