package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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
			&cli.GenericFlag{Name: "cite", Value: &specs{}, Usage: "cite the code the memory is about: `PATH[:LINE[-LINE]]`, relative to the current folder (repeatable); files the content names are cited too"},
			&cli.BoolFlag{Name: "no-cite", Usage: "do not cite the files the content names"},
			&cli.StringFlag{Name: "supersedes", Usage: "archive the entry `ID` names, replaced by this one (both record the link)"},
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
			dir, err := startDir(c)
			if err != nil {
				return err
			}
			o := memsync.AddOptions{Cite: *c.Generic("cite").(*specs), Dir: dir, NoAutoCite: c.Bool("no-cite"), Supersedes: c.String("supersedes")}
			e, err := s.m.AddWith(c.Context, memsync.Entry{Type: c.String("type"), Title: c.String("title"), Content: content, Tags: memsync.SplitList(c.String("tags"))}, o)
			if err != nil {
				return err
			}
			switch e.Duplicate {
			case "active":
				s.eprintf("memsync: the same content is already stored as %s; nothing added\n", e.ID)
			case "archive":
				s.eprintf("memsync: the same content is archived as %s; nothing added\nhint: bring it back with: memsync restore %s\n", e.ID, e.ID)
			}
			if len(e.Similar) > 0 {
				s.eprintf("memsync: %s is nearly the same as %s\nhint: if it replaces %s: memsync delete %s, then add it again with --supersedes %s (or keep both)\n",
					e.ID, strings.Join(e.Similar, ", "), e.Similar[0], e.ID, e.Similar[0])
			}
			if e.Supersedes != "" && e.Duplicate == "" {
				s.eprintf("memsync: %s supersedes %s, which is archived\n", e.ID, e.Supersedes)
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

// specs are the values of a repeatable flag, each kept whole (a path may
// hold a comma).
type specs []string

func (v *specs) Set(s string) error { *v = append(*v, s); return nil }
func (v *specs) String() string     { return strings.Join(*v, " ") }

// startDir is the folder relative paths on the command line start from:
// -C DIR, else the current folder.
func startDir(c *cli.Context) (string, error) {
	if d := c.String("C"); d != "" {
		return filepath.Abs(d)
	}
	return os.Getwd()
}
