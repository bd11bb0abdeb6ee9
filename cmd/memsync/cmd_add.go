package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func addCommand() command {
	var content string // CONTENT, read from stdin for '-' before the memory opens
	return command{name: "add", usage: "add a memory (prints its ID)", argsUsage: "CONTENT|-",
		flags: []cli.Flag{
			&cli.StringFlag{Name: "type", Aliases: []string{"t"}, Usage: "entry type, e.g. pattern, decision, fix, solution"},
			&cli.StringFlag{Name: "tags", Usage: "comma-separated tags"},
			&cli.StringFlag{Name: "title", Usage: "heading of the entry (default: the content's first line)"},
			allowSecretFlag,
		},
		args: func(c *cli.Context) (err error) {
			if err = oneArg("add takes one CONTENT argument (or '-' for stdin), got %d")(c); err != nil {
				return err
			}
			if content = c.Args().First(); content == "-" {
				if content, err = stdinContent(c); err != nil {
					return err
				}
			}
			if strings.TrimSpace(content) == "" {
				return usageError{fmt.Errorf("the content is empty")}
			}
			return nil
		},
		run: func(s *session, c *cli.Context) error {
			e, err := s.m.Add(c.Context, memsync.Entry{Type: c.String("type"), Title: c.String("title"), Content: content, Tags: memsync.SplitList(c.String("tags"))})
			if err != nil {
				return err
			}
			switch e.Duplicate {
			case "active":
				s.eprintf("memsync: the same content is already stored as %s; nothing added\n", e.ID)
			case "archive":
				s.eprintf("memsync: the same content is archived as %s; nothing added\nhint: bring it back with: memsync restore %s\n", e.ID, e.ID)
			}
			return s.print(e, nil, func() { s.printf("%s\n", e.ID) })
		},
	}
}

// stdinContent reads an entry's content from standard input (CONTENT '-'),
// without its trailing newlines.
func stdinContent(c *cli.Context) (string, error) {
	// Read one byte past the limit so an oversized entry is refused, not cut.
	b, err := io.ReadAll(io.LimitReader(c.App.Reader, memsync.MaxEntryBytes*4+1))
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(b), "\n"), nil
}
