package main

import (
	"bufio"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/policy"
)

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "archive memories past the TTL and the max count",
		Description: "Moves to the archive (never deletes) the entries not accessed for --ttl-days\n" +
			"(MCP_MEMORY_TTL_DAYS, default 90), then, while more than --max-entries\n" +
			"(MCP_MEMORY_MAX_ENTRIES, default 1000) remain, the least recently accessed.\n" +
			"An access is show, search or inject returning the entry, or its add or\n" +
			"restore; an entry memsync never saw accessed ages from its '- Date:', else\n" +
			"from its first gc (all in whole seconds). add runs gc by itself past the max\n" +
			"count and once a day, never moving the entry it just wrote. --dry-run lists\n" +
			"what would move. Owner and admin only.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "list what would move; change nothing"},
		},
		Action: runGC,
	}
}

// gcJSON is what gc --json prints.
type gcJSON struct {
	DryRun     bool            `json:"dry_run"`
	MaxEntries int             `json:"max_entries"`
	TTLDays    int             `json:"ttl_days"`
	Moved      []memsync.Entry `json:"moved"`
}

func runGC(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("gc takes no arguments")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	dry := c.Bool("dry-run")
	if !dry {
		if err := s.allow(policy.OpGC); err != nil {
			return err
		}
		if err := s.beforeWrite(); err != nil {
			return err
		}
	}
	lim := *s.store.Limits
	moved, err := s.store.GC(lim, dry)
	if err != nil {
		return err
	}
	if s.json {
		out := gcJSON{DryRun: dry, MaxEntries: lim.MaxEntries, TTLDays: int(lim.TTL / (24 * time.Hour)), Moved: []memsync.Entry{}}
		for i := range moved {
			out.Moved = append(out.Moved, memsync.EntryOf(&moved[i], 0))
		}
		return s.printJSON(out)
	}
	verb := "archived"
	if dry {
		verb = "would archive"
	}
	w := bufio.NewWriter(s.stdout)
	for _, e := range moved {
		fmt.Fprintf(w, "%s %s  %s\n", verb, e.ID, e.Heading())
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(moved) == 0 {
		fmt.Fprintln(s.stderr, "nothing to archive: every entry is within the limits")
	}
	return nil
}
