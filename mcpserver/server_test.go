package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/internal/testgit"
)

// openRepo returns the memory of a fresh git repository.
func openRepo(t *testing.T, o memsync.Options) *memsync.Memory {
	t.Helper()
	dir := testgit.Isolate(t)
	testgit.Git(t, dir, "init", "-q", ".")
	m, err := memsync.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// openGlobal returns an opener of the global layer (MEMSYNC_GLOBAL_DIR) for a role.
func openGlobal(t *testing.T, role string) func() (*memsync.Memory, error) {
	t.Helper()
	m, err := memsync.Open("", memsync.Options{Global: true, Role: role})
	if err != nil {
		t.Fatal(err)
	}
	return func() (*memsync.Memory, error) { return m, nil }
}

// connect runs a server in process over the SDK's in-memory transports.
func connect(t *testing.T, opts Options) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := New(opts).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	msg, err := tryCallTool(cs, name, args, out)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// tryCallTool is callTool for a goroutine other than the test's: it returns
// the failure instead of stopping the test.
func tryCallTool(cs *mcp.ClientSession, name string, args map[string]any, out any) (string, error) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if res.IsError {
		return res.Content[0].(*mcp.TextContent).Text, nil
	}
	data, _ := json.Marshal(res.StructuredContent)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
	}
	return "", nil
}

// TestGlobalAndPaging: the global layer's tools, list paging and filters,
// the worker refused on a global delete, and a server without a repository.
func TestGlobalAndPaging(t *testing.T) {
	t.Setenv("MEMSYNC_GLOBAL_DIR", t.TempDir())
	owner := connect(t, Options{Global: openGlobal(t, "owner")})
	worker := connect(t, Options{Global: openGlobal(t, "worker")})

	for i, typ := range []string{"pattern", "fix", "pattern", "fix", "pattern"} {
		if msg := callTool(t, worker, "save_to_global_memory", map[string]any{"content": "note " + string(rune('a'+i)), "type": typ, "key": "k" + string(rune('a'+i))}, nil); msg != "" {
			t.Fatal(msg)
		}
	}
	var page Entries
	callTool(t, owner, "list_global_memory_entries", map[string]any{"type": "pattern", "limit": 2, "offset": 1}, &page)
	if page.Total != 3 || len(page.Entries) != 2 || page.Entries[0].Content != "note c" || page.Entries[1].Content != "note a" {
		t.Fatalf("page: %+v", page)
	}
	if msg := callTool(t, worker, "delete_global_memory_entry", map[string]any{"key": "kb"}, nil); !strings.Contains(msg, "role worker may not delete") {
		t.Fatalf("worker delete: %q", msg)
	}
	var del DeleteOutput
	if msg := callTool(t, owner, "delete_global_memory_entry", map[string]any{"key": "kb"}, &del); msg != "" || del.Deleted.Content != "note b" {
		t.Fatalf("owner delete: %q %+v", msg, del)
	}
	var sum memsync.Summary
	callTool(t, worker, "get_global_memory_summary", nil, &sum)
	if sum.Layer != "global" || sum.Active.Entries != 4 || sum.Active.Types["fix"] != 1 || sum.Active.Types["pattern"] != 3 || sum.Archive.Entries != 0 {
		t.Fatalf("summary: %+v", sum)
	}
	if msg := callTool(t, owner, "retrieve_from_memory", map[string]any{"query": "x"}, nil); !strings.Contains(msg, "inside a git repository") {
		t.Fatalf("no project: %q", msg)
	}
	if msg := callTool(t, owner, "save_to_global_memory", map[string]any{"content": "  "}, nil); !strings.Contains(msg, "content is empty") {
		t.Fatalf("empty content: %q", msg)
	}
	if n := len(ToolNames()); n != 24 {
		t.Fatalf("%d tools", n)
	}
}

// TestConcurrentReadsSeeEveryWrite: retrieve calls running at once share
// the parsed memory, and each write is seen by the next call (run with -race).
func TestConcurrentReadsSeeEveryWrite(t *testing.T) {
	cs := connect(t, Options{Project: openRepo(t, memsync.Options{Role: "owner"})})
	for i := range 5 {
		if msg := callTool(t, cs, "save_to_memory", map[string]any{"content": fmt.Sprintf("retry number %d", i), "type": "fix"}, nil); msg != "" {
			t.Fatal(msg)
		}
		var wg sync.WaitGroup
		totals := make([]int, 4)
		for k := range totals {
			wg.Go(func() {
				var got Entries
				if msg, err := tryCallTool(cs, "retrieve_from_memory", map[string]any{"query": "retry"}, &got); err != nil || msg != "" {
					t.Error(msg, err)
				}
				totals[k] = got.Total
			})
		}
		wg.Wait()
		for _, n := range totals {
			if n != i+1 {
				t.Fatalf("after %d saves a retrieve found %d (%v)", i+1, n, totals)
			}
		}
	}
}

// TestDefaultGlobalIsPrivate: with no Global opener the server opens the
// global layer as the CLI does, so its files are private (0600).
func TestDefaultGlobalIsPrivate(t *testing.T) {
	t.Setenv("MEMSYNC_GLOBAL_DIR", t.TempDir())
	cs := connect(t, Options{})
	var saved SaveOutput
	if msg := callTool(t, cs, "save_to_global_memory", map[string]any{"content": "a private preference"}, &saved); msg != "" {
		t.Fatal(msg)
	}
	fi, err := os.Stat(saved.Path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Fatalf("%s has mode %o, want 600", saved.Path, perm)
	}
}
