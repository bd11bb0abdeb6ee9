package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync/memfile"
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
	f, err := s.loadView(c.Bool("archive"))
	if err != nil {
		return err
	}
	idx := s.scoped(f)
	if s.json {
		return s.printJSON(entriesJSON(f, idx, nil))
	}
	if len(idx) == 0 && c.Bool("archive") {
		fmt.Fprintln(s.stderr, "the archive is empty")
	} else if len(idx) == 0 {
		fmt.Fprintln(s.stderr, "no memories yet; add one with: memsync add \"what you learned\" -t pattern")
	}
	s.printList(f, idx)
	return nil
}

func entriesJSON(f *memfile.File, idx []int, scores []float64) []entryJSON {
	out := make([]entryJSON, 0, len(idx))
	for k, i := range idx {
		j := toJSON(&f.Entries[i], i+1)
		if scores != nil {
			j.Score = &scores[k]
		}
		out = append(out, j)
	}
	return out
}
