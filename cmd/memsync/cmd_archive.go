package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func archiveCommand() *cli.Command {
	return &cli.Command{
		Name:      "archive",
		Usage:     "move memories to the archive (they can be restored)",
		ArgsUsage: "ID...",
		Description: "Moves the entries from memories.md to archive/memories.md, same IDs. The archive\n" +
			"is written before the entries leave memories.md, under the one lock: a crash\n" +
			"leaves an entry in both files, never in neither. Every ID is resolved first:\n" +
			"one bad ID moves nothing. Owner and admin only.",
		Action: func(c *cli.Context) error { return runMove(c, "archive") },
	}
}

func restoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "move archived memories back to memories.md",
		ArgsUsage: "ID...",
		Description: "IDs name entries of the archive (see 'memsync list --archive'); they come back\n" +
			"with the same IDs. Owner and admin only.",
		Action: func(c *cli.Context) error { return runMove(c, "restore") },
	}
}

func runMove(c *cli.Context, op string) error {
	if c.NArg() == 0 {
		return usageError{fmt.Errorf("%s needs at least one ID", op)}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	move, verb := s.m.Archive, "archived"
	if op == "restore" {
		move, verb = s.m.Restore, "restored"
	}
	moved, err := move(c.Context, c.Args().Slice()...)
	if err != nil {
		if op == "restore" && exitCode(err) == exitNotFound {
			return withHint(err, "'memsync list --archive' prints the archived entries with their IDs")
		}
		return err
	}
	if s.json {
		return s.printJSON(moved)
	}
	for _, e := range moved {
		fmt.Fprintf(s.stdout, "%s %s  %s\n", verb, e.ID, e.Heading())
	}
	return nil
}
