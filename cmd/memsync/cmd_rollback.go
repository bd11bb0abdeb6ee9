package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func rollbackCommand() *cli.Command {
	return &cli.Command{
		Name:      "rollback",
		Usage:     "bring back the memory, or some entries, as they were at a snapshot",
		ArgsUsage: "REV [ID...]",
		Description: "Without IDs, the active file and the archive become what they were at REV.\n" +
			"With IDs (full, a unique prefix, or the number as REV's list had it), only\n" +
			"those entries do: changed back, put back, or removed if they did not exist at\n" +
			"REV. The memory is snapshotted before and after, so a rollback is undone by\n" +
			"'memsync rollback ~1'. REV is read as by 'memsync diff'.",
		Action: runRollback,
	}
}

func runRollback(c *cli.Context) error {
	if c.NArg() == 0 {
		return usageError{fmt.Errorf("rollback needs a snapshot (see memsync log)")}
	}
	s, err := openRepoSession(c)
	if err != nil {
		return err
	}
	res, err := s.m.Rollback(c.Context, c.Args().First(), c.Args().Tail()...)
	if err != nil {
		return err
	}
	target := res.Target
	if s.json {
		return s.printJSON(res)
	}
	switch {
	case res.Snapshot == "":
		fmt.Fprintf(s.stdout, "the memory already is as at %s\n", shortHash(target))
	case len(res.IDs) > 0:
		fmt.Fprintf(s.stdout, "rolled back %d entries to %s; snapshot %s (undo: memsync rollback %s)\n", len(res.IDs), shortHash(target), shortHash(res.Snapshot), shortHash(res.Before))
	default:
		fmt.Fprintf(s.stdout, "rolled back the memory to %s; snapshot %s (undo: memsync rollback %s)\n", shortHash(target), shortHash(res.Snapshot), shortHash(res.Before))
	}
	return nil
}
