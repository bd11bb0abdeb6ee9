package main

import (
	"cmp"

	"github.com/memsync/memsync"
	"github.com/urfave/cli/v2"
)

func mergeDriverCommand() command {
	return command{name: "merge-driver", usage: "a git merge driver for a tracked memories.md (memsync init --merge-driver sets it up)",
		argsUsage: "BASE OURS THEIRS [PATH]", opens: noMemory, run: runMergeDriver,
		args: nargs(3, 4, "merge-driver needs BASE OURS THEIRS [PATH] (git passes %O %A %B %P)"),
	}
}

func runMergeDriver(_ *session, c *cli.Context) error {
	a := c.Args()
	n, err := memsync.RunMergeDriver(a.Get(0), a.Get(1), a.Get(2), cmp.Or(a.Get(3), a.Get(1)), c.App.ErrWriter)
	if err == nil && n > 0 {
		return cli.Exit("", 1) // git's word for a conflict; the driver said which
	}
	return err
}
