package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "search memories by relevance",
		ArgsUsage: "QUERY",
		Description: "Ranks entries by BM25 over title, tags, type and content (identifiers are\n" +
			"matched whole and split: max_conns, retry-after, useFeatureFlag; word forms\n" +
			"match each other: cache, caching, cached). Best matches first.\n\n" +
			"--archive searches the archive. --layer project|global|all picks the memory\n" +
			"layers (default: project, or global with --global); with all, each line starts\n" +
			"with the layer and JSON entries carry \"layer\". With --session (MEMSYNC_SESSION)\n" +
			"only the session's entries and those of no session. A returned entry counts as\n" +
			"an access (gc's TTL).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "archive", Usage: "search the archive"},
			&cli.StringFlag{Name: "layer", Usage: "project, global or all"},
			&cli.StringFlag{Name: "tags", Usage: "only entries with all these comma-separated tags"},
			&cli.StringFlag{Name: "type", Aliases: []string{"t"}, Usage: "only entries of this type"},
			&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Value: 20, Usage: "at most this many results (0 = all)"},
		},
		Action: runSearch,
	}
}

func runSearch(c *cli.Context) error {
	query := strings.Join(c.Args().Slice(), " ")
	if strings.TrimSpace(query) == "" && c.String("tags") == "" && c.String("type") == "" {
		return usageError{fmt.Errorf("search needs a QUERY (or --tags / --type)")}
	}
	layer := c.String("layer")
	switch {
	case layer == "" && c.Bool("global"):
		layer = "global"
	case layer == "":
		layer = "project"
	case layer != "project" && layer != "global" && layer != "all":
		return usageError{fmt.Errorf("--layer is project, global or all, not %q", layer)}
	}
	s, err := openLayer(c, layer == "global")
	if err != nil {
		return err
	}
	layers := []*memsync.Memory{s.m}
	if layer == "all" {
		g, err := s.open(true)
		if err != nil {
			return err
		}
		layers = append(layers, g)
	}
	hits, err := memsync.SearchLayers(c.Context, query, memsync.SearchOptions{
		View:  memsync.View{Archive: c.Bool("archive")},
		Limit: c.Int("limit"),
		Tags:  splitList(c.String("tags")),
		Type:  c.String("type"),
	}, layers...)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(hits)
	}
	for i := range hits {
		prefix := ""
		if layer == "all" {
			prefix = fmt.Sprintf("%-7s ", hits[i].Layer)
		}
		s.printLine(prefix, &hits[i])
	}
	if len(hits) == 0 {
		fmt.Fprintf(s.stderr, "no memory matches %q\n", query)
	}
	return nil
}
