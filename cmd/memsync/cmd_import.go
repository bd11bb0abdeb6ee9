package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/policy"
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

// importJSON is what import --json prints.
type importJSON struct {
	Added   []memsync.Entry `json:"added"`
	Skipped int             `json:"skipped"`
}

func runImport(c *cli.Context) error {
	if c.NArg() == 0 {
		return usageError{fmt.Errorf("import needs a DIR or FILE")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	if err := s.allow(policy.OpImport); err != nil {
		return err
	}
	var active, archived []memfile.Entry
	for _, p := range c.Args().Slice() {
		a, b, err := memfile.ReadForeign(p)
		if err != nil {
			return withHint(err, "import reads folders of front-matter files (seed 001) and memories.md files (ralph, orch); fix or leave out "+p)
		}
		active, archived = append(active, a...), append(archived, b...)
	}
	if err := s.beforeWrite(); err != nil {
		return err
	}
	added, skipped, err := s.store.Import(active, archived)
	if err != nil {
		return err
	}
	if s.json {
		out := importJSON{Added: []memsync.Entry{}, Skipped: skipped}
		for i := range added {
			out.Added = append(out.Added, memsync.EntryOf(&added[i], 0))
		}
		return s.printJSON(out)
	}
	for _, e := range added {
		fmt.Fprintf(s.stdout, "imported %s  %s\n", e.ID, e.Heading())
	}
	fmt.Fprintf(s.stderr, "imported %d entries (%d archived), skipped %d already stored\n", len(added), countIn(added, archived), skipped)
	return nil
}

// countIn counts the entries of a that are in b (by ID).
func countIn(a, b []memfile.Entry) int {
	ids := map[string]bool{}
	for _, e := range b {
		ids[e.ID] = true
	}
	n := 0
	for _, e := range a {
		if ids[e.ID] {
			n++
		}
	}
	return n
}
