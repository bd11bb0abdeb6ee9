package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync/internal/hugepage"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/recall"
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

// searchSource is one memory file a search reads.
type searchSource struct {
	layer string
	store *memfile.Store
	f     *memfile.File
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
	var sources []searchSource
	for _, name := range []string{"project", "global"} {
		if layer != name && layer != "all" {
			continue
		}
		st := s.store
		if name == "global" && !s.global {
			st, err = s.globalStore()
		} else if name == "project" && s.global {
			st, err = s.projectStore()
		}
		if err != nil {
			return err
		}
		var f *memfile.File
		if c.Bool("archive") {
			f, err = st.LoadArchive()
		} else {
			f, err = st.Load()
		}
		if err != nil {
			return err
		}
		s.reportDamage(st.Path(), f)
		sources = append(sources, searchSource{name, st, f})
	}
	// One ranking over every entry in view; at[k] is where docs[k] came from.
	type origin struct{ src, i int }
	scoped := make([][]int, len(sources))
	n := 0
	for k, src := range sources {
		scoped[k] = s.scoped(src.f)
		n += len(scoped[k])
	}
	docs := hugepage.Make[recall.Doc](n)[:0]
	at := make([]origin, 0, n)
	for k, src := range sources {
		for _, i := range scoped[k] {
			e := &src.f.Entries[i]
			docs = append(docs, e.Doc())
			at = append(at, origin{k, i})
		}
	}
	hits := recall.Search(docs, query, recall.Options{
		Limit: c.Int("limit"),
		Tags:  splitList(c.String("tags")),
		Type:  memfile.NormalizeType(c.String("type")),
	})
	touched := make([][]string, len(sources))
	out := make([]entryJSON, 0, len(hits))
	for _, h := range hits {
		o := at[h.Index]
		src := sources[o.src]
		touched[o.src] = append(touched[o.src], src.f.Entries[o.i].ID)
		if s.json {
			j := toJSON(&src.f.Entries[o.i], o.i+1)
			score := h.Score
			j.Score = &score
			if layer == "all" {
				j.Layer = src.layer
			}
			out = append(out, j)
			continue
		}
		prefix := ""
		if layer == "all" {
			prefix = fmt.Sprintf("%-7s ", src.layer)
		}
		s.printLine(prefix, src.f, o.i)
	}
	if !c.Bool("archive") {
		for k, ids := range touched {
			s.touch(sources[k].store, ids...)
		}
	}
	if s.json {
		return s.printJSON(out)
	}
	if len(hits) == 0 {
		fmt.Fprintf(s.stderr, "no memory matches %q\n", query)
	}
	return nil
}
