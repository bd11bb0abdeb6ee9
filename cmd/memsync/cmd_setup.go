package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func setupCommand() command {
	return command{name: "setup", usage: "wire memsync into an agent: claude, codex, gemini, cursor, vscode or windsurf",
		argsUsage: "[AGENT]",
		flags: []cli.Flag{
			&cli.StringFlag{Name: "scope", Usage: "project, local or user (the default changes no tracked file)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the change as a diff; write nothing"},
			&cli.BoolFlag{Name: "remove", Usage: "take memsync's entries out"},
			&cli.BoolFlag{Name: "rules", Usage: "also the marked memsync section of the agent's rules file"},
			&cli.StringFlag{Name: "command", Usage: "the command the agent runs for memsync (default: this memsync's absolute path)"},
		},
		args:  atMost(1, "setup takes one agent, or none to list them"),
		opens: noMemory,
		run:   runSetup,
	}
}

func runSetup(s *session, c *cli.Context) error {
	if c.NArg() == 0 {
		return listAgents(s, c)
	}
	res, err := memsync.SetupAgent(c.Args().First(), memsync.SetupOptions{Dir: c.String("C"), Scope: c.String("scope"),
		Remove: c.Bool("remove"), Rules: c.Bool("rules"), DryRun: c.Bool("dry-run"), Command: c.String("command")})
	return s.print(res, err, func() {
		what := "memsync's MCP server"
		if res.Hooks {
			what += " and context hooks"
		}
		switch {
		case len(res.Changes) == 0 && c.Bool("remove"):
			s.printf("%s (%s scope): memsync is not set up there; nothing changed\n", res.Title, res.Scope)
			return
		case len(res.Changes) == 0:
			s.printf("%s (%s scope): %s already set up; nothing changed\n", res.Title, res.Scope, what)
		case c.Bool("remove"):
			s.printf("%s (%s scope): removing %s\n", res.Title, res.Scope, what)
		default:
			s.printf("%s (%s scope): %s, running %s\n", res.Title, res.Scope, what, res.Command)
		}
		for _, ch := range res.Changes {
			if res.DryRun {
				s.printf("%s", ch.Diff)
				continue
			}
			s.printf("%sd %s\n", ch.Action, ch.Path)
		}
		for _, x := range res.Excluded {
			if res.DryRun {
				s.printf("would exclude %s from git (.git/info/exclude)\n", x)
				continue
			}
			s.printf("excluded %s from git (.git/info/exclude)\n", x)
		}
		if res.DryRun && len(res.Changes) > 0 {
			s.printf("dry run: nothing was written\n")
		}
		for _, t := range res.Todo {
			s.printf("to do: %s\n", t)
		}
	})
}

// listAgents prints each agent, whether it is found and wired, and what
// 'memsync setup AGENT' would change.
func listAgents(s *session, c *cli.Context) error {
	list, err := memsync.Agents(c.String("C"))
	return s.print(list, err, func() {
		for _, a := range list {
			found := "not found"
			if a.Found != "" {
				found = "found: " + a.Found
			}
			wired := "not set up"
			if len(a.Wired) > 0 {
				wired = "set up (" + strings.Join(a.Wired, ", ") + " scope)"
			}
			s.printf("%-9s %s: %s; %s\n", a.Agent, a.Title, found, wired)
			if a.Error != "" {
				s.printf("          problem: %s\n", a.Error)
			}
			if len(a.Wired) == 0 && a.File != "" {
				s.printf("          'memsync setup %s' changes %s (%s scope; scopes: %s)\n", a.Agent, a.File, a.Scopes[0], strings.Join(a.Scopes, ", "))
			}
		}
	})
}
