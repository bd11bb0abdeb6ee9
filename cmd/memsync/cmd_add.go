package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/memfile"
)

func addCommand() *cli.Command {
	return &cli.Command{
		Name:      "add",
		Usage:     "add a memory (prints its ID)",
		ArgsUsage: "CONTENT|-",
		Description: "Appends one entry to the shared memory under the lock, as orch does:\n\n" +
			"   memsync add \"Always use try-catch for async\" -t pattern --tags errors,async\n\n" +
			"CONTENT '-' reads the content from standard input (multi-line content is fine).\n" +
			"The title defaults to the content's first line. At the size cap (--max-bytes)\n" +
			"the oldest entries move to .agent/archive/memories.md, with a warning.\n\n" +
			"Content identical to a stored entry (ignoring case and whitespace) that the\n" +
			"session sees is not added again: add prints the existing ID (and offers\n" +
			"'memsync restore' if it is archived); another session's copy does not count.\n" +
			"Past --max-entries (and once a day for --ttl-days) add runs 'memsync gc',\n" +
			"which never moves the entry add just wrote.\n" +
			"With --session (MEMSYNC_SESSION) the entry gets a '- Session:' bullet. A memory\n" +
			"in ralph-orchestrator's format keeps only content, tags and date: there a session\n" +
			"or a title other than the content's first line is refused (exit 5).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "type", Aliases: []string{"t"}, Usage: "entry type, e.g. pattern, decision, fix, solution"},
			&cli.StringFlag{Name: "tags", Usage: "comma-separated tags"},
			&cli.StringFlag{Name: "title", Usage: "heading of the entry (default: the content's first line)"},
		},
		Action: runAdd,
	}
}

func runAdd(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError{fmt.Errorf("add takes one CONTENT argument (or '-' for stdin), got %d", c.NArg())}
	}
	content := c.Args().First()
	if content == "-" {
		// Read one byte past the limit so an oversized entry is refused, not cut.
		b, err := io.ReadAll(io.LimitReader(c.App.Reader, memfile.DefaultMaxEntryBytes*4+1))
		if err != nil {
			return err
		}
		content = strings.TrimRight(string(b), "\n")
	}
	if strings.TrimSpace(content) == "" {
		return usageError{fmt.Errorf("the content is empty")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	e, err := s.m.Add(c.Context, memsync.Entry{Type: c.String("type"), Title: c.String("title"), Content: content, Tags: splitList(c.String("tags"))})
	var de *memfile.DialectError
	if errors.As(err, &de) {
		return withHint(err, "this memory is in ralph-orchestrator's format: give the tag another name")
	}
	if err != nil {
		return err
	}
	switch e.Duplicate {
	case "active":
		fmt.Fprintf(s.stderr, "memsync: the same content is already stored as %s; nothing added\n", e.ID)
	case "archive":
		fmt.Fprintf(s.stderr, "memsync: the same content is archived as %s; nothing added\nhint: bring it back with: memsync restore %s\n", e.ID, e.ID)
	}
	if s.json {
		return s.printJSON(e)
	}
	fmt.Fprintln(s.stdout, e.ID)
	return nil
}

// splitList splits "a, b,,c" into [a b c].
func splitList(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}
