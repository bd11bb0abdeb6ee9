package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func doctorCommand() command {
	return command{name: "doctor", ownHookCheck: true, usage: "one health report for the whole setup; --fix repairs what it can",
		flags: []cli.Flag{&cli.BoolFlag{Name: "fix", Usage: "repair what can be repaired"}},
		args:  noArgs("doctor"),
		run: func(s *session, c *cli.Context) error {
			fix := c.Bool("fix")
			rep, err := s.m.Doctor(c.Context, memsync.DoctorOptions{Fix: fix})
			if err := s.print(rep, err, func() {
				for _, ch := range rep.Checks {
					s.printf("%-9s %-7s %s\n", ch.Check, ch.Status, ch.Detail)
					if ch.Status == "problem" && ch.Fix != "" {
						s.printf("          fix: %s\n", ch.Fix)
					}
					if ch.Backup != "" {
						s.printf("          backup: %s\n", ch.Backup)
					}
				}
			}); err != nil {
				return err
			}
			left, fixable := rep.Problems()
			return problemsLeft("memsync doctor", fmt.Sprintf("%d problem(s) left", left), left > 0, !fix && fixable)
		},
	}
}

// problemsLeft is the exit of doctor (cmd) and worktree doctor: 1 while
// problems remain, with a hint when a --fix would help.
func problemsLeft(cmd, msg string, left, fixHelps bool) error {
	switch {
	case !left:
		return nil
	case fixHelps:
		return withHint(errors.New(msg), "run '"+cmd+" --fix' to repair what can be repaired")
	}
	return errors.New(msg)
}
