package main

import (
	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func showCommand() command {
	return command{name: "show", usage: "show memories in full", argsUsage: "ID...",
		flags: []cli.Flag{&cli.BoolFlag{Name: "archive", Usage: "show entries of the archive"}, noPagerFlag},
		args:  atLeastOne("show needs an ID"),
		pages: func(c *cli.Context) bool { return c.NArg() > 1 }, // one entry is short
		run:   runShow,
	}
}

func runShow(s *session, c *cli.Context) error {
	entries, err := s.m.Get(c.Context, memsync.View{Archive: c.Bool("archive")}, c.Args().Slice()...)
	switch {
	case s.json && len(entries) == 1:
		return s.print(entries[0], err, nil)
	case s.json, err != nil:
		return s.print(entries, err, nil)
	}
	for k := range entries {
		if k > 0 {
			s.printf("\n")
		}
		e := &entries[k]
		s.printf("%s", e.Text())
		if e.Stale {
			s.printf("(may be stale: %s; after reading the code: memsync check --update %s)\n", e.StaleReason, e.ID)
		}
		if e.Supersedes != "" {
			s.printf("(supersedes %s, archived: memsync show --archive %s)\n", e.Supersedes, e.Supersedes)
		}
		if e.SupersededBy != "" {
			s.printf("(superseded by %s)\n", e.SupersededBy)
		}
	}
	return nil
}
