package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/mcpserver"
)

func mcpCommand() command {
	return command{name: "mcp", usage: "serve the memory tools over MCP on stdio",
		args: noArgs("mcp"), opens: noMemory, serves: true,
		run: func(s *session, c *cli.Context) error {
			global, err := s.open(true)
			if err != nil {
				return err
			}
			// The project memory is opened again on every call: which file it
			// is can change while the server runs (ralph's, a layout set).
			opts := mcpserver.Options{Global: func() (*memsync.Memory, error) { return global, nil }, Version: buildInfo().Version,
				OpenProject: func() (*memsync.Memory, error) { return s.open(false) },
				NoProject:   "no repository memory: 'memsync mcp' runs outside a git repository (start it inside one, or with -C DIR)"}
			project, err := s.open(false)
			switch {
			case errors.Is(err, memsync.ErrNoRepository):
			case err != nil:
				return err
			default:
				opts.Project = project
			}
			// A bad input line gets a JSON-RPC error answer; the session goes on.
			return mcpserver.New(opts).Run(c.Context, &mcpserver.LineTransport{Reader: c.App.Reader, Writer: c.App.Writer, Log: c.App.ErrWriter})
		},
	}
}
