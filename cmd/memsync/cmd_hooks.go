package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func hooksCommand() command {
	return command{name: "hooks", usage: "install, uninstall or inspect memsync's git hooks", subs: []command{
		{name: "install", usage: "install the hooks (again: no change)", opens: repoOnly, run: runHooksInstall, ownHookCheck: true,
			flags: []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "install also into a hooks folder in the worktree that git status shows"}}},
		{name: "uninstall", usage: "remove the hooks and put back what was there", opens: repoOnly, run: runHooksUninstall, ownHookCheck: true},
		{name: "status", usage: "what is installed where, and hook managers in use", opens: repoOnly, run: runHooksStatus, ownHookCheck: true},
	}}
}

// hookCommand is what the installed scripts run.
func hookCommand() command {
	return command{name: "hook", usage: "run a git hook's handler (the installed hook scripts call this)", argsUsage: "NAME [ARGS...]",
		raw: true, hidden: true, opens: noMemory,
		run: func(_ *session, c *cli.Context) error {
			args := c.Args().Slice()
			background := len(args) > 0 && args[0] == memsync.HookBackgroundArg
			if background {
				args = args[1:]
			}
			if len(args) > 0 && args[0] == "--" { // the line as reorderArgs hands it on
				args = args[1:]
			}
			if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") { // no hook has that name
				return cli.ShowCommandHelp(c.Lineage()[1], "hook")
			}
			if background {
				// The script's child, which git does not wait for: in a
				// session of its own, so that closing the terminal the
				// commit ran in does not end it.
				leaveSession()
			}
			if len(args) > 0 {
				memsync.RunHook(c.Context, c.String("C"), args[0], args[1:], memsync.HookOptions{
					Stderr:      c.App.ErrWriter,
					LockTimeout: lockTimeoutFlag(c), // 0: MEMSYNC_LOCK_TIMEOUT, else the hook's own
					Background:  background,
				})
			}
			return nil
		},
	}
}

func runHooksInstall(s *session, c *cli.Context) error {
	bin, err := os.Executable()
	if err != nil {
		return withHint(err, "install memsync on PATH and run 'memsync hooks install' again")
	}
	res, err := s.m.InstallHooks(c.Context, memsync.InstallHooksOptions{Executable: bin, Force: c.Bool("force")})
	if err := s.printHooks(res, err); err != nil {
		return err
	}
	if st, err := s.m.Hooks(c.Context); err == nil && !s.json {
		for _, m := range st.Managers {
			if m.Name != "husky" {
				continue
			}
			for _, h := range st.Hooks {
				if h.Manager == "" && h.State != "missing" {
					s.warn(fmt.Sprintf("%s/%s is tracked, so memsync's %s hook is a script in %s, which husky rewrites whenever it runs (npm install); "+
						"to keep it, 'memsync hooks install --force' adds memsync's lines to %s/%s (git status shows the change; committed, it runs memsync for everyone who has it)",
						m.Config, h.Name, h.Name, st.Dir, m.Config, h.Name))
				}
			}
		}
	}
	return nil
}

func runHooksUninstall(s *session, c *cli.Context) error {
	return s.printHooks(s.m.UninstallHooks(c.Context))
}

func runHooksStatus(s *session, c *cli.Context) error {
	st, err := s.m.Hooks(c.Context)
	return s.print(st, err, func() {
		s.printf("hooks folder: %s\n", st.Dir)
		for _, h := range st.Hooks {
			note := map[string]string{"chained": " (runs " + h.Chained + " first)",
				"foreign": " (not memsync's; install keeps it)"}[h.State]
			if h.Manager != "" {
				note += " through " + h.Manager + ": " + h.Path
			}
			if !h.Runs && h.State != "foreign" && h.State != "missing" {
				note += "; NOT RUN by git here: memsync hooks install"
			}
			if h.Outdated {
				note += "; written by an older memsync: memsync hooks install updates it"
			}
			s.printf("  %-15s %s%s\n", h.Name, h.State, note)
		}
		for _, m := range st.Managers {
			s.printf("%s manages hooks here (%s)\n", m.Name, m.Config)
		}
	})
}

// printHooks prints what install or uninstall did, unless it failed.
func (s *session) printHooks(res memsync.HooksResult, err error) error {
	return s.print(res, err, func() {
		if len(res.Hooks) == 0 {
			s.printf("no memsync hooks in %s\n", res.Dir)
		}
		for _, h := range res.Hooks {
			s.printf("%-9s %s\n", h.Action, h.Path)
		}
	})
}
