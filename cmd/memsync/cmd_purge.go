package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func purgeCommand() command {
	return command{name: "purge", usage: "take entries out of the memory and its whole history, and push that", argsUsage: "ID... | --secret RULE",
		flags: []cli.Flag{
			&cli.StringFlag{Name: "secret", Usage: "purge every entry the secret rule `RULE` finds (e.g. aws-access-token)"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "list what would be purged; write nothing"},
			&cli.BoolFlag{Name: "local", Usage: "do not sync: leave the remote as it is"},
			&cli.StringFlag{Name: "remote", Usage: "the remote to push the new history to (default: the branch's remote, else origin)"},
			&cli.BoolFlag{Name: "prune", Usage: "drop the old snapshots from this clone now (reflog expire, git gc --prune=now)"},
			&cli.DurationFlag{Name: "timeout", Usage: "give up on a fetch or push the remote does not answer within this (default 2m; MEMSYNC_SYNC_TIMEOUT)"},
		},
		opens: repoOnly,
		args: func(c *cli.Context) error {
			if c.NArg() == 0 && c.String("secret") == "" {
				return usageError{errors.New("purge needs entry IDs or --secret RULE")}
			}
			return nil
		},
		run: runPurge,
	}
}

func runPurge(s *session, c *cli.Context) error {
	dry := c.Bool("dry-run")
	res, err := s.m.Purge(c.Context, c.Args().Slice(), memsync.PurgeOptions{
		Secret: c.String("secret"), DryRun: dry, Local: c.Bool("local"), Remote: c.String("remote"),
		Prune: c.Bool("prune"), Timeout: c.Duration("timeout"),
	})
	if res == nil {
		return err
	}
	if err != nil { // the purge stands; the sync or the pruning failed
		err = withHint(fmt.Errorf("purged here, but: %w", err), "the purge stands here; run 'memsync sync' to push the new history (and 'memsync purge --prune --local ID' to drop the old objects)")
	}
	return s.print(res, err, func() {
		n := len(res.IDs)
		s.printf("%s %d entr%s:\n", choose(dry, "would purge", "purged"), n, memsync.Plural(n, "y", "ies"))
		for i, id := range res.IDs {
			s.printf("  %s  %s\n", id, res.Titles[i])
		}
		s.printf("%d of %d snapshots hold %s", res.Holding, res.Snapshots, memsync.Plural(n, "it", "them"))
		if dry {
			s.printf("; the history would be rewritten from the first of them\n")
			return
		}
		s.printf("; %d snapshots rewritten, %d entr%s taken out of the live memory; new snapshot %s\n",
			res.Rewritten, res.Live, memsync.Plural(res.Live, "y", "ies"), memsync.ShortHash(res.Snapshot))
		if res.Sync != nil && res.Sync.Pushed {
			s.printf("pushed the new history to %s (with a lease)\n", res.Remote)
		}
		for _, r := range res.Remains {
			s.printf("  %s\n", r)
		}
		s.printf("still to do:\n")
		for _, r := range res.Todo {
			s.printf("  - %s\n", r)
		}
	})
}
