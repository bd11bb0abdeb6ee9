package main

import (
	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func listCommand() command {
	return command{name: "list", usage: "list the memories, numbered in file order",
		flags: append([]cli.Flag{&cli.BoolFlag{Name: "archive", Usage: "list the archive"}}, filterFlags()...),
		args:  noArgs("list"),
		run: func(s *session, c *cli.Context) error {
			entries, err := s.m.List(c.Context, memsync.View{Archive: c.Bool("archive")})
			filter := filterOf(c)
			entries = memsync.Filtered(entries, filter)
			return s.print(entries, err, func() {
				if len(entries) == 0 && filter != (memsync.Filter{}) {
					s.eprintf("no memories match the filter\n")
				} else if len(entries) == 0 && c.Bool("archive") {
					s.eprintf("the archive is empty\n")
				} else if len(entries) == 0 {
					s.eprintf("no memories yet; add one with: memsync add \"what you learned\" -t pattern\n")
					s.hintSync(c)
				}
				for i := range entries {
					s.printLine("", &entries[i])
				}
			})
		},
	}
}
