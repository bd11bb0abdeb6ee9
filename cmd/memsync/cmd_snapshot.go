package main

import (
	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func snapshotCommand() command {
	return command{name: "snapshot", usage: "commit the memory onto refs/memsync/snapshots now",
		flags: []cli.Flag{&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "the snapshot's message"},
			&cli.BoolFlag{Name: "accept-removal", Usage: "snapshot a memory that lost more than half of its entries outside memsync"}},
		opens: repoOnly,
		run: func(s *session, c *cli.Context) error {
			res, err := s.m.Snapshot(c.Context, memsync.SnapshotOptions{Message: c.String("message"), AcceptRemoval: c.Bool("accept-removal")})
			return s.print(res, err, func() {
				switch {
				case res.Created:
					s.printf("snapshot %s\n", res.Snapshot.Commit)
				case res.Snapshot != nil:
					s.printf("unchanged since snapshot %s\n", res.Snapshot.Commit)
				default:
					s.printf("no memory to snapshot\n")
				}
			})
		},
	}
}
