package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
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
	copies, err := s.m.Promote(c.Context, c.Args().Slice()...)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(copies)
	}
	for _, e := range copies {
		fmt.Fprintf(s.stdout, "promoted %s  %s\n", e.ID, e.Heading())
	}
	return nil
}
