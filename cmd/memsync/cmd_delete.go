package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func deleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Aliases:   []string{"rm"},
		Usage:     "delete memories",
		ArgsUsage: "ID...",
		Description: "Removes the entries from memories.md with one atomic rewrite under the lock.\n" +
			"ID is named as in show (full ID, number, key, unique ID prefix). Every ID\n" +
			"is resolved before anything changes: one bad ID deletes nothing.\n" +
			"Deleted entries are gone (seed 001: delete does not archive; use 'memsync\n" +
			"archive' to keep them). Owner and admin only.",
		Action: runDelete,
	}
}

func runDelete(c *cli.Context) error {
	if c.NArg() == 0 {
		return usageError{fmt.Errorf("delete needs at least one ID")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	deleted, err := s.m.Delete(c.Context, c.Args().Slice()...)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(deleted)
	}
	for _, d := range deleted {
		fmt.Fprintf(s.stdout, "deleted %s  %s\n", d.ID, d.Title)
	}
	return nil
}
