package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/internal/termsafe"
	"github.com/memsync/memsync/internal/words"
	"github.com/memsync/memsync/memfile"
)

func mergeDriverCommand() command {
	return command{name: "merge-driver", usage: "a git merge driver for a tracked memories.md (memsync init --merge-driver sets it up)",
		argsUsage: "BASE OURS THEIRS [PATH]", opens: noMemory, run: runMergeDriver,
		args: nargs(3, 4, "merge-driver needs BASE OURS THEIRS [PATH] (git passes %O %A %B %P)"),
	}
}

func runMergeDriver(_ *session, c *cli.Context) error {
	var data [3][]byte // a version git does not have is empty
	for i := range data {
		var err error
		if data[i], err = os.ReadFile(c.Args().Get(i)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	path := cmp.Or(c.Args().Get(3), c.Args().Get(1))
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
			"hint: 'memsync doctor --fix' merges them by entry (ours kept, theirs recorded for 'memsync conflicts')\n", termsafe.Line(path), n, words.Plural(n, "y", "ies"))
		return cli.Exit("", 1)
	}
	return nil
}
