package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/mcpserver"
	"github.com/memsync/memsync/worktree"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve the memory tools over MCP on stdio",
		Description: "Runs an MCP server on standard input and output for agents that speak the\n" +
			"Model Context Protocol. Tools (seed 001): save_to_memory, retrieve_from_memory,\n" +
			"get_memory_entry, list_memory_entries, delete_memory_entry, get_memory_summary,\n" +
			"search_memory_archive, list_memory_archive, restore_from_memory_archive,\n" +
			"get_memory_archive_summary, and the same with global_memory for the global\n" +
			"layer. Every call reads the current file, so servers in several worktrees see\n" +
			"each other's writes at once. With --role worker (MEMSYNC_ROLE=worker) deletes and\n" +
			"restores are refused; --session (MEMSYNC_SESSION) scopes saves and reads as in\n" +
			"the other commands.\n\n" +
			"Client configuration (e.g. .mcp.json):\n\n" +
			"   {\"mcpServers\": {\"memsync\": {\"command\": \"memsync\", \"args\": [\"mcp\"]}}}",
		Action: runMCP,
	}
}

func runMCP(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("mcp takes no arguments")}
	}
	global, err := openLayer(c, true)
	if err != nil {
		return err
	}
	opts := mcpserver.Options{
		Global:  func() (*memsync.Memory, error) { return global.m, nil },
		Version: "dev",
	}
	project, err := openLayer(c, false)
	switch {
	case errors.Is(err, worktree.ErrNotRepo):
		opts.NoProject = "no repository memory: 'memsync mcp' was started outside a git repository (start it inside one, or with -C DIR)"
	case err != nil:
		return err
	default:
		opts.Project = project.m
	}
	server := mcpserver.New(opts)
	// A bad input line gets a JSON-RPC error answer; the session goes on.
	return server.Run(c.Context, &mcpserver.LineTransport{Reader: c.App.Reader, Writer: c.App.Writer, Log: c.App.ErrWriter})
}
