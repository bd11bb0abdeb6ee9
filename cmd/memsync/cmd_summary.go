package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func summaryCommand() command {
	return command{name: "summary", usage: "counts by type and tag, dates, size and limits of the memory and its archive",
		flags: []cli.Flag{&cli.BoolFlag{Name: "archive", Usage: "summarize the archive only"}},
		args:  noArgs("summary"),
		run: func(s *session, c *cli.Context) error {
			out, err := s.m.Summary(c.Context, memsync.SummaryOptions{ArchiveOnly: c.Bool("archive")})
			return s.print(out, err, func() {
				if m := out.Active; m != nil {
					s.printf("%s memory: %s\n  entries  %d of max %d\n", out.Layer, out.Path, m.Entries, out.MaxEntries)
					s.printf("  size     %s of cap %s (%.1f%%)\n", memsync.Size(m.Bytes), memsync.Size(out.MaxBytes), 100*float64(m.Bytes)/float64(max(out.MaxBytes, 1)))
					printCounts(s, m)
				}
				m := out.Archive
				s.printf("archive: %s\n  entries  %d\n  size     %s\n", s.m.ArchivePath(), m.Entries, memsync.Size(m.Bytes))
				printCounts(s, m)
			})
		},
	}
}

func printCounts(s *session, m *memsync.FileSummary) {
	if m.Entries == 0 {
		return
	}
	s.printf("  dates    %s .. %s\n", cmp.Or(m.Oldest, "-"), cmp.Or(m.Newest, "-"))
	for _, name := range []string{"types", "tags"} {
		counts := map[string]map[string]int{"types": m.Types, "tags": m.Tags}[name]
		var parts []string
		for _, c := range top(counts, 10) {
			parts = append(parts, fmt.Sprintf("%s %d", cmp.Or(c.name, "-"), c.n))
		}
		if len(counts) > 10 {
			parts = append(parts, fmt.Sprintf("(+%d more)", len(counts)-10))
		}
		if len(parts) > 0 {
			s.printf("  %-8s %s\n", name, strings.Join(parts, ", "))
		}
	}
}

// count is a name and how often it occurs.
type count struct {
	name string
	n    int
}

// top returns the counts of m, most frequent first (then by name), at most
// n of them.
func top(m map[string]int, n int) []count {
	out := make([]count, 0, len(m))
	for k, v := range m {
		out = append(out, count{k, v})
	}
	slices.SortFunc(out, func(a, b count) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.name, b.name)) })
	return out[:min(n, len(out))]
}
