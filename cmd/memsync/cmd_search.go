package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func searchCommand() command {
	return command{name: "search", usage: "search memories by relevance", argsUsage: "QUERY",
		flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "archive", Usage: "search the archive"},
			&cli.StringFlag{Name: "layer", Usage: "project, global or all"},
			&cli.StringFlag{Name: "type", Aliases: []string{"t"}, Usage: "only entries of this type"},
			&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Value: 20, Usage: "at most this many results (0 = all)"},
		}, append(tagFlags(), filterFlags()...)...),
		args: func(c *cli.Context) error {
			if strings.TrimSpace(strings.Join(c.Args().Slice(), " ")) == "" && c.String("tags") == "" && c.String("any-tags") == "" && c.String("type") == "" && filterOf(c) == (memsync.Filter{}) {
				return usageError{fmt.Errorf("search needs a QUERY (or --tags, --any-tags, --type, --author, --branch, --agent)")}
			}
			if l := c.String("layer"); l != "" && l != "project" && l != "global" && l != "all" {
				return usageError{fmt.Errorf("--layer is project, global or all, not %q", l)}
			}
			return nil
		},
		opens: noMemory, run: runSearch,
	}
}

func runSearch(s *session, c *cli.Context) error {
	query, layer := strings.Join(c.Args().Slice(), " "), c.String("layer")
	if layer == "" {
		layer = choose(c.Bool("global"), "global", "project")
	}
	if err := s.use(layer == "global"); err != nil {
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
		View:    memsync.View{Archive: c.Bool("archive")},
		Limit:   c.Int("limit"),
		Tags:    memsync.SplitList(c.String("tags")),
		AnyTags: memsync.SplitList(c.String("any-tags")),
		Type:    c.String("type"),
		Filter:  filterOf(c),
	}, layers...)
	if err == nil && len(hits) == 0 {
		s.hintSync(c)
	}
	return s.print(hits, err, func() {
		for i := range hits {
			prefix := ""
			if layer == "all" {
				prefix = fmt.Sprintf("%-7s ", hits[i].Layer)
			}
			s.printLine(prefix, &hits[i])
		}
		if len(hits) == 0 {
			s.eprintf("no memory matches %q\n", query)
		}
	})
}
