package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

// contextCommand is the agents' context hook. It fails open: whatever
// happens it exits 0 (exit 2 would block the user's prompt in Claude Code)
// and one line on stderr says why nothing was added.
func contextCommand() command {
	return command{name: "context", usage: "add memories to an agent's context from its hooks (session start, each prompt)",
		flags: []cli.Flag{
			&cli.StringFlag{Name: "agent", Usage: "the agent whose hook runs this: claude or gemini"},
			&cli.DurationFlag{Name: "timeout", Value: memsync.DefaultContextTimeout, Usage: "give up, adding nothing, after this long"},
		},
		opens: noMemory,
		run: func(s *session, c *cli.Context) error {
			out, err := []byte(nil), errors.New("context takes no arguments, only --agent claude|gemini and the hook's JSON on stdin")
			if c.NArg() == 0 {
				out, err = memsync.AgentContext(c.Context, c.String("agent"), c.App.Reader, memsync.ContextOptions{Dir: c.String("C"), Timeout: c.Duration("timeout")})
			}
			if err != nil {
				s.eprintf("memsync: context: nothing added: %s\n", memsync.Printable(err.Error()))
			}
			_, _ = s.stdout.Write(out)
			return nil
		},
	}
}
