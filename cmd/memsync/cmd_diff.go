package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/history"
	"github.com/memsync/memsync/memfile"
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

type changeJSON struct {
	Kind   string         `json:"kind"`
	ID     string         `json:"id"`
	Before *memsync.Entry `json:"before"`
	After  *memsync.Entry `json:"after"`
}

type diffResult struct {
	From    string       `json:"from"`
	To      string       `json:"to"`
	Changes []changeJSON `json:"changes"`
	Text    *string      `json:"text,omitempty"`
}

// revFiles reads the memory files of a revision or of "live".
func revFiles(h *history.History, rev string) (string, history.Files, error) {
	if rev == "live" {
		f, err := h.Live()
		return "live", f, err
	}
	hash, err := h.Resolve(rev)
	if err != nil {
		return "", history.Files{}, err
	}
	f, err := h.Files(hash)
	return hash, f, err
}

func runDiff(c *cli.Context) error {
	if c.NArg() > 2 {
		return usageError{fmt.Errorf("diff takes at most two revisions")}
	}
	s, err := openRepoSession(c)
	if err != nil {
		return err
	}
	h := history.Open(s.repo, s.store)
	a, b := c.Args().Get(0), c.Args().Get(1)
	if a == "" {
		head, err := h.Head()
		if err != nil {
			return err
		}
		a = head.Commit
	}
	if b == "" {
		b = "live"
	}
	from, fa, err := revFiles(h, a)
	if err != nil {
		return err
	}
	to, fb, err := revFiles(h, b)
	if err != nil {
		return err
	}
	pa, pb := memfile.Parse(fa.Memory), memfile.Parse(fb.Memory)
	changes := history.Compare(pa, pb)
	res := diffResult{From: from, To: to, Changes: changesJSON(changes)}
	if c.Bool("text") {
		text := history.TextDiff(string(fa.Memory), string(fb.Memory))
		if d := history.TextDiff(string(fa.Archive), string(fb.Archive)); d != "" {
			text += "archive/memories.md:\n" + d
		}
		res.Text = &text
	}
	if s.json {
		return s.printJSON(res)
	}
	fmt.Fprintf(s.stdout, "from %s to %s\n", shortHash(from), shortHash(to))
	if res.Text != nil {
		fmt.Fprint(s.stdout, *res.Text)
		return nil
	}
	if len(changes) == 0 {
		fmt.Fprintln(s.stdout, "no entry changed")
	}
	printChanges(s, changes, "")
	return nil
}
