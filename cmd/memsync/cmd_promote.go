package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func promoteCommand() command {
	return command{name: "promote", usage: "copy project memories to the global layer and archive the project copies", argsUsage: "ID...",
		args: func(c *cli.Context) error {
			if c.NArg() > 0 && c.Bool("global") {
				return usageError{fmt.Errorf("promote copies from the project layer to the global one; drop --global")}
			}
			return atLeastOne("promote needs at least one ID")(c)
		},
		flags: []cli.Flag{allowSecretFlag},
		run: func(s *session, c *cli.Context) error {
			copies, err := s.m.Promote(c.Context, c.Args().Slice()...)
			return s.print(copies, err, func() { s.printEntries("promoted", copies) })
		},
	}
}
