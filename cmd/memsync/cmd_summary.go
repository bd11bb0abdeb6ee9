package main

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/internal/words"
	"github.com/memsync/memsync/memfile"
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
					s.printf("  size     %s of cap %s (%.1f%%)\n", words.Bytes(m.Bytes), words.Bytes(out.MaxBytes), 100*float64(m.Bytes)/float64(max(out.MaxBytes, 1)))
					printCounts(s, m)
				}
				m := out.Archive
				s.printf("archive: %s\n  entries  %d\n  size     %s\n", s.m.ArchivePath(), m.Entries, words.Bytes(m.Bytes))
				printCounts(s, m)
			})
		},
	}
}

func printCounts(s *session, m *memfile.Summary) {
	if m.Entries == 0 {
		return
	}
	s.printf("  dates    %s .. %s\n", cmp.Or(m.Oldest, "-"), cmp.Or(m.Newest, "-"))
	for _, name := range []string{"types", "tags"} {
		counts := map[string]map[string]int{"types": m.Types, "tags": m.Tags}[name]
		var parts []string
		for _, c := range memfile.Top(counts, 10) {
			parts = append(parts, fmt.Sprintf("%s %d", cmp.Or(c.Name, "-"), c.N))
		}
		if len(counts) > 10 {
			parts = append(parts, fmt.Sprintf("(+%d more)", len(counts)-10))
		}
		if len(parts) > 0 {
			s.printf("  %-8s %s\n", name, strings.Join(parts, ", "))
		}
	}
}
