package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

// untrack is the advice for a .agent/memories.md that git tracks.
const untrack = "git rm --cached .agent/memories.md && git commit -m 'Stop tracking agent memory'"

func initCommand() command {
	return command{name: "init", usage: "set up the memory home and keep its files out of git status",
		flags: []cli.Flag{
			&cli.BoolFlag{Name: "merge-driver", Usage: "set up 'memsync merge-driver' for a memories.md tracked in branches"},
			&cli.StringFlag{Name: "layout", Usage: "where the memory lives: agent (.agent/memories.md) or ralph (.ralph/agent/memories.md); saved in git config memsync.layout"},
			&cli.BoolFlag{Name: "ralph", Usage: "short for --layout ralph"},
			&cli.BoolFlag{Name: "sync", Usage: "in a clone that never synced, fetch the team's memory from the remote (memsync sync) right away"},
		},
		opens: noMemory, // the layout is chosen before the memory opens
		run: func(s *session, c *cli.Context) error {
			if err := setLayout(c); err != nil {
				return err
			}
			if c.Bool("merge-driver") && c.Bool("global") {
				return usageError{errNeedsRepo}
			}
			if err := s.use(c.Bool("global")); err != nil {
				return err
			}
			res, err := s.m.Init(c.Context, memsync.InitOptions{MergeDriver: c.Bool("merge-driver")})
			remote := ""
			if err == nil {
				remote = s.m.NeverSynced(c.Context)
			}
			if err == nil && remote != "" && c.Bool("sync") {
				if !s.json { // with --json, sync's result is the output
					s.printf("%s %s\n", choose(res.Created, "created", "using"), res.File)
				}
				return runSync(s, c)
			}
			return s.print(res, err, func() {
				defer func() {
					if remote != "" {
						s.eprintf("hint: this clone has not fetched its team's memory yet: memsync sync %s (or memsync init --sync)\n", remote)
					}
				}()
				s.printf("%s %s\n", choose(res.Created, "created", "using"), res.File)
				if len(res.Excluded) > 0 {
					s.printf("added %d pattern(s) to %s\n", len(res.Excluded), res.ExcludeFile)
				}
				if d := res.MergeDriver; d != nil {
					s.printf("merge driver: merge.memsync.driver = %s\nattribute %q in %s\n", d.Driver, d.Line, d.Attributes)
					s.printf("to share it with your team, add this line to .gitattributes (each clone runs 'memsync init --merge-driver' for the git config):\n  %s\n", d.Line)
				}
				switch {
				case res.Layout == "ralph":
					s.printf("layout: ralph (%s)\n", res.LayoutWhy)
					if res.Tracked && !res.MergeDriverSet {
						s.printf("%s is tracked by git (ralph's default); to merge it by entry: memsync init --merge-driver\n", res.RelFile)
					}
				case res.Tracked && !res.MergeDriverSet:
					s.warn(".agent/memories.md is tracked by git on this branch; memsync keeps memory history on its own ref instead")
					s.eprintf("hint: stop tracking it (the file stays on disk): %s\n", untrack)
				}
			})
		},
	}
}

// setLayout saves --layout (or --ralph) in the repository's git config
// before the memory opens, so that Open finds the chosen file.
func setLayout(c *cli.Context) error {
	layout := c.String("layout")
	if c.Bool("ralph") {
		if layout != "" && layout != "ralph" {
			return usageError{errors.New("--ralph and --layout " + layout + " disagree")}
		}
		layout = "ralph"
	}
	if layout == "" {
		return nil
	}
	if c.Bool("global") {
		return usageError{errNeedsRepo}
	}
	err := memsync.SetLayout(c.Context, c.String("C"), layout)
	if errors.As(err, new(*memsync.ConfigError)) { // a layout of another name
		return usageError{err}
	}
	return err
}
