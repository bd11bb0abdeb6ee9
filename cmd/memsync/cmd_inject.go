package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

// maxPrompt bounds the prompt inject reads from standard input.
const maxPrompt = 16 << 20

func injectCommand() command {
	var prompt string // PROMPT, read from stdin for '-' before the memory opens
	return command{name: "inject", usage: "put memories into an agent's prompt", argsUsage: "[PROMPT|-]",
		flags: []cli.Flag{
			&cli.StringFlag{Name: "mode", Usage: "auto, manual or none"},
			&cli.IntFlag{Name: "budget", Usage: "most `TOKENS` of memory to add (0 = no limit)", DefaultText: "4000, or the configuration's"},
			&cli.StringFlag{Name: "query", Usage: "rank memories for this `TEXT` (default: the prompt)"},
			&cli.StringFlag{Name: "type", Aliases: []string{"t"}, Usage: "only these comma-separated types"},
			&cli.StringFlag{Name: "tags", Usage: "only entries with all these comma-separated `TAGS`"},
			&cli.StringFlag{Name: "any-tags", Usage: "only entries with at least one of these comma-separated `TAGS` (default: the configuration's tags)"},
			&cli.IntFlag{Name: "recent-days", Usage: "only entries dated within `N` days", DefaultText: "all"},
			&cli.StringFlag{Name: "layer", Usage: "project, global or all: all ranks the global layer's entries with the project's, marked (global)", DefaultText: "all"},
		},
		args: func(c *cli.Context) error {
			if err := atMost(1, "inject takes one PROMPT argument (or '-' for stdin), got %d; quote the prompt")(c); err != nil {
				return err
			}
			if l := c.String("layer"); l != "" && l != "project" && l != "global" && l != "all" {
				return usageError{fmt.Errorf("--layer is project, global or all, not %q", l)}
			}
			if prompt = c.Args().First(); prompt == "-" {
				b, err := io.ReadAll(io.LimitReader(c.App.Reader, maxPrompt+1))
				if len(b) > maxPrompt {
					return usageError{fmt.Errorf("the prompt on standard input is over %d MiB", maxPrompt>>20)}
				}
				prompt = string(b)
				return err
			} else if prompt != "" && !strings.HasSuffix(prompt, "\n") {
				prompt += "\n"
			}
			return nil
		},
		run: func(s *session, c *cli.Context) error {
			o, err := injectFlags(c)
			if err != nil {
				return err
			}
			switch c.String("layer") {
			case "global": // as --global
				if err := s.use(true); err != nil {
					return err
				}
			case "project":
				o.NoGlobal = true
			}
			out, err := s.m.Inject(c.Context, prompt, o)
			if errors.As(err, new(*memsync.ConfigError)) { // --mode
				return usageError{err}
			}
			if err == nil && out.Enabled && len(out.Entries) == 0 && out.Omitted+out.Filtered == 0 {
				s.hintSync(c)
			}
			if err != nil || s.json {
				return s.print(out, err, nil)
			}
			if out.Mode == "manual" {
				fmt.Fprint(s.stderr, out.Memories)
			}
			_, err = io.WriteString(s.stdout, out.Output)
			return err
		},
	}
}

// injectFlags are what the command line overrides of the configuration.
func injectFlags(c *cli.Context) (o memsync.InjectOptions, err error) {
	if c.IsSet("mode") {
		o.Mode = c.String("mode") // Inject checks it
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
		o.Types = append([]string{}, memsync.SplitList(c.String("type"))...) // "" clears the configuration's
	}
	if c.IsSet("any-tags") {
		o.Tags = append([]string{}, memsync.SplitList(c.String("any-tags"))...) // "" clears the configuration's
	}
	o.AllTags = memsync.SplitList(c.String("tags"))
	if c.IsSet("recent-days") {
		o.RecentDays = new(c.Int("recent-days"))
	}
	return o, nil
}
