package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/config"
	"github.com/memsync/memsync/inject"
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

// injectJSON is inject's --json shape (README documents it).
type injectJSON struct {
	Mode     string          `json:"mode"`
	Enabled  bool            `json:"enabled"`
	Prompt   string          `json:"prompt"`
	Output   string          `json:"output"`
	Memories string          `json:"memories"`
	Path     string          `json:"path,omitempty"`
	Entries  []memsync.Entry `json:"entries"`
	Omitted  int             `json:"omitted"`
	Filtered int             `json:"filtered"`
	Budget   int             `json:"budget"`
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
	cfg := s.cfg
	if err := injectFlags(c, &cfg); err != nil {
		return err
	}
	out := injectJSON{Mode: string(cfg.Mode()), Enabled: cfg.Enabled, Prompt: prompt, Output: prompt, Entries: []memsync.Entry{}, Budget: cfg.Budget}
	if cfg.Mode() != config.None {
		f, err := s.load()
		if err != nil {
			return err
		}
		query := c.String("query")
		if !c.IsSet("query") {
			query = prompt
		}
		res := inject.Select(f, inject.Options{Budget: cfg.Budget * config.BytesPerToken, Query: query, Filter: cfg.Filter, Keep: s.inScope})
		if res.Block == "" && res.Omitted > 0 {
			s.warn(fmt.Sprintf("a budget of %d tokens leaves no room for any memory; %s", cfg.Budget, inject.Note(res.Omitted, res.Filtered)))
		}
		out.Path, out.Memories, out.Omitted, out.Filtered = s.store.Path(), res.Block, res.Omitted, res.Filtered
		for _, i := range res.Chosen {
			out.Entries = append(out.Entries, memsync.EntryOf(&f.Entries[i], i+1))
		}
		s.m.Touch(idsOf(f, res.Chosen)...) // injected memories are in use (gc's TTL)
		if cfg.Mode() == config.Auto {
			out.Output = res.Prompt(prompt)
		}
	}
	if s.json {
		return s.printJSON(out)
	}
	if cfg.Mode() == config.Manual {
		fmt.Fprint(s.stderr, out.Memories)
	}
	_, err = io.WriteString(s.stdout, out.Output)
	return err
}

// injectFlags lets the command line override the configuration.
func injectFlags(c *cli.Context, cfg *config.Config) error {
	if c.IsSet("mode") {
		m, err := config.ParseMode(c.String("mode"))
		if err != nil {
			return usageError{fmt.Errorf("--mode: %w", err)}
		}
		cfg.Inject = m
	}
	if c.IsSet("budget") {
		if c.Int("budget") < 0 {
			return usageError{fmt.Errorf("--budget must be 0 or more tokens")}
		}
		cfg.Budget = c.Int("budget")
	}
	if c.IsSet("type") {
		cfg.Filter.Types = config.Split(c.String("type"))
	}
	if c.IsSet("tags") {
		cfg.Filter.Tags = config.Split(c.String("tags"))
	}
	if c.IsSet("recent-days") {
		cfg.Filter.RecentDays = c.Int("recent-days")
	}
	return nil
}
