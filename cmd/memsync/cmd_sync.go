package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/history"
	"github.com/memsync/memsync/merge"
	"github.com/memsync/memsync/remote"
)

func syncCommand() *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "exchange the memory with a git remote, merging by entry",
		ArgsUsage: "[REMOTE]",
		Description: "Snapshots the memory, fetches the remote's refs/memsync/snapshots into\n" +
			"refs/memsync/remotes/REMOTE/snapshots, merges it into the memory entry by entry\n" +
			"(added anywhere: kept; deleted on one side and unchanged on the other: deleted;\n" +
			"edited on both: the edits combined, or a conflict that keeps ours and is\n" +
			"recorded for 'memsync conflicts'), commits a merge snapshot, and pushes\n" +
			"refs/memsync/snapshots back with a lease; if another clone pushed first, it\n" +
			"fetches and merges again (5 tries). Only that one ref is ever pushed; your git\n" +
			"does the transport and authentication. A failed fetch or push never loses a\n" +
			"local entry. REMOTE defaults to the current branch's remote, else origin.\n" +
			"--dry-run fetches and shows what the merge would change, writing nothing else.\n" +
			"A merge that would remove more than half of the entries stops unless --force.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "show what would change; write nothing but the fetched ref"},
			&cli.BoolFlag{Name: "force", Usage: "go ahead with a merge that removes more than half of the entries"},
		},
		Action: runSync,
	}
}

func runSync(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageError{fmt.Errorf("sync takes at most one remote")}
	}
	s, err := openRepoSession(c)
	if err != nil {
		return err
	}
	dry := c.Bool("dry-run")
	res, err := s.m.Sync(c.Context, c.Args().First(), memsync.SyncOptions{DryRun: dry, Force: c.Bool("force")})
	name := res.Remote
	if err != nil {
		return syncError(err, name)
	}
	if s.json {
		return s.printJSON(res)
	}
	verb := map[bool]string{true: "would change", false: "changed"}[dry]
	switch {
	case res.Fetched == "" && !res.Pushed && !dry:
		fmt.Fprintf(s.stdout, "%s has no memory snapshots and there are none here to push\n", name)
	case res.Fetched == "":
		fmt.Fprintf(s.stdout, "%s has no memory snapshots yet\n", name)
	case res.Kind == history.UpToDate:
		fmt.Fprintf(s.stdout, "memory is up to date with %s\n", name)
	default:
		fmt.Fprintf(s.stdout, "%s from %s (%s): %s\n", verb, name, res.Kind, countChanges(res.Changes, res.ArchiveChanges))
		printChanges(s, res.Changes, "  ")
		printChanges(s, res.ArchiveChanges, "  archive ")
	}
	if res.Refused != "" {
		fmt.Fprintf(s.stdout, "without --force, sync would stop here: %s\n", res.Refused)
	}
	if res.Pushed {
		fmt.Fprintf(s.stdout, "pushed %s to %s\n", shortHash(res.Snapshot), name)
	}
	if res.Backup != "" {
		s.warn("the memory file was damaged; its old content is kept in " + res.Backup)
	}
	if n := len(res.Conflicts); n > 0 {
		s.warn(fmt.Sprintf("%d entr%s edited differently on both sides: ours kept; see 'memsync conflicts', settle with 'memsync resolve ID --ours|--theirs|--edit'", n, plural(n, "y", "ies")))
	}
	return nil
}

func countChanges(active, archive []memsync.Change) string {
	n := map[string]int{}
	for _, ch := range active {
		n[ch.Kind]++
	}
	s := fmt.Sprintf("%d added, %d removed, %d changed", n[history.Added], n[history.Removed], n[history.Changed])
	if len(archive) > 0 {
		s += fmt.Sprintf("; %d in the archive", len(archive))
	}
	return s
}

// printChanges prints one line per changed entry: prefix, +/-/~, ID, heading.
func printChanges(s *session, changes []memsync.Change, prefix string) {
	mark := map[string]string{history.Added: "+", history.Removed: "-", history.Changed: "~"}
	for _, ch := range changes {
		e := ch.After
		if e == nil {
			e = ch.Before
		}
		fmt.Fprintf(s.stdout, "%s%s %s  %s\n", prefix, mark[ch.Kind], ch.ID, e.Heading())
	}
}

// syncError gives sync's failures their advice.
func syncError(err error, name string) error {
	switch {
	case errors.Is(err, remote.ErrBadRemote):
		return usageError{err}
	case errors.Is(err, remote.ErrFetch):
		return withHint(err, fmt.Sprintf("your memory is unchanged; check the remote ('git remote -v', 'git fetch %s') and sync again", name))
	case errors.Is(err, remote.ErrPush):
		return withHint(err, fmt.Sprintf("the merged memory is kept here (refs/memsync/snapshots); check your push access to %s and sync again", name))
	case errors.Is(err, remote.ErrRaced):
		return withHint(err, "the merged memory is kept here; run 'memsync sync' again in a moment")
	case errors.Is(err, merge.ErrMassDeletion):
		return withHint(err, "nothing was changed; see what would go: 'memsync sync --dry-run'; if that is right: 'memsync sync --force'")
	}
	return err
}
