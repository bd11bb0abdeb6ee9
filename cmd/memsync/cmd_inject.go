package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/config"
)

func injectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inject",
		Usage:     "put memories into an agent's prompt",
		ArgsUsage: "[PROMPT|-]",
		Description: "Prints the prompt for an agent with the memories the loop engine should give\n" +
			"it (orch's memories.inject, seed 004 §8):\n\n" +
			"   auto    '# Memories', the chosen entries, '---', '# Task', then the prompt\n" +
			"   manual  the prompt untouched on stdout, the memories on stderr (--json: both)\n" +
			"   none    the prompt untouched; no memory is read (also when enabled: false,\n" +
			"           whatever --mode says; MEMSYNC_ENABLED=true overrides the file)\n\n" +
			"Under --budget (tokens, about 4 bytes each; 0 = no limit) entries are chosen\n" +
			"by relevance to --query (default: the prompt) blended with recency; fixes and\n" +
			"solutions get a bonus, so they are not the first to go. Entries are never cut,\n" +
			"and a last line says how many were left out. Settings come from orch.yml's\n" +
			"'memories:' block in the worktree root, then .agent/memsync.yml, then\n" +
			"MEMSYNC_ENABLED / MEMSYNC_INJECT / MEMSYNC_BUDGET, then these flags.\n" +
			"PROMPT '-' reads the prompt from standard input.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "mode", Usage: "auto, manual or none"},
			&cli.IntFlag{Name: "budget", Usage: "most `TOKENS` of memory to add (0 = no limit)", DefaultText: fmt.Sprintf("%d, or the configuration's", config.DefaultBudget)},
			&cli.StringFlag{Name: "query", Usage: "rank memories for this `TEXT` (default: the prompt)"},
			&cli.StringFlag{Name: "type", Aliases: []string{"t"}, Usage: "only these comma-separated types"},
			&cli.StringFlag{Name: "tags", Usage: "only entries with one of these comma-separated tags"},
			&cli.IntFlag{Name: "recent-days", Usage: "only entries dated within `N` days", DefaultText: "all"},
		},
		Action: runInject,
	}
}

func runInject(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageError{fmt.Errorf("inject takes one PROMPT argument (or '-' for stdin), got %d; quote the prompt", c.NArg())}
	}
	prompt := c.Args().First()
	if prompt == "-" {
		b, err := io.ReadAll(c.App.Reader)
		if err != nil {
			return err
		}
		prompt = string(b)
	} else if prompt != "" && !strings.HasSuffix(prompt, "\n") {
		prompt += "\n"
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	o, err := injectFlags(c)
	if err != nil {
		return err
	}
	out, err := s.m.Inject(c.Context, prompt, o)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(out)
	}
	if out.Mode == string(config.Manual) {
		fmt.Fprint(s.stderr, out.Memories)
	}
	_, err = io.WriteString(s.stdout, out.Output)
	return err
}

// injectFlags are what the command line overrides of the configuration.
func injectFlags(c *cli.Context) (memsync.InjectOptions, error) {
	var o memsync.InjectOptions
	if c.IsSet("mode") {
		m, err := config.ParseMode(c.String("mode"))
		if err != nil {
			return o, usageError{fmt.Errorf("--mode: %w", err)}
		}
		o.Mode = m
	}
	if c.IsSet("budget") {
		if c.Int("budget") < 0 {
			return o, usageError{fmt.Errorf("--budget must be 0 or more tokens")}
		}
		o.Budget = new(c.Int("budget"))
	}
	if c.IsSet("query") {
		o.Query = new(c.String("query"))
	}
	if c.IsSet("type") {
		o.Types = append([]string{}, config.Split(c.String("type"))...) // "" clears the configuration's
	}
	if c.IsSet("tags") {
		o.Tags = append([]string{}, config.Split(c.String("tags"))...)
	}
	if c.IsSet("recent-days") {
		o.RecentDays = new(c.Int("recent-days"))
	}
	return o, nil
}
