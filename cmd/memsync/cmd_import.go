package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "import memories kept by other tools (seed 001's layout, ralph, orch)",
		ArgsUsage: "DIR|FILE...",
		Description: "Reads:\n" +
			"  - seed 001's layout: a folder of markdown files, one entry each, with YAML\n" +
			"    front matter (key, tags, created_at, updated_at) and an archive/ folder;\n" +
			"    a .multi-agent-mcp folder (memory/ and SESSION/memory/) session by session;\n" +
			"  - a memories.md in ralph's dialect (### mem-… entries) or orch's.\n" +
			"Keys, tags and dates are kept (- Key:, - Updated:, - Session: bullets); archived\n" +
			"entries go to the archive. An entry whose ID or content is already stored is\n" +
			"skipped, so importing twice adds nothing. Owner and admin only.",
		Action: runImport,
	}
}

func runImport(c *cli.Context) error {
	if c.NArg() == 0 {
		return usageError{fmt.Errorf("import needs a DIR or FILE")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	res, err := s.m.Import(c.Context, c.Args().Slice()...)
	var ie *memsync.ImportError
	if errors.As(err, &ie) {
		return withHint(err, "import reads folders of front-matter files (seed 001) and memories.md files (ralph, orch); fix or leave out "+ie.Path)
	}
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(res)
	}
	for _, e := range res.Added {
		fmt.Fprintf(s.stdout, "imported %s  %s\n", e.ID, e.Heading())
	}
	fmt.Fprintf(s.stderr, "imported %d entries (%d archived), skipped %d already stored\n", len(res.Added), res.Archived, res.Skipped)
	return nil
}
