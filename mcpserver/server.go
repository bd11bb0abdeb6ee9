// Package mcpserver is memsync's MCP server: seed 001's memory tools over
// the official MCP Go SDK, for agents that talk MCP rather than run the CLI.
//
// Project tools work on the repository's shared memory, the *_global_* tools
// on the global layer. Every call reads the current file — nothing is cached
// between calls — so servers in several worktrees (and the CLI) see each
// other's writes at once. Tool failures are tool errors whose text says what
// to do next. Read-only tools carry ReadOnlyHint, delete tools
// DestructiveHint. A server started for the worker role refuses deletes and
// restores (package policy).
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/lock"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/policy"
	"github.com/memsync/memsync/recall"
)

// Options configure a server.
type Options struct {
	// Project is the repository's store; nil when the server runs outside a
	// repository (then the project tools fail with NoProject as their text).
	Project   *memfile.Store
	NoProject string
	// ProjectBeforeWrite runs before each project write (e.g. keeping the
	// memory files out of git status); optional.
	ProjectBeforeWrite func() error
	// Global opens the global layer's store; it is called on each global call.
	Global func() (*memfile.Store, error)
	// Role is checked on deletes and restores.
	Role policy.Role
	// Session, if set, is written on saved entries (a "- Session:" bullet),
	// and reads see that session's entries plus those of no session, as the
	// CLI's --session.
	Session string
	// RecordAccess records the entries retrieve and get return, for gc's TTL
	// (memfile.Store.RecordAccess), as the CLI's search and show do.
	RecordAccess bool
	// Version is reported to clients.
	Version string
}

// layer is one memory the tools work on.
type layer struct {
	global      bool
	store       func() (*memfile.Store, error)
	beforeWrite func() error
	opts        *Options

	// The files read last (active, archive) and their search documents:
	// reused while the files hold the same bytes (see memfile.Store.Reload).
	mu   sync.Mutex
	last [2]*memfile.File
	docs [2][]recall.Doc
}

// inScope tells whether an entry is in the session's view.
func (l *layer) inScope(e *memfile.Entry) bool {
	if l.opts.Session == "" {
		return true
	}
	got := e.Field("Session")
	return got == "" || got == l.opts.Session
}

