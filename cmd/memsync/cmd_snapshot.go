package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name:  "snapshot",
		Usage: "commit the memory onto refs/memsync/snapshots now",
		Description: "Records the active file and the archive as a commit on refs/memsync/snapshots\n" +
			"(the hooks do this after every commit). Nothing is recorded when the memory is\n" +
			"unchanged since the last snapshot.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "the snapshot's message"},
		},
		Action: runSnapshot,
	}
}

func runSnapshot(c *cli.Context) error {
	s, err := openRepoSession(c)
	if err != nil {
		return err
	}
	res, err := s.m.Snapshot(c.Context, memsync.SnapshotOptions{Message: c.String("message")})
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(res)
	}
	switch {
	case res.Created:
		fmt.Fprintf(s.stdout, "snapshot %s\n", res.Snapshot.Commit)
	case res.Snapshot != nil:
		fmt.Fprintf(s.stdout, "unchanged since snapshot %s\n", res.Snapshot.Commit)
	default:
		fmt.Fprintln(s.stdout, "no memory to snapshot")
	}
	return nil
}
