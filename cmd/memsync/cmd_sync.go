package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func syncCommand() command {
	return command{name: "sync", usage: "exchange the memory with a git remote, merging by entry", argsUsage: "[REMOTE]",
		flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "show what would change; write nothing but the fetched ref"},
			&cli.BoolFlag{Name: "force", Usage: "go ahead with a merge that removes more than half of the entries"},
			&cli.BoolFlag{Name: "accept-removal", Usage: "snapshot and push a memory that lost more than half of its entries outside memsync"},
			&cli.BoolFlag{Name: "allow-unrelated", Usage: "merge a remote's memory that shares no snapshot with this one and comes from another project's commits"},
			&cli.DurationFlag{Name: "timeout", Usage: "give up on a fetch or push the remote does not answer within this (default 2m; MEMSYNC_SYNC_TIMEOUT)"},
		},
		args: atMost(1, "sync takes at most one remote"), opens: repoOnly, run: runSync,
	}
}

func runSync(s *session, c *cli.Context) error {
	dry := c.Bool("dry-run")
	res, err := s.m.Sync(c.Context, c.Args().First(), memsync.SyncOptions{DryRun: dry, Force: c.Bool("force"), AcceptRemoval: c.Bool("accept-removal"), AllowUnrelated: c.Bool("allow-unrelated"), Timeout: c.Duration("timeout")})
	name := res.Remote
	return s.print(res, err, func() {
		switch {
		case res.Fetched == "" && !res.Pushed && !dry:
			s.printf("%s has no memory snapshots and there are none here to push\n", name)
		case res.Fetched == "":
			s.printf("%s has no memory snapshots yet\n", name)
		case res.Kind == "up-to-date":
			s.printf("memory is up to date with %s\n", name)
		default:
			s.printf("%s from %s (%s): %s\n", choose(dry, "would change", "changed"), name, res.Kind, countChanges(res.Changes, res.ArchiveChanges))
			s.printChanges(res.Changes, "  ")
			s.printChanges(res.ArchiveChanges, "  archive ")
		}
		if n := len(res.Purged); n > 0 {
			s.printf("purged %d entr%s %s's tombstones name (memsync purge ran there): %s\n", n, memsync.Plural(n, "y", "ies"), name, strings.Join(res.Purged, ", "))
			s.printf("  %s\n", res.Prune)
		}
		for _, n := range res.Notes {
			s.printf("  note: %s\n", n)
		}
		if res.Refused != "" {
			s.printf("without --force, sync would stop here: %s\n", res.Refused)
		}
		if res.Pushed {
			s.printf("pushed %s to %s\n", memsync.ShortHash(res.Snapshot), name)
		}
		if res.Backup != "" {
			s.warn("the memory file was damaged; its old content is kept in " + res.Backup)
		}
		if n := len(res.Conflicts); n > 0 {
			s.warn(fmt.Sprintf("%d entr%s edited differently on both sides: ours kept; see 'memsync conflicts', settle with 'memsync resolve ID --ours|--theirs|--edit'", n, memsync.Plural(n, "y", "ies")))
		}
	})
}

func countChanges(active, archive []memsync.Change) string {
	n := map[string]int{}
	for _, ch := range active {
		n[ch.Kind]++
	}
	s := fmt.Sprintf("%d added, %d removed, %d changed", n["added"], n["removed"], n["changed"])
	if len(archive) > 0 {
		s += fmt.Sprintf("; %d in the archive", len(archive))
	}
	return s
}

// printChanges prints one line per changed entry: prefix, +/-/~, ID, heading.
func (s *session) printChanges(changes []memsync.Change, prefix string) {
	mark := map[string]string{"added": "+", "removed": "-", "changed": "~"}
	color := map[string]string{"added": green, "removed": red, "changed": yellow}
	for _, ch := range changes {
		e := ch.After
		if e == nil {
			e = ch.Before
		}
		s.printf("%s%s %s  %s\n", prefix, s.paint(color[ch.Kind], mark[ch.Kind]), ch.ID, e.Heading())
	}
}
