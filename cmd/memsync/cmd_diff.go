package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "show what changed in the memory between two snapshots",
		ArgsUsage: "[A [B]]",
		Description: "Entries added (+), removed (-) and changed (~) in the active file from A to B,\n" +
			"matched by ID. A and B are snapshots: anything git rev-parse understands\n" +
			"(refs/memsync/snapshots~2, a hash or a prefix of one), '~N' for the N-th\n" +
			"snapshot before the newest, or 'live' for the memory files as they are now.\n" +
			"Without B, B is live; without A, A is the newest snapshot. --text prints a\n" +
			"line diff of the files instead.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "text", Usage: "a line diff of memories.md (and the archive)"},
		},
		Action: runDiff,
	}
}

func runDiff(c *cli.Context) error {
	if c.NArg() > 2 {
		return usageError{fmt.Errorf("diff takes at most two revisions")}
	}
	s, err := openRepoSession(c)
	if err != nil {
		return err
	}
	res, err := s.m.Diff(c.Context, c.Args().Get(0), c.Args().Get(1), memsync.DiffOptions{Text: c.Bool("text")})
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(res)
	}
	fmt.Fprintf(s.stdout, "from %s to %s\n", shortHash(res.From), shortHash(res.To))
	if res.Text != nil {
		fmt.Fprint(s.stdout, *res.Text)
		return nil
	}
	if len(res.Changes) == 0 {
		fmt.Fprintln(s.stdout, "no entry changed")
	}
	printChanges(s, res.Changes, "")
	return nil
}
