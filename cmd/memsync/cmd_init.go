package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/worktree"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "set up the memory home and keep its files out of git status",
		Description: "Creates .agent/memories.md in the primary worktree (or the memory home of a\n" +
			"bare repository) and adds the memory files to the repository's common\n" +
			"info/exclude, so git status stays clean in every worktree. If\n" +
			".agent/memories.md is already tracked by git, init says so and prints the fix.\n" +
			"With --merge-driver (for teams that do track .agent/memories.md in branches):\n" +
			"sets merge.memsync.driver in the repository's git config and the line\n" +
			"'.agent/memories.md merge=memsync' in <git common dir>/info/attributes (not in a\n" +
			"tracked .gitattributes, so git status stays clean; add the line there yourself\n" +
			"to share it), so git merges the file by entry instead of by line.\n" +
			"In a repository ralph-orchestrator uses (.ralph/agent/memories.md exists, or\n" +
			".ralph/ does and .agent/memories.md does not) the memory is ralph's file, found\n" +
			"without configuration. --layout ralph|agent (or --ralph) chooses, in the git\n" +
			"config memsync.layout, and the paths above are then under .ralph/agent/.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "merge-driver", Usage: "set up 'memsync merge-driver' for a memories.md tracked in branches"},
			&cli.StringFlag{Name: "layout", Usage: "where the memory lives: agent (.agent/memories.md) or ralph (.ralph/agent/memories.md); saved in git config memsync.layout"},
			&cli.BoolFlag{Name: "ralph", Usage: "short for --layout ralph"},
		},
		Action: runInit,
	}
}

func runInit(c *cli.Context) error {
	layout := c.String("layout")
	if c.Bool("ralph") {
		if layout != "" && layout != string(worktree.LayoutRalph) {
			return usageError{errors.New("--ralph and --layout " + layout + " disagree")}
		}
		layout = string(worktree.LayoutRalph)
	}
	if layout != "" {
		if c.Bool("global") {
			return usageError{errNeedsRepo}
		}
		if _, err := worktree.ParseLayout(layout); err != nil {
			return usageError{err}
		}
		if err := memsync.SetLayout(c.Context, "", worktree.Layout(layout)); err != nil {
			return err
		}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	if c.Bool("merge-driver") && s.global {
		return usageError{errNeedsRepo}
	}
	res, err := s.m.Init(c.Context, memsync.InitOptions{MergeDriver: c.Bool("merge-driver")})
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(res)
	}
	verb := "using"
	if res.Created {
		verb = "created"
	}
	fmt.Fprintf(s.stdout, "%s %s\n", verb, res.File)
	if len(res.Excluded) > 0 {
		fmt.Fprintf(s.stdout, "added %d pattern(s) to %s/info/exclude\n", len(res.Excluded), s.repo.CommonDir)
	}
	if d := res.MergeDriver; d != nil {
		fmt.Fprintf(s.stdout, "merge driver: merge.memsync.driver = %s\n", d.Driver)
		fmt.Fprintf(s.stdout, "attribute %q in %s\n", d.Line, d.Attributes)
		fmt.Fprintf(s.stdout, "to share it with your team, add this line to .gitattributes (each clone runs 'memsync init --merge-driver' for the git config):\n  %s\n", d.Line)
	}
	if s.repo != nil && s.repo.Layout == worktree.LayoutRalph {
		fmt.Fprintf(s.stdout, "layout: ralph (%s)\n", s.repo.LayoutWhy)
		if res.Tracked && !res.MergeDriverSet {
			fmt.Fprintf(s.stdout, "%s is tracked by git (ralph's default); to merge it by entry: memsync init --merge-driver\n", s.repo.RelFile())
		}
		return nil
	}
	if res.Tracked && !res.MergeDriverSet {
		s.warn(".agent/memories.md is tracked by git on this branch; memsync keeps memory history on its own ref instead")
		fmt.Fprintf(s.stderr, "hint: stop tracking it (the file stays on disk): git rm --cached .agent/memories.md && git commit -m 'Stop tracking agent memory'\n")
	}
	return nil
}

// beforeWrite makes sure a write leaves git status clean (memsync.Memory.BeforeWrite).
func (s *session) beforeWrite() error { return s.m.BeforeWrite() }