// touch records an access to entries returned to the agent.
func (l *layer) touch(st *memfile.Store, ids ...string) {
	if l.opts.RecordAccess && len(ids) > 0 {
		st.RecordAccess(ids...)
	}
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
	s := mcp.NewServer(&mcp.Implementation{Name: "memsync", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "memsync is the shared, durable memory of this git repository and of its agents. " +
			"Before a task, call retrieve_from_memory with words of the task; after learning something " +
			"worth keeping (a decision, a fix, a pattern), call save_to_memory with a short title, the content " +
			"and tags. The *_global_* tools work on the user's memory shared by all repositories.",
	})
	project := &layer{opts: &opts, beforeWrite: opts.ProjectBeforeWrite, store: func() (*memfile.Store, error) {
		if opts.Project == nil {
			msg := opts.NoProject
			if msg == "" {
				msg = "no repository memory: start 'memsync mcp' inside a git repository (or with -C DIR)"
			}
			return nil, errors.New(msg + "; the *_global_* tools still work")
		}
		return opts.Project, nil
	}}
	global := &layer{global: true, opts: &opts, store: opts.Global}
	if global.store == nil {
		global.store = func() (*memfile.Store, error) {
			home, err := memsync.OpenGlobalDir()
			if err != nil {
				return nil, err
			}
			return memfile.Open(home), nil
		}
	}
	for _, l := range []*layer{project, global} {
		for _, t := range tools {
			t.add(s, l)
		}
	}
	return s
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

// Entry is the JSON shape of an entry, the same as the CLI's --json.
type Entry struct {
	Number  int               `json:"number,omitempty" jsonschema:"position in list_memory_entries, 1-based"`
	ID      string            `json:"id"`
	Title   string            `json:"title"`
	Type    string            `json:"type"`
	Tags    []string          `json:"tags"`
	Date    string            `json:"date"`
	Content string            `json:"content"`
	Fields  map[string]string `json:"fields,omitempty" jsonschema:"other bullets of the entry (Key, Source, ...)"`
	Score   float64           `json:"score,omitempty" jsonschema:"relevance to the query"`
}

func toEntry(e *memfile.Entry, number int) Entry {
	return Entry{Number: number, ID: e.ID, Title: e.Title, Type: e.Type, Tags: e.TagList(), Date: e.Date, Content: e.Content, Fields: e.Fields()}
}

// toolError turns an error into text an agent can act on.
func toolError(err error, l *layer) error {
	listTool := tool{base: "list_memory_entries"}.name(l.global)
	switch {
	case errors.Is(err, memfile.ErrTooLarge):
		return fmt.Errorf("%w; split the content into several smaller entries and save each", err)
	case errors.Is(err, memfile.ErrNotFound), errors.Is(err, memfile.ErrAmbiguous):
		return fmt.Errorf("%w; %s shows each entry's number and ID (an entry is named by its full ID, its number, the key it was saved with, or a unique ID prefix of 4+ characters, first match wins)", err, listTool)
	case errors.Is(err, lock.ErrTimeout):
		return fmt.Errorf("%w; another process is writing the memory, retry in a moment", err)
	case errors.Is(err, policy.ErrRefused):
		return fmt.Errorf("%w; ask an owner or admin (the server's --role or MEMSYNC_ROLE)", err)
	case errors.Is(err, memfile.ErrUnsafePath):
		return fmt.Errorf("%w; memsync never writes through a link that leaves the memory home (run 'memsync worktree link')", err)
	}
	return err
}

// load reads the layer's active file (or archive) now.
func (l *layer) load(archive bool) (*memfile.Store, *memfile.File, error) {
	st, err := l.store()
	if err != nil {
		return nil, nil, err
	}
	k := 0
	reload := st.Reload
	if archive {
		k, reload = 1, st.ReloadArchive
	}
	l.mu.Lock()
	prev := l.last[k]
	l.mu.Unlock()
	f, err := reload(prev)
	if err != nil {
		return nil, nil, err
	}
	l.mu.Lock()
	if f != l.last[k] {
		l.last[k], l.docs[k] = f, nil
	}
	l.mu.Unlock()
	return st, f, nil
}

// searchDocs are the search documents of f, a file load returned; the files
// and documents are shared by concurrent calls and never changed.
func (l *layer) searchDocs(f *memfile.File) []recall.Doc {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.last {
		if l.last[k] == f {
			if l.docs[k] == nil {
				l.docs[k] = memsync.Docs(f)
			}
			return l.docs[k]
		}
	}
	return memsync.Docs(f)
}

// handler wraps a tool body: errors become tool errors with advice.
func handler[In, Out any](l *layer, body func(ctx context.Context, in In) (Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := body(ctx, in)
		if err != nil {
			var zero Out
			return nil, zero, toolError(err, l)
		}
		return nil, out, nil
	}
}

// search ranks the entries of f in the layer's view for a query, with the filters.
func (l *layer) search(f *memfile.File, query string, tags []string, typ string, limit int) []Entry {
	var idx []int
	docs := l.searchDocs(f)
	if l.opts.Session != "" {
		var view []recall.Doc
		for i := range f.Entries {
			if l.inScope(&f.Entries[i]) {
				idx = append(idx, i)
				view = append(view, docs[i])
			}
		}
		docs = view
	}
	hits := recall.Search(docs, query, recall.Options{Limit: limit, Tags: tags, Type: memfile.NormalizeType(typ)})
	out := make([]Entry, len(hits))
	for k, h := range hits {
		i := h.Index
		if idx != nil {
			i = idx[i]
		}
		out[k] = toEntry(&f.Entries[i], i+1)
		out[k].Score = h.Score
	}
	return out
}

func fileSize(st *memfile.Store, path string) int64 {
	target, err := st.Resolve(path)
	if err != nil {
		return 0
	}
	fi, err := os.Stat(target)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func hasAll(e *memfile.Entry, tags []string) bool {
	for _, t := range tags {
		if !slices.ContainsFunc(e.Tags, func(x string) bool { return strings.EqualFold(x, t) }) {
			return false
		}
	}
	return true
}
