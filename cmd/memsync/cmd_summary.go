package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/memfile"
)

func summaryCommand() *cli.Command {
	return &cli.Command{
		Name:  "summary",
		Usage: "counts by type and tag, dates, size and limits of the memory and its archive",
		Description: "Prints the active memory's entry count against --max-entries, its size against\n" +
			"the --max-bytes cap, counts by type and by tag, the oldest and newest dates,\n" +
			"and the same for the archive. --archive: the archive only. With --session the\n" +
			"counts cover the session's view. --json prints one object (README).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "archive", Usage: "summarize the archive only"},
		},
		Action: runSummary,
	}
}

func runSummary(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("summary takes no arguments")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	out, err := s.m.Summary(c.Context, memsync.SummaryOptions{ArchiveOnly: c.Bool("archive")})
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(out)
	}
	if m := out.Active; m != nil {
		fmt.Fprintf(s.stdout, "%s memory: %s\n", out.Layer, out.Path)
		fmt.Fprintf(s.stdout, "  entries  %d of max %d\n", m.Entries, out.MaxEntries)
		fmt.Fprintf(s.stdout, "  size     %s of cap %s (%.1f%%)\n", humanBytes(m.Bytes), humanBytes(out.MaxBytes), 100*float64(m.Bytes)/float64(max(out.MaxBytes, 1)))
		printCounts(s, m)
	}
	m := out.Archive
	fmt.Fprintf(s.stdout, "archive: %s\n", s.m.ArchivePath())
	fmt.Fprintf(s.stdout, "  entries  %d\n", m.Entries)
	fmt.Fprintf(s.stdout, "  size     %s\n", humanBytes(m.Bytes))
	printCounts(s, m)
	return nil
}

func printCounts(s *session, m *memfile.Summary) {
	if m.Entries == 0 {
		return
	}
	fmt.Fprintf(s.stdout, "  dates    %s .. %s\n", orDash(m.Oldest), orDash(m.Newest))
	for _, row := range []struct {
		name string
		m    map[string]int
	}{{"types", m.Types}, {"tags", m.Tags}} {
		var parts []string
		for _, c := range memfile.Top(row.m, 10) {
			parts = append(parts, fmt.Sprintf("%s %d", orDash(c.Name), c.N))
		}
		if len(row.m) > 10 {
			parts = append(parts, fmt.Sprintf("(+%d more)", len(row.m)-10))
		}
		if len(parts) > 0 {
			fmt.Fprintf(s.stdout, "  %-8s %s\n", row.name, strings.Join(parts, ", "))
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
