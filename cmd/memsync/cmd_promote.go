package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/policy"
)

func promoteCommand() *cli.Command {
	return &cli.Command{
		Name:      "promote",
		Usage:     "copy project memories to the global layer and archive the project copies",
		ArgsUsage: "ID...",
		Description: "For knowledge that holds in every project (seed 001: save to the project first,\n" +
			"promote later). Each entry is copied to the global layer with the same ID and\n" +
			"content and a '- Promoted-From:' bullet naming the repository; then the project\n" +
			"copy moves to the project's archive. The global copy is written first, so a\n" +
			"crash leaves the entry in both layers, never in neither; promoting an entry the\n" +
			"global layer already holds only archives the project copy. Owner and admin only.",
		Action: runPromote,
	}
}

func runPromote(c *cli.Context) error {
	if c.NArg() == 0 {
		return usageError{fmt.Errorf("promote needs at least one ID")}
	}
	if c.Bool("global") {
		return usageError{fmt.Errorf("promote copies from the project layer to the global one; drop --global")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	if err := s.allow(policy.OpPromote); err != nil {
		return err
	}
	f, err := s.load()
	if err != nil {
		return err
	}
	idx, err := f.FindAll(c.Args().Slice())
	if err != nil {
		return err
	}
	gm, err := s.open(true)
	if err != nil {
		return err
	}
	glob := gm.Store()
	ids := map[string]bool{}
	copies := make([]memfile.Entry, 0, len(idx))
	for _, i := range idx {
		e := f.Entries[i]
		ids[e.ID] = true
		e.Extra = append([]memfile.Field(nil), e.Extra...)
		from := s.repo.Primary
		if from == "" { // a bare repository
			from = s.repo.CommonDir
		}
		e.SetField("Promoted-From", from)
		copies = append(copies, e)
	}
	if _, _, err := glob.Import(copies, nil); err != nil {
		return fmt.Errorf("write the global layer: %w", err)
	}
	if err := s.beforeWrite(); err != nil {
		return err
	}
	if _, err := s.store.Move(memfile.ToArchive, func(f *memfile.File) ([]int, error) {
		var out []int
		for i := range f.Entries {
			if ids[f.Entries[i].ID] {
				out = append(out, i)
			}
		}
		return out, nil
	}); err != nil {
		return err
	}
	if s.json {
		out := make([]memsync.Entry, 0, len(copies))
		for i := range copies {
			j := memsync.EntryOf(&copies[i], 0)
			j.Layer = "global"
			out = append(out, j)
		}
		return s.printJSON(out)
	}
	for _, e := range copies {
		fmt.Fprintf(s.stdout, "promoted %s  %s\n", e.ID, e.Heading())
	}
	return nil
}
