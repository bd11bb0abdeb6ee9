package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/worktree"
)

func worktreeCommand() *cli.Command {
	return &cli.Command{
		Name:  "worktree",
		Usage: "create, link, list, repair and remove worktrees that share one memory",
		Description: "Every worktree of a repository shares the primary worktree's .agent/memories.md\n" +
			"(or, in a bare repository, the memory home inside the git dir) through a relative\n" +
			"symlink. These commands make and check those links; git status stays clean.",
		Subcommands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "run git worktree add, then link the new worktree's memory",
				ArgsUsage: "PATH [COMMIT-ISH]",
				Description: "Runs your git ('git worktree add', with its hooks and filters); its output\n" +
					"and, on failure, its exit code are memsync's. Then links PATH/.agent/memories.md.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "b", Usage: "create the new branch `BRANCH`"},
					&cli.StringFlag{Name: "B", Usage: "create or reset the branch `BRANCH`"},
					&cli.BoolFlag{Name: "detach", Usage: "check out a detached HEAD"},
					&cli.BoolFlag{Name: "force", Usage: "passed to git worktree add"},
					&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "passed to git worktree add"},
				},
				Action: runWorktreeAdd,
			},
			{
				Name:      "link",
				Usage:     "link a worktree's .agent/memories.md to the shared memory",
				ArgsUsage: "[PATH]",
				Description: "Makes PATH/.agent/memories.md (default: the current worktree) a relative symlink\n" +
					"to the memory, creating .agent/ if needed and leaving its other files alone.\n" +
					"Idempotent. A dangling or wrong link is re-pointed; an identical copy is\n" +
					"replaced; a diverged copy is first folded into the memory by entry ID (and kept\n" +
					"as memories.md.bak-<time> if it holds anything the memory lacks). Where symlinks are impossible (core.symlinks=false)\n" +
					"the memory is copied instead. A file tracked by git is left alone.",
				Action: runWorktreeLink,
			},
			{
				Name:  "list",
				Usage: "list the worktrees and the state of their memory",
				Description: "States: primary, linked, missing, broken (dangling link), wrong-target,\n" +
					"copy-identical, copy-diverged, copy (where core.symlinks=false), unsafe (resolves\n" +
					"outside the memory home), prunable.",
				Action: runWorktreeList,
			},
			{
				Name:  "doctor",
				Usage: "report worktrees whose memory is not shared, and repair them with --fix",
				Description: "Reports every worktree whose memory is missing, a broken, wrong or unsafe link,\n" +
					"a copy, tracked by git, or prunable. With --fix, repairs what it can: a diverged\n" +
					"copy is shown as a diff, merged into the memory by entry ID (nothing is lost or\n" +
					"duplicated), kept as a backup, and replaced by the link; an unsafe link is\n" +
					"replaced without touching the file it pointed to. Exits 1 while problems remain.",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "fix", Usage: "repair what can be repaired"}},
				Action: runWorktreeDoctor,
			},
			{
				Name:      "remove",
				Usage:     "fold a worktree's own memory entries into the shared memory, then git worktree remove",
				ArgsUsage: "PATH",
				Description: "Nothing a loop learned is lost with its worktree: entries only in the worktree's\n" +
					"copy of memories.md are merged into the memory first (the copy is kept in the\n" +
					"memory home as memories.md.bak-<time>-<name>). Then runs 'git worktree remove'.",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "passed to git worktree remove"}},
				Action: runWorktreeRemove,
			},
		},
	}
}

func (s *session) printLink(res memsync.WorktreeLinkResult) error {
	if s.json {
		return s.printJSON(res)
	}
	fmt.Fprintln(s.stdout, res.Message)
	return nil
}

// trackedHint turns ErrTracked into advice.
func trackedHint(err error) error {
	if errors.Is(err, worktree.ErrTracked) {
		return withHint(err, "stop tracking it in that worktree (the file stays on disk): git rm --cached .agent/memories.md && git commit -m 'Stop tracking agent memory'; then run memsync worktree link")
	}
	return err
}

// gitStreams is where git's own output goes: stdout, but stderr with --json
// (stdout is for the JSON).
func (s *session) gitStreams(c *cli.Context) memsync.Git {
	g := memsync.Git{Dir: c.String("C"), Stdout: s.stdout, Stderr: s.stderr}
	if s.json {
		g.Stdout = s.stderr
	}
	return g
}

