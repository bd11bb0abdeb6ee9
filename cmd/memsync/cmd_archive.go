package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/policy"
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
		Action: func(c *cli.Context) error { return runMove(c, memfile.ToArchive) },
	}
}

func restoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "move archived memories back to memories.md",
		ArgsUsage: "ID...",
		Description: "IDs name entries of the archive (see 'memsync list --archive'); they come back\n" +
			"with the same IDs. Owner and admin only.",
		Action: func(c *cli.Context) error { return runMove(c, memfile.ToActive) },
	}
}

func runMove(c *cli.Context, dir memfile.Direction) error {
	op := map[memfile.Direction]policy.Op{memfile.ToArchive: policy.OpArchive, memfile.ToActive: policy.OpRestore}[dir]
	if c.NArg() == 0 {
		return usageError{fmt.Errorf("%s needs at least one ID", op)}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	if err := s.allow(op); err != nil {
		return err
	}
	if err := s.beforeWrite(); err != nil {
		return err
	}
	moved, err := s.store.Move(dir, func(f *memfile.File) ([]int, error) {
		if dir == memfile.ToArchive {
			s.reportDamage(s.store.Path(), f)
		} else {
			s.reportDamage(s.store.ArchivePath(), f)
		}
		return f.FindAll(c.Args().Slice())
	})
	if err != nil {
		if dir == memfile.ToActive && exitCode(err) == exitNotFound {
			return withHint(err, "'memsync list --archive' prints the archived entries with their IDs")
		}
		return err
	}
	if s.json {
		out := make([]memsync.Entry, 0, len(moved))
		for i := range moved {
			out = append(out, memsync.EntryOf(&moved[i], 0))
		}
		return s.printJSON(out)
	}
	verb := map[memfile.Direction]string{memfile.ToArchive: "archived", memfile.ToActive: "restored"}[dir]
	for _, e := range moved {
		fmt.Fprintf(s.stdout, "%s %s  %s\n", verb, e.ID, e.Heading())
	}
	return nil
}
