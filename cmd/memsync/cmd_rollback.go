package main

import (
	"github.com/memsync/memsync"
	"github.com/urfave/cli/v2"
)

func rollbackCommand() command {
	return command{name: "rollback", usage: "bring back the memory, or some entries, as they were at a snapshot", argsUsage: "REV [ID...]",
		args: atLeastOne("rollback needs a snapshot (see memsync log)"), opens: repoOnly,
		run: func(s *session, c *cli.Context) error {
			res, err := s.m.Rollback(c.Context, c.Args().First(), c.Args().Tail()...)
			return s.print(res, err, func() {
				switch to := memsync.ShortHash(res.Target); {
				case res.Snapshot == "":
					s.printf("the memory already is as at %s\n", to)
				case len(res.IDs) > 0:
					s.printf("rolled back %d entries to %s; snapshot %s (undo: memsync rollback %s)\n", len(res.IDs), to, memsync.ShortHash(res.Snapshot), memsync.ShortHash(res.Before))
				default:
					s.printf("rolled back the memory to %s; snapshot %s (undo: memsync rollback %s)\n", to, memsync.ShortHash(res.Snapshot), memsync.ShortHash(res.Before))
				}
			})
		},
	}
}
