package main

import (
	"github.com/urfave/cli/v2"
)

func deleteCommand() command {
	return command{name: "delete", aliases: []string{"rm"}, usage: "delete memories", argsUsage: "ID...",
		args: atLeastOne("delete needs at least one ID"),
		run: func(s *session, c *cli.Context) error {
			deleted, err := s.m.Delete(c.Context, c.Args().Slice()...)
			return s.print(deleted, err, func() {
				for _, d := range deleted {
					s.printf("deleted %s  %s\n", d.ID, d.Title)
				}
			})
		},
	}
}
