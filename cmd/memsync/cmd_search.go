package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

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
			"match each other: cache, caching, cached). Best matches first.",
		Flags: []cli.Flag{
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
	s, err := openSession(c)
	if err != nil {
		return err
	}
	f, err := s.load()
	if err != nil {
		return err
	}
	hits := recall.Search(docsOf(f), query, recall.Options{
		Limit: c.Int("limit"),
		Tags:  splitList(c.String("tags")),
		Type:  memfile.NormalizeType(c.String("type")),
	})
	idx := make([]int, len(hits))
	scores := make([]float64, len(hits))
	for k, h := range hits {
		idx[k], scores[k] = h.Index, h.Score
	}
	if s.json {
		return s.printJSON(entriesJSON(f, idx, scores))
	}
	if len(hits) == 0 {
		fmt.Fprintf(s.stderr, "no memory matches %q\n", query)
	}
	s.printList(f, idx)
	return nil
}

// docsOf gives the entries to the ranking.
func docsOf(f *memfile.File) []recall.Doc {
	docs := make([]recall.Doc, len(f.Entries))
	for i := range f.Entries {
		e := &f.Entries[i]
		docs[i] = recall.Doc{Title: e.Title, Type: e.Type, Tags: e.Tags, Content: e.Content}
	}
	return docs
}
