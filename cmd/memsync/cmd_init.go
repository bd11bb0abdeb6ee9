package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

// untrack is the advice for a .agent/memories.md that git tracks.
const untrack = "git rm --cached .agent/memories.md && git commit -m 'Stop tracking agent memory'"

func initCommand() command {
	return command{name: "init", usage: "set up the memory home and keep its files out of git status",
		flags: []cli.Flag{
			&cli.BoolFlag{Name: "merge-driver", Usage: "set up 'memsync merge-driver' for a .agent/memories.md tracked in branches"},
		},
		run: func(s *session, c *cli.Context) error {
			if c.Bool("merge-driver") && c.Bool("global") {
				return usageError{errNeedsRepo}
			}
			res, err := s.m.Init(c.Context, memsync.InitOptions{MergeDriver: c.Bool("merge-driver")})
			return s.print(res, err, func() {
				s.printf("%s %s\n", map[bool]string{false: "using", true: "created"}[res.Created], res.File)
				if len(res.Excluded) > 0 {
					s.printf("added %d pattern(s) to %s/info/exclude\n", len(res.Excluded), s.repo.CommonDir)
				}
				if d := res.MergeDriver; d != nil {
					s.printf("merge driver: merge.memsync.driver = %s\nattribute %q in %s\n", d.Driver, d.Line, d.Attributes)
					s.printf("to share it with your team, add this line to .gitattributes (each clone runs 'memsync init --merge-driver' for the git config):\n  %s\n", d.Line)
				}
				if res.Tracked && !res.MergeDriverSet {
					s.warn(".agent/memories.md is tracked by git on this branch; memsync keeps memory history on its own ref instead")
					fmt.Fprintf(s.stderr, "hint: stop tracking it (the file stays on disk): %s\n", untrack)
				}
			})
		},
	}
}