func runWorktreeAdd(c *cli.Context) error {
	if c.NArg() < 1 || c.NArg() > 2 {
		return usageError{fmt.Errorf("worktree add needs PATH and at most one COMMIT-ISH")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	o := memsync.WorktreeAddOptions{Git: s.gitStreams(c), CommitIsh: c.Args().Get(1), Branch: c.String("b"),
		ResetBranch: c.String("B"), Detach: c.Bool("detach"), Force: c.Bool("force"), Quiet: c.Bool("quiet")}
	res, err := s.m.WorktreeAdd(c.Context, c.Args().Get(0), o)
	var ge *worktree.GitError
	if errors.As(err, &ge) {
		return cli.Exit("", ge.Code) // git said why
	}
	if errors.Is(err, worktree.ErrTracked) {
		// The worktree exists; its memory is left as the branch has it.
		s.warn(err.Error())
		fmt.Fprintln(s.stderr, "hint: stop tracking it in the new worktree: git rm --cached .agent/memories.md && git commit; then run memsync worktree link")
		res.State, res.Message = res.Was, "not linked: "+err.Error()
		err = nil
	}
	if err != nil {
		return err
	}
	return s.printLink(res)
}

func runWorktreeLink(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageError{fmt.Errorf("worktree link takes at most one PATH")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	path := c.Args().First()
	if path == "" {
		if s.repo.WorkTree == "" {
			return usageError{fmt.Errorf("not inside a worktree; name one: memsync worktree link PATH")}
		}
		path = s.repo.WorkTree
	}
	res, err := s.m.WorktreeLink(c.Context, absPath(c, path))
	if err != nil {
		return trackedHint(err)
	}
	res.Path = path
	return s.printLink(res)
}

func runWorktreeList(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("worktree list takes no arguments")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	list, err := s.m.Worktrees(c.Context)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(list)
	}
	for _, w := range list {
		branch := w.Branch
		if branch == "" {
			branch = "(detached)"
		}
		fmt.Fprintf(s.stdout, "%-14s %s  [%s]  %s\n", w.State, w.Path, branch, w.Detail)
	}
	return nil
}

func runWorktreeDoctor(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("worktree doctor takes no arguments")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	fix := c.Bool("fix")
	findings, err := s.m.WorktreeDoctor(c.Context, fix)
	if err != nil {
		return err
	}
	left := 0
	for _, f := range findings {
		if f.Fixed == nil || !*f.Fixed {
			left++
		}
		if s.json {
			continue
		}
		fmt.Fprintf(s.stdout, "%s: %s: %s\n", f.Path, f.State, f.Detail)
		switch {
		case f.Fixed == nil:
			fmt.Fprintf(s.stdout, "  fix: %s\n", f.Fix)
			continue
		case f.State == string(worktree.StateCopyDiverged):
			fmt.Fprintf(s.stdout, "  the copy differs from the memory (- only in the memory, + only in the copy):\n%s", indent(f.Diff, "    "))
		}
		if *f.Fixed {
			fmt.Fprintf(s.stdout, "  fixed: %s\n", f.Result)
		}
	}
	if s.json {
		if err := s.printJSON(findings); err != nil {
			return err
		}
	} else if len(findings) == 0 {
		fmt.Fprintln(s.stdout, "every worktree shares the memory")
	}
	if left > 0 {
		msg := fmt.Sprintf("%d worktree problem(s) left", left)
		if !fix {
			return withHint(errors.New(msg), "run 'memsync worktree doctor --fix' to repair what can be repaired")
		}
		return errors.New(msg)
	}
	return nil
}

func runWorktreeRemove(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError{fmt.Errorf("worktree remove needs one PATH")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	res, err := s.m.WorktreeRemove(c.Context, c.Args().First(), c.Bool("force"), s.gitStreams(c))
	if res.Added > 0 && !s.json {
		fmt.Fprintf(s.stdout, "folded %d entr%s from the worktree's copy into the memory (copy kept as %s)\n", res.Added, plural(res.Added, "y", "ies"), res.Backup)
	}
	var ge *worktree.GitError
	if errors.As(err, &ge) {
		return cli.Exit("", ge.Code)
	}
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(res)
	}
	fmt.Fprintf(s.stdout, "removed %s\n", res.Path)
	return nil
}

// absPath makes a path from the command line absolute against -C.
func absPath(c *cli.Context, p string) string {
	return worktree.AbsIn(c.String("C"), p)
}

func indent(s, prefix string) string {
	var b strings.Builder
	for l := range strings.Lines(s) {
		b.WriteString(prefix + l)
	}
	return b.String()
}
