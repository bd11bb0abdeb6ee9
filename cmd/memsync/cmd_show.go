package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
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
	v := memsync.View{Archive: c.Bool("archive")}
	if s.json {
		entries, err := s.m.Get(c.Context, v, c.Args().Slice()...)
		if err != nil {
			return err
		}
		if len(entries) == 1 {
			return s.printJSON(entries[0])
		}
		return s.printJSON(entries)
	}
	f, err := s.m.Load(c.Context, v)
	if err != nil {
		return err
	}
	idx, err := f.FindAll(c.Args().Slice())
	if err != nil {
		return err
	}
	if !v.Archive {
		s.m.Touch(idsOf(f, idx)...)
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
