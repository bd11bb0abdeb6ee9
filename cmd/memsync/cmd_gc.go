package main

import (
	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func gcCommand() command {
	return command{name: "gc", usage: "archive memories past the TTL and the max count",
		flags: []cli.Flag{&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "list what would move; change nothing"}},
		args:  noArgs("gc"),
		run: func(s *session, c *cli.Context) error {
			res, err := s.m.GC(c.Context, memsync.GCOptions{DryRun: c.Bool("dry-run")})
			return s.print(res, err, func() {
				s.printEntries(choose(res.DryRun, "would archive", "archived"), res.Moved)
				if len(res.Moved) == 0 {
					s.eprintf("nothing to archive: every entry is within the limits\n")
				}
			})
		},
	}
}
