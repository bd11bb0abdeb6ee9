package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func diffCommand() command {
	return command{name: "diff", usage: "show what changed in the memory between two snapshots", argsUsage: "[A [B]]",
		flags: []cli.Flag{&cli.BoolFlag{Name: "text", Usage: "a line diff of memories.md (and the archive)"}, noPagerFlag},
		args:  atMost(2, "diff takes at most two revisions"), opens: repoOnly, pages: alwaysPage,
		run: func(s *session, c *cli.Context) error {
			res, err := s.m.Diff(c.Context, c.Args().Get(0), c.Args().Get(1), memsync.DiffOptions{Text: c.Bool("text")})
			return s.print(res, err, func() {
				s.printf("from %s to %s\n", memsync.ShortHash(res.From), memsync.ShortHash(res.To))
				if res.Text != nil {
					for l := range strings.Lines(*res.Text) {
						line, nl := strings.CutSuffix(l, "\n")
						s.printf("%s%s", s.paint(diffColor(line), line), choose(nl, "\n", ""))
					}
					return
				}
				if len(res.Changes) == 0 {
					s.printf("no entry changed\n")
				}
				s.printChanges(res.Changes, "")
			})
		},
	}
}
