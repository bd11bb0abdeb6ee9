package main

import (
	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func showCommand() command {
	return command{name: "show", usage: "show memories in full", argsUsage: "ID...",
		flags: []cli.Flag{&cli.BoolFlag{Name: "archive", Usage: "show entries of the archive"}},
		args:  atLeastOne("show needs an ID"),
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
		s.printf("%s", entries[k].Text())
	}
	return nil
}
