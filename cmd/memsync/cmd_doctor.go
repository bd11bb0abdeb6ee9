package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "one health report for the whole setup; --fix repairs what it can",
		Description: "Checks the memory file and the archive (git conflict markers, NUL bytes, bad\n" +
			"UTF-8, duplicate IDs), every worktree's link to the memory, the git hooks, the\n" +
			"recorded conflicts, a lock on refs/memsync/snapshots left by a killed snapshot\n" +
			"(--fix removes it), and whether git tracks .agent/memories.md. With --fix, a file\n" +
			"with git conflict markers is merged by entry: its two sides are parsed, an entry\n" +
			"on either side is kept, the same entry on both sides is one entry, and an entry\n" +
			"that differs keeps ours and records theirs for 'memsync conflicts'; entries that\n" +
			"repeat an earlier entry's ID get new IDs. The damaged file is kept as\n" +
			"memories.md.bak-<hash>, one backup per distinct content; damage --fix cannot\n" +
			"repair (NUL bytes, markers that do not pair up) is for an edit by hand, which\n" +
			"doctor names. Worktree problems are repaired as by\n" +
			"'memsync worktree doctor --fix'. Exits 1 while problems remain.",
		Flags:  []cli.Flag{&cli.BoolFlag{Name: "fix", Usage: "repair what can be repaired"}},
		Action: runDoctor,
	}
}

func runDoctor(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("doctor takes no arguments")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	fix := c.Bool("fix")
	rep, err := s.m.Doctor(c.Context, memsync.DoctorOptions{Fix: fix})
	if err != nil {
		return err
	}
	if s.json {
		if err := s.printJSON(rep); err != nil {
			return err
		}
	} else {
		for _, ch := range rep.Checks {
			fmt.Fprintf(s.stdout, "%-9s %-7s %s\n", ch.Check, ch.Status, ch.Detail)
			if ch.Status == memsync.CheckProblem && ch.Fix != "" {
				fmt.Fprintf(s.stdout, "          fix: %s\n", ch.Fix)
			}
			if ch.Backup != "" {
				fmt.Fprintf(s.stdout, "          backup: %s\n", ch.Backup)
			}
		}
	}
	if left, fixable := rep.Problems(); left > 0 {
		msg := fmt.Sprintf("%d problem(s) left", left)
		if !fix && fixable {
			return withHint(errors.New(msg), "run 'memsync doctor --fix' to repair what can be repaired")
		}
		return errors.New(msg)
	}
	return nil
}
