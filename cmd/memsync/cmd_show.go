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
	f, err := s.m.Load(c.Context, v)
	if err != nil {
		return err
	}
	idx, err := f.FindAll(c.Args().Slice())
	if err != nil {
		return err
	}
	ids := make([]string, len(idx))
	for k, i := range idx {
		ids[k] = f.Entries[i].ID
	}
	if !v.Archive {
		s.m.Touch(ids...)
	}
	for k, i := range idx {
		if k > 0 {
			s.printf("\n")
		}
		s.printf("%s", memfile.RenderEntry(&f.Entries[i], memfile.Orch))
	}
	return nil
}
