package main

import (
	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/memfile"
)

func showCommand() command {
	return command{name: "show", usage: "show memories in full", argsUsage: "ID...",
		flags: []cli.Flag{&cli.BoolFlag{Name: "archive", Usage: "show entries of the archive"}},
		args:  atLeastOne("show needs an ID"),
		run:   runShow,
	}
}

func runShow(s *session, c *cli.Context) error {
	v := memsync.View{Archive: c.Bool("archive")}
	if s.json {
		entries, err := s.m.Get(c.Context, v, c.Args().Slice()...)
		if len(entries) == 1 {
			return s.print(entries[0], err, nil)
		}
		return s.print(entries, err, nil)
	}
	entries, err := s.m.Get(c.Context, v, c.Args().Slice()...) // marks stale entries, counts as accessed
	if err != nil {
		return err
	}
	f, err := s.m.Load(c.Context, v)
	if err != nil {
		return err
	}
	for k := range entries {
		if k > 0 {
			s.printf("\n")
		}
		e := &entries[k]
		idx, err := f.FindAll([]string{e.ID})
		if err != nil {
			return err
		}
		s.printf("%s", memfile.RenderEntry(&f.Entries[idx[0]], memfile.Orch))
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
