package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/hooks"
)

func hooksCommand() *cli.Command {
	return &cli.Command{
		Name:  "hooks",
		Usage: "install, uninstall or inspect memsync's git hooks",
		Description: "The hooks snapshot the memory onto refs/memsync/snapshots after every commit,\n" +
			"merge and rewrite (post-commit, post-merge, post-rewrite), and link the memory\n" +
			"of a worktree made by 'git worktree add' (post-checkout). They go where git\n" +
			"runs hooks (core.hooksPath, else the common git dir's hooks/); a hook that was\n" +
			"there is kept as NAME.memsync-orig and still runs first, under its own name (a\n" +
			"shell script is read by its shell with $0 unchanged, so husky v9, lefthook and\n" +
			"pre-commit keep working). When core.hooksPath is inside the worktree and git\n" +
			"status would show the scripts (a tracked .githooks/), install refuses: add\n" +
			"'memsync hook NAME \"$@\"' to those hooks yourself, or pass --force.",
		Subcommands: []*cli.Command{
			{Name: "install", Usage: "install the hooks (again: no change)", Action: runHooksInstall,
				Flags: []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "install also into a hooks folder in the worktree that git status shows"}}},
			{Name: "uninstall", Usage: "remove the hooks and put back what was there", Action: runHooksUninstall},
			{Name: "status", Usage: "what is installed where, and hook managers in use", Action: runHooksStatus},
		},
	}
}

// hookCommand is what the installed scripts run.
func hookCommand() *cli.Command {
	return &cli.Command{
		Name:      "hook",
		Usage:     "run a git hook's handler (the installed hook scripts call this)",
		ArgsUsage: "NAME [ARGS...]",
		Description: "Always exits 0 within a few seconds: a damaged memory file, a busy lock or any\n" +
			"other trouble is one warning line, and the git command stands. The lock wait\n" +
			"is at most 3s (less with --lock-timeout / MEMSYNC_LOCK_TIMEOUT), the whole run\n" +
			"at most 10s.",
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) > 0 && args[0] == "--" { // the line as reorderArgs hands it on
				args = args[1:]
			}
			if len(args) == 0 {
				return nil
			}
			memsync.RunHook(c.Context, c.String("C"), args[0], args[1:], memsync.HookOptions{
				Stderr:      c.App.ErrWriter,
				LockTimeout: min(c.Duration("lock-timeout"), hooks.DefaultLockTimeout),
			})
			return nil
		},
	}
}

type hooksResult struct {
	Dir   string       `json:"dir"`
	Hooks []hooks.Hook `json:"hooks"`
}

func runHooksInstall(c *cli.Context) error {
	s, err := openRepoSession(c)
	if err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return withHint(err, "install memsync on PATH and run 'memsync hooks install' again")
	}
	// The worktrees post-checkout links must stay out of git status.
	if err := s.beforeWrite(); err != nil {
		return err
	}
	dir, hs, err := hooks.Install(s.repo, bin)
	if errors.Is(err, hooks.ErrInWorktree) {
		if !c.Bool("force") {
			return withHint(err, "nothing was changed; have your tracked hooks run memsync: add the line  memsync hook NAME \"$@\"  to "+
				dir+"/NAME for NAME in "+strings.Join(hooks.Names(), ", ")+" (and commit them); or install memsync's scripts there anyway: memsync hooks install --force")
		}
		s.warn(err.Error() + "; installing anyway (--force): git status will show these changes, and the scripts name this machine's memsync")
		dir, hs, err = hooks.InstallForce(s.repo, bin)
	}
	if err != nil {
		return err
	}
	if err := s.printHooks(dir, hs); err != nil {
		return err
	}
	if st, err := hooks.Report(s.repo); err == nil && !s.json {
		for _, m := range st.Managers {
			s.warn(fmt.Sprintf("%s manages hooks here and may replace these scripts; to run memsync from %s, add:\n%s", m.Name, m.Config, m.Add))
		}
	}
	return nil
}

func runHooksUninstall(c *cli.Context) error {
	s, err := openRepoSession(c)
	if err != nil {
		return err
	}
	dir, hs, err := hooks.Uninstall(s.repo)
	if err != nil {
		return err
	}
	return s.printHooks(dir, hs)
}

func runHooksStatus(c *cli.Context) error {
	s, err := openRepoSession(c)
	if err != nil {
		return err
	}
	st, err := hooks.Report(s.repo)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(st)
	}
	fmt.Fprintf(s.stdout, "hooks folder: %s\n", st.Dir)
	for _, h := range st.Hooks {
		note := ""
		switch h.State {
		case hooks.StateChained:
			note = " (runs " + h.Name + hooks.OrigSuffix + " first)"
		case hooks.StateForeign:
			note = " (not memsync's; install keeps it and runs it first)"
		}
		fmt.Fprintf(s.stdout, "  %-14s %s%s\n", h.Name, h.State, note)
	}
	for _, m := range st.Managers {
		fmt.Fprintf(s.stdout, "%s manages hooks here (%s); add:\n%s\n", m.Name, m.Config, m.Add)
	}
	return nil
}

func (s *session) printHooks(dir string, hs []hooks.Hook) error {
	if hs == nil {
		hs = []hooks.Hook{}
	}
	if s.json {
		return s.printJSON(hooksResult{Dir: dir, Hooks: hs})
	}
	if len(hs) == 0 {
		fmt.Fprintf(s.stdout, "no memsync hooks in %s\n", dir)
	}
	for _, h := range hs {
		fmt.Fprintf(s.stdout, "%-9s %s\n", h.Action, h.Path)
	}
	return nil
}

// errNeedsRepo: history and hooks belong to a git repository, not the global layer.
var errNeedsRepo = errors.New("this command works on a git repository's memory, not the global layer")

// openRepoSession is openSession for commands that need a repository.
func openRepoSession(c *cli.Context) (*session, error) {
	if c.Bool("global") {
		return nil, usageError{errNeedsRepo}
	}
	return openSession(c)
}
