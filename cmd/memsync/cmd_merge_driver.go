package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/merge"
)

func mergeDriverCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge-driver",
		Usage:     "a git merge driver for a tracked memories.md (memsync init --merge-driver sets it up)",
		ArgsUsage: "BASE OURS THEIRS [PATH]",
		Description: "git runs it as 'memsync merge-driver %O %A %B %P' for files with the attribute\n" +
			"merge=memsync. It merges the three versions by entry ID, as sync does, and writes\n" +
			"the result to OURS. Exit 0: merged cleanly. Exit 1: some entries were edited\n" +
			"differently on both branches; each is written twice, between git conflict\n" +
			"markers, and 'memsync doctor --fix' (or any memsync command that rewrites the\n" +
			"file) merges them by entry: ours kept, theirs recorded for 'memsync conflicts'.",
		Action: runMergeDriver,
	}
}

func runMergeDriver(c *cli.Context) error {
	if c.NArg() < 3 || c.NArg() > 4 {
		return usageError{fmt.Errorf("merge-driver needs BASE OURS THEIRS [PATH] (git passes %%O %%A %%B %%P)")}
	}
	read := func(p string) ([]byte, error) {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return b, err
	}
	var data [3][]byte
	for i := range data {
		var err error
		if data[i], err = read(c.Args().Get(i)); err != nil {
			return err
		}
	}
	path := c.Args().Get(3)
	if path == "" {
		path = c.Args().Get(1)
	}
	ours, theirs := memfile.Parse(data[1]), memfile.Parse(data[2])
	r := merge.Merge(merge.State{Active: memfile.Parse(data[0]).Entries}, merge.State{Active: ours.Entries}, merge.State{Active: theirs.Entries})
	f := ours
	if len(data[1]) == 0 {
		f = theirs
	}
	if len(f.Entries) == 0 && f.Preamble == "" && len(r.Active) > 0 {
		f.Preamble = memfile.Header + "\n"
	}
	f.Entries, f.Problems = r.Active, nil
	if err := fsutil.WriteFile(c.Args().Get(1), merge.RenderMarked(f, r.Conflicts), 0o644); err != nil {
		return err
	}
	if n := len(r.Conflicts); n > 0 {
		fmt.Fprintf(c.App.ErrWriter, "memsync: %s: %d entr%s edited differently on both sides, written between conflict markers;\n"+
			"hint: 'memsync doctor --fix' merges them by entry (ours kept, theirs recorded for 'memsync conflicts')\n", path, n, plural(n, "y", "ies"))
		return cli.Exit("", 1)
	}
	return nil
}
