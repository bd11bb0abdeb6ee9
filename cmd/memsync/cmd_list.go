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
			"and the ID (or a unique prefix of 4+ characters) both name the entry in show and delete.",
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
	f, err := s.load()
	if err != nil {
		return err
	}
	idx := make([]int, len(f.Entries))
	for i := range idx {
		idx[i] = i
	}
	if s.json {
		return s.printJSON(entriesJSON(f, idx, nil))
	}
	if len(idx) == 0 {
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
