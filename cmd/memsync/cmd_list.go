package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the memories, numbered in file order",
		Description: "Prints one line per entry: its number, ID, date, heading and tags. The number\n" +
			"and the ID (or a unique prefix of 4+ characters) both name the entry in show and delete.\n" +
			"--archive lists the archive (numbers and IDs then name archived entries, for restore).\n" +
			"With --session (MEMSYNC_SESSION) only the session's entries and those of no session.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "archive", Usage: "list the archive"},
		},
		Action: runList,
	}
}

func runList(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("list takes no arguments")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	entries, err := s.m.List(c.Context, memsync.View{Archive: c.Bool("archive")})
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(entries)
	}
	if len(entries) == 0 && c.Bool("archive") {
		fmt.Fprintln(s.stderr, "the archive is empty")
	} else if len(entries) == 0 {
		fmt.Fprintln(s.stderr, "no memories yet; add one with: memsync add \"what you learned\" -t pattern")
	}
	s.printList(entries)
	return nil
}
