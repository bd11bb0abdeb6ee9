package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync/memfile"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show memories in full",
		ArgsUsage: "ID...",
		Description: "ID is, first match wins: a full ID, the number list prints, a key (an MCP\n" +
			"save's '- Key:' bullet), or a unique ID prefix of 4+ characters.\n" +
			"Prints each entry as it stands in memories.md (--json: an array of entries).\n" +
			"--archive shows archived entries. Showing an entry counts as an access (gc's TTL).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "archive", Usage: "show entries of the archive"},
		},
		Action: runShow,
	}
}

func runShow(c *cli.Context) error {
	if c.NArg() == 0 {
		return usageError{fmt.Errorf("show needs an ID")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	f, err := s.loadView(c.Bool("archive"))
	if err != nil {
		return err
	}
	idx, err := f.FindAll(c.Args().Slice())
	if err != nil {
		return err
	}
	if !c.Bool("archive") {
		s.touch(s.store, idsOf(f, idx)...)
	}
	if s.json {
		if len(idx) == 1 {
			return s.printJSON(toJSON(&f.Entries[idx[0]], idx[0]+1))
		}
		return s.printJSON(entriesJSON(f, idx, nil))
	}
	for k, i := range idx {
		if k > 0 {
			fmt.Fprintln(s.stdout)
		}
		fmt.Fprint(s.stdout, memfile.RenderEntry(&f.Entries[i], memfile.Orch))
	}
	return nil
}

// idsOf returns the IDs of the entries at idx.
func idsOf(f *memfile.File, idx []int) []string {
	ids := make([]string, len(idx))
	for k, i := range idx {
		ids[k] = f.Entries[i].ID
	}
	return ids
}
