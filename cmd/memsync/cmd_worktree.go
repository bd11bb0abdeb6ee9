package main

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func worktreeCommand() command {
	return command{name: "worktree", usage: "create, link, list, repair and remove worktrees that share one memory", subs: []command{
		{name: "add", usage: "run git worktree add, then link the new worktree's memory", argsUsage: "PATH [COMMIT-ISH]",
			flags: []cli.Flag{
				&cli.StringFlag{Name: "b", Usage: "create the new branch `BRANCH`"},
				&cli.StringFlag{Name: "B", Usage: "create or reset the branch `BRANCH`"},
				&cli.BoolFlag{Name: "detach", Usage: "check out a detached HEAD"},
				&cli.BoolFlag{Name: "force", Usage: "passed to git worktree add"},
				&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "passed to git worktree add"},
			},
			args: nargs(1, 2, "worktree add needs PATH and at most one COMMIT-ISH"), run: runWorktreeAdd},
		{name: "link", usage: "link a worktree's .agent/memories.md to the shared memory", argsUsage: "[PATH]",
			args: atMost(1, "worktree link takes at most one PATH"), run: runWorktreeLink},
		{name: "list", usage: "list the worktrees and the state of their memory",
			args: noArgs("worktree list"), run: runWorktreeList},
		{name: "doctor", usage: "report worktrees whose memory is not shared, and repair them with --fix",
			flags: []cli.Flag{&cli.BoolFlag{Name: "fix", Usage: "repair what can be repaired"}},
			args:  noArgs("worktree doctor"), run: runWorktreeDoctor},
		{name: "remove", usage: "fold a worktree's own memory entries into the shared memory, then git worktree remove", argsUsage: "PATH",
			flags: []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "passed to git worktree remove"}},
			args:  oneArg("worktree remove needs one PATH"), run: runWorktreeRemove},
	}}
}

// gitStreams is where git's own output goes: stdout, but stderr with --json
// (stdout is for the JSON); the files themselves (forChild), so that git
// sees the terminal.
func (s *session) gitStreams(c *cli.Context) memsync.Git {
	g := memsync.Git{Dir: c.String("C"), Stdout: forChild(s.stdout), Stderr: forChild(s.stderr)}
	if s.json {
		g.Stdout = g.Stderr
	}
	return g
}

func runWorktreeAdd(s *session, c *cli.Context) error {
	o := memsync.WorktreeAddOptions{Git: s.gitStreams(c), CommitIsh: c.Args().Get(1), Branch: c.String("b"),
		ResetBranch: c.String("B"), Detach: c.Bool("detach"), Force: c.Bool("force"), Quiet: c.Bool("quiet")}
	res, err := s.m.WorktreeAdd(c.Context, c.Args().Get(0), o)
	if we := new(memsync.WorktreeExistsError); errors.As(err, &we) {
		s.eprintf("hint: %s is a worktree already (an interrupted 'memsync worktree add' leaves it unlinked): memsync worktree link %s\n", we.Path, we.Path)
	}
	return s.print(res, err, func() { s.printf("%s\n", res.Message) })
}

func runWorktreeLink(s *session, c *cli.Context) error {
	path := cmp.Or(c.Args().First(), s.m.WorkTree())
	if path == "" {
		return usageError{fmt.Errorf("not inside a worktree; name one: memsync worktree link PATH")}
	}
	abs := path
	if !filepath.IsAbs(abs) { // relative to -C
		var err error
		if abs, err = filepath.Abs(filepath.Join(c.String("C"), path)); err != nil {
			return err
		}
	}
	res, err := s.m.WorktreeLink(c.Context, abs)
	res.Path = path
	return s.print(res, err, func() { s.printf("%s\n", res.Message) })
}

func runWorktreeList(s *session, c *cli.Context) error {
	list, err := s.m.Worktrees(c.Context)
	return s.print(list, err, func() {
		for _, w := range list {
			s.printf("%-14s %s  [%s]  %s\n", w.State, w.Path, cmp.Or(w.Branch, "(detached)"), w.Detail)
		}
	})
}

func runWorktreeDoctor(s *session, c *cli.Context) error {
	fix := c.Bool("fix")
	findings, err := s.m.WorktreeDoctor(c.Context, memsync.DoctorOptions{Fix: fix})
	left, fixable := 0, false
	for _, f := range findings {
		if f.Fixed == nil || !*f.Fixed {
			left++
		}
		fixable = fixable || f.Fixable != nil && *f.Fixable
	}
	if err := s.print(findings, err, func() {
		for _, f := range findings {
			s.printf("%s: %s: %s\n", f.Path, f.State, f.Detail)
			switch {
			case f.Fixed == nil:
				s.printf("  fix: %s\n", f.Fix)
				continue
			case f.State == "copy-diverged":
				s.printf("  the copy differs from the memory (- only in the memory, + only in the copy):\n")
				for l := range strings.Lines(f.Diff) {
					s.printf("    %s", l)
				}
			}
			if *f.Fixed {
				s.printf("  fixed: %s\n", f.Result)
			}
		}
		if len(findings) == 0 {
			s.printf("every worktree shares the memory\n")
		}
	}); err != nil {
		return err
	}
	return problemsLeft("memsync worktree doctor", fmt.Sprintf("%d worktree problem(s) left", left), left > 0, !fix && fixable)
}

func runWorktreeRemove(s *session, c *cli.Context) error {
	res, err := s.m.WorktreeRemove(c.Context, c.Args().First(), memsync.WorktreeRemoveOptions{Git: s.gitStreams(c), Force: c.Bool("force")})
	if res.Added > 0 && !s.json {
		s.printf("folded %d entr%s from the worktree's copy into the memory (copy kept as %s)\n", res.Added, memsync.Plural(res.Added, "y", "ies"), res.Backup)
	}
	return s.print(res, err, func() { s.printf("removed %s\n", res.Path) })
}
