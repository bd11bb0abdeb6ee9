package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync/history"
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

type snapshotResult struct {
	Created  bool              `json:"created"`
	Snapshot *history.Snapshot `json:"snapshot"`
}

func runSnapshot(c *cli.Context) error {
	s, err := openRepoSession(c)
	if err != nil {
		return err
	}
	h := history.Open(s.repo, s.store)
	res, err := h.Take(c.String("message"), h.CurrentProvenance(""))
	if err != nil {
		return err
	}
	if n := len(res.Problems); n > 0 {
		s.warn(fmt.Sprintf("%s has %d problem(s) (first: %s); snapshotted as it is", s.store.Path(), n, res.Problems[0]))
	}
	if s.json {
		return s.printJSON(snapshotResult{Created: res.Created, Snapshot: res.Snapshot})
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
