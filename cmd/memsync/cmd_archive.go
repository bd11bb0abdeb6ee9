package main

import (
	"github.com/urfave/cli/v2"
)

func archiveCommand() command {
	return command{name: "archive", usage: "move memories to the archive (they can be restored)", argsUsage: "ID...",
		args: atLeastOne("archive needs at least one ID"),
		run: func(s *session, c *cli.Context) error {
			moved, err := s.m.Archive(c.Context, c.Args().Slice()...)
			return s.print(moved, err, func() { s.printEntries("archived", moved) })
		},
	}
}

func restoreCommand() command {
	return command{name: "restore", usage: "move archived memories back to memories.md", argsUsage: "ID...",
		args:  atLeastOne("restore needs at least one ID"),
		flags: []cli.Flag{allowSecretFlag},
		run: func(s *session, c *cli.Context) error {
			moved, err := s.m.Restore(c.Context, c.Args().Slice()...)
			if exitCode(err) == exitNotFound {
				return withHint(err, "'memsync list --archive' prints the archived entries with their IDs")
			}
			return s.print(moved, err, func() { s.printEntries("restored", moved) })
		},
	}
}
