// Package mcpserver is memsync's MCP server: the memory tools over
// the official MCP Go SDK, for agents that talk MCP rather than run the CLI.
//
// It is a thin adapter over *memsync.Memory: project tools work on the
// repository's memory, the *_global_* tools on the global layer, each through
// the Memory's operations, so they get the CLI's guarantees (lock, dedup,
// private global files, limits, access recording, a clean git status). Every
// call reads the current file, so servers in several worktrees (and the CLI)
// see each other's writes at once; with Options.OpenProject every call also
// uses the file the repository chooses now (ralph's, once ralph made it).
// Tool failures are tool errors whose text says what to do next. Read-only
// tools carry ReadOnlyHint, delete tools DestructiveHint. A Memory opened for
// the worker role refuses deletes and restores (package policy).
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/lock"
)

// Options configure a server. Role, session and access recording are the
// Memory's (memsync.Options).
type Options struct {
	// Project is the repository's memory; nil when the server runs outside a
	// repository (then the project tools fail with NoProject as their text).
	Project   *memsync.Memory
	NoProject string
	// OpenProject, if set, opens the repository's memory as the server was
	// told to (session, role, limits). It is called on every project tool
	// call, since which file is the memory can change while the server runs
	// (ralph makes .ralph/agent/memories.md, git config memsync.layout is
	// set); the Memory in use is kept while its file stays the one chosen,
	// so its parse cache lives on. Project is then the first Memory, or nil;
	// an error wrapping memsync.ErrNoRepository is reported as NoProject.
	OpenProject func() (*memsync.Memory, error)
	// Global opens the global layer; nil opens it as
	// memsync.Open("", memsync.Options{Global: true}) on first use, in
	// Project's session.
	Global func() (*memsync.Memory, error)
	// Version is reported to clients; "" reports memsync.Version().
	Version string
}

// layer is one memory the tools work on.
type layer struct {
	global bool
	open   func() (*memsync.Memory, error)
}

// ToolNames are the names of the tools New registers, project tools first.
func ToolNames() []string {
	var out []string
	for _, g := range []bool{false, true} {
		for _, t := range tools {
			out = append(out, t.name(g))
		}
	}
	return out
}

// New returns a server with the memory tools; run it with
// server.Run(ctx, &mcp.StdioTransport{}).
func New(opts Options) *mcp.Server {
	if opts.Version == "" {
		opts.Version = memsync.Version()
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "memsync", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "memsync is the shared, durable memory of this git repository and of its agents. " +
			"Before a task, call retrieve_from_memory with words of the task; after learning something " +
			"worth keeping (a decision, a fix, a pattern), call save_to_memory with a short title, the content " +
			"and tags. The *_global_* tools work on the user's memory shared by all repositories.",
	})
	project := &layer{open: projectOpener(opts)}
	global := &layer{global: true, open: opts.Global}
	if global.open == nil {
		global.open = defaultGlobal(opts.Project)
	}
	for _, l := range []*layer{project, global} {
		for _, t := range tools {
			t.add(s, l)
		}
	}
	return s
}

// projectOpener returns the project layer's open: opts.Project, or with
// opts.OpenProject the memory the repository chooses at each call.
func projectOpener(opts Options) func() (*memsync.Memory, error) {
	noProject := func() error {
		msg := opts.NoProject
		if msg == "" {
			msg = "no repository memory: start 'memsync mcp' inside a git repository (or with -C DIR)"
		}
		return errors.New(msg + "; the *_global_* tools still work")
	}
	var mu sync.Mutex
	cur := opts.Project
	return func() (*memsync.Memory, error) {
		if opts.OpenProject == nil {
			if cur == nil {
				return nil, noProject()
			}
			return cur, nil
		}
		m, err := opts.OpenProject()
		switch {
		case errors.Is(err, memsync.ErrNoRepository):
			return nil, noProject()
		case err != nil:
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		if cur == nil || cur.Path() != m.Path() {
			cur = m
		}
		return cur, nil
	}
}

// defaultGlobal opens the global layer once it opens (in project's session,
// if any), so its parse cache lives as long as the server.
func defaultGlobal(project *memsync.Memory) func() (*memsync.Memory, error) {
	var mu sync.Mutex
	var m *memsync.Memory
	return func() (*memsync.Memory, error) {
		mu.Lock()
		defer mu.Unlock()
		if m != nil {
			return m, nil
		}
		o := memsync.Options{Global: true}
		if project != nil {
			o.Session = project.Session()
		}
		g, err := memsync.Open("", o)
		if err != nil {
			return nil, err
		}
		m = g
		return m, nil
	}
}

// tool is one tool, registered once per layer.
type tool struct {
	base string // project name; the global one has "global_memory" for "memory"
	add  func(s *mcp.Server, l *layer)
}

func (t tool) name(global bool) string {
	if global {
		return strings.Replace(t.base, "memory", "global_memory", 1)
	}
	return t.base
}

func (l *layer) what() string {
	if l.global {
		return "the global memory (shared by all repositories)"
	}
	return "the repository's memory"
}

var (
	falseP = new(bool)
	trueP  = func() *bool { b := true; return &b }()
)

func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: falseP, Title: title}
}

// toolError turns an error into text an agent can act on: the fix the
// CLI's hint gives for the same error.
func toolError(err error, l *layer) error {
	listTool := tool{base: "list_memory_entries"}.name(l.global)
	switch {
	case errors.Is(err, memsync.ErrEmpty):
		return fmt.Errorf("%w; give the text to remember in 'content'", err)
	case errors.Is(err, store.ErrTooLarge):
		return fmt.Errorf("%w; split the content into several smaller entries and save each", err)
	case errors.Is(err, memsync.ErrNotFound), errors.Is(err, memsync.ErrAmbiguous):
		return fmt.Errorf("%w; %s shows each entry's number and ID (an entry is named by its full ID, its number, the key it was saved with, or a unique ID prefix of 4+ characters, first match wins)", err, listTool)
	case errors.As(err, new(*store.KeyTakenError)):
		getTool, delTool := tool{base: "get_memory_entry"}.name(l.global), tool{base: "delete_memory_entry"}.name(l.global)
		return fmt.Errorf("%w; nothing was saved: a key names one entry. %s gives that entry; to replace it, %s it first, or save under another key", err, getTool, delTool)
	case errors.Is(err, lock.ErrTimeout):
		return fmt.Errorf("%w; another process is writing the memory, retry in a moment", err)
	case errors.Is(err, policy.ErrRefused):
		return fmt.Errorf("%w; ask an owner or admin (the server's --role or MEMSYNC_ROLE)", err)
	}
	if _, hint := memsync.Classify(err); hint != "" {
		return fmt.Errorf("%w; %s", err, hint)
	}
	return err
}

// handler wraps a tool body: it opens the layer's memory, and errors become
// tool errors with advice.
func handler[In, Out any](l *layer, body func(ctx context.Context, m *memsync.Memory, in In) (Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		var out Out
		m, err := l.open()
		if err == nil {
			out, err = body(ctx, m, in)
		}
		if err != nil {
			var zero Out
			return nil, zero, toolError(err, l)
		}
		return nil, out, nil
	}
}

func hasAll(e *memsync.Entry, tags []string) bool {
	for _, t := range tags {
		if !slices.ContainsFunc(e.Tags, func(x string) bool { return strings.EqualFold(x, t) }) {
			return false
		}
	}
	return true
}
