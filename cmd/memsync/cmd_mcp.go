package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync/mcpserver"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/memory"
	"github.com/memsync/memsync/worktree"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve the memory tools over MCP on stdio",
		Description: "Runs an MCP server on standard input and output for agents that speak the\n" +
			"Model Context Protocol. Tools: save_to_memory, retrieve_from_memory,\n" +
			"get_memory_entry, list_memory_entries, delete_memory_entry, get_memory_summary,\n" +
			"search_memory_archive, list_memory_archive, get_memory_archive_summary, and the\n" +
			"same with _global_ for the global layer. Every call reads the current file, so\n" +
			"servers in several worktrees see each other's writes at once. A server with\n" +
			"--role worker (or MEMSYNC_ROLE=worker) refuses deletes.\n\n" +
			"Client configuration (e.g. .mcp.json):\n\n" +
			"   {\"mcpServers\": {\"memsync\": {\"command\": \"memsync\", \"args\": [\"mcp\"]}}}",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "role", EnvVars: []string{"MEMSYNC_ROLE"}, Usage: "owner, admin or worker (workers cannot delete)"},
		},
		Action: runMCP,
	}
}

func runMCP(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("mcp takes no arguments")}
	}
	role, err := memory.ParseRole(c.String("role"))
	if err != nil {
		return usageError{err}
	}
	opts := mcpserver.Options{Role: role, Version: "dev"}
	s, err := openSession(c)
	switch {
	case errors.Is(err, worktree.ErrNotRepo):
		opts.NoProject = "no repository memory: 'memsync mcp' was started outside a git repository (start it inside one, or with -C DIR)"
	case err != nil:
		return err
	default:
		opts.Project = s.store
		opts.ProjectBeforeWrite = s.beforeWrite
	}
	warn := func(msg string) { fmt.Fprintf(c.App.ErrWriter, "memsync: warning: %s\n", msg) }
	opts.Global = func() (*memfile.Store, error) {
		home, err := memory.OpenGlobalDir()
		if err != nil {
			return nil, err
		}
		return &memfile.Store{Home: home, LockTimeout: c.Duration("lock-timeout"), MaxBytes: c.Int64("max-bytes"), Warn: warn}, nil
	}
	server := mcpserver.New(opts)
	return server.Run(c.Context, &mcp.IOTransport{Reader: io.NopCloser(c.App.Reader), Writer: nopWriteCloser{c.App.Writer}})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
