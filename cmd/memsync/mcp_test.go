package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/mcpserver"
)

// startMCP runs `memsync mcp ARGS` in dir as a real process and connects the
// SDK's client to it over stdio.
func startMCP(t testing.TB, env []string, dir string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), append([]string{"mcp"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "memsync-test", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and decodes its structured result into out (if not nil).
// It returns the error text of a tool error, "" on success.
func call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	if res.IsError {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	if out != nil {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: decode %s: %v", name, data, err)
		}
	}
	return ""
}

func mustCall(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	if msg := call(t, cs, name, args, out); msg != "" {
		t.Fatalf("%s: tool error: %s", name, msg)
	}
}

// TestMCPServer drives real `memsync mcp` processes over stdio: the tool
// list and annotations, a save → retrieve → get → delete round trip, writes
// of a server in another worktree seen at once, the worker role refused on
// delete, actionable errors, the global layer and the archive.
func TestMCPServer(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	wt := filepath.Join(filepath.Dir(repo), "wt")
	gitRun(t, env, repo, "worktree", "add", "-q", wt, "-b", "loop")
	a := startMCP(t, env, repo)
	b := startMCP(t, env, wt)
	worker := startMCP(t, env, wt, "--role", "worker")

	// Tools: seed 001's names and annotations.
	lt, err := a.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
		an := tool.Annotations
		if an == nil {
			t.Fatalf("%s has no annotations", tool.Name)
		}
		switch {
		case strings.HasPrefix(tool.Name, "delete_"), strings.HasPrefix(tool.Name, "edit_"):
			if an.ReadOnlyHint || an.DestructiveHint == nil || !*an.DestructiveHint {
				t.Errorf("%s: want destructive, got %+v", tool.Name, an)
			}
		case strings.HasPrefix(tool.Name, "save_"), strings.HasPrefix(tool.Name, "restore_"):
			if an.ReadOnlyHint || an.DestructiveHint == nil || *an.DestructiveHint {
				t.Errorf("%s: want additive, got %+v", tool.Name, an)
			}
		default:
			if !an.ReadOnlyHint {
				t.Errorf("%s: want read-only", tool.Name)
			}
		}
	}
	want := mcpserver.ToolNames()
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	for _, n := range []string{"save_to_memory", "retrieve_from_memory", "get_memory_entry", "list_memory_entries",
		"delete_memory_entry", "get_memory_summary", "search_memory_archive", "list_memory_archive",
		"get_memory_archive_summary", "restore_from_memory_archive", "save_to_global_memory", "retrieve_from_global_memory",
		"list_global_memory_entries", "get_global_memory_summary", "delete_global_memory_entry",
		"search_global_memory_archive", "list_global_memory_archive", "restore_from_global_memory_archive",
		"get_global_memory_archive_summary"} {
		if !slices.Contains(names, n) {
			t.Errorf("missing tool %s", n)
		}
	}

	// save → retrieve → get.
	var saved mcpserver.SaveOutput
	mustCall(t, a, "save_to_memory", map[string]any{"key": "api-auth-decision", "content": "Authentication uses JWT with 15 minute access tokens",
		"tags": []string{"api", "auth"}, "type": "decision", "caller_agent_id": "admin_1"}, &saved)
	id := saved.Entry.ID
	if id == "" || saved.Entry.Type != "decision" || saved.Path != filepath.Join(repo, ".git", "memsync", "memories.md") {
		t.Fatalf("saved %+v", saved)
	}
	var found mcpserver.Entries
	mustCall(t, a, "retrieve_from_memory", map[string]any{"query": "jwt tokens", "tags": []string{"auth"}}, &found)
	if len(found.Entries) != 1 || found.Entries[0].ID != id || found.Entries[0].Score == nil || *found.Entries[0].Score <= 0 {
		t.Fatalf("retrieve: %+v", found)
	}
	var got memsync.Entry
	mustCall(t, a, "get_memory_entry", map[string]any{"key": "api-auth-decision"}, &got)
	if got.ID != id || got.Fields["Source"] != "admin_1" || got.Content != "Authentication uses JWT with 15 minute access tokens" {
		t.Fatalf("get by key: %+v", got)
	}

	// A write by the server in the other worktree is seen by the first on its next call.
	var other mcpserver.SaveOutput
	mustCall(t, b, "save_to_memory", map[string]any{"content": "Integration tests need a 600 s CI timeout", "type": "solution"}, &other)
	var listed mcpserver.Entries
	mustCall(t, a, "list_memory_entries", nil, &listed)
	if listed.Total != 2 || listed.Entries[0].ID != other.Entry.ID || listed.Entries[0].Number != 2 {
		t.Fatalf("list after the other server's write: %+v", listed)
	}
	var sum memsync.Summary
	mustCall(t, b, "get_memory_summary", nil, &sum)
	if a := sum.Active; a == nil || a.Entries != 2 || a.Types["decision"] != 1 || a.Types["solution"] != 1 || a.Tags["auth"] != 1 || a.Bytes == 0 || sum.MaxBytes != 10<<20 || sum.MaxEntries != 1000 {
		t.Fatalf("summary: %+v", sum)
	}

	// Saving the same content again adds nothing and says so.
	var again mcpserver.SaveOutput
	mustCall(t, b, "save_to_memory", map[string]any{"content": "integration tests need a 600 s CI timeout"}, &again)
	if again.Duplicate != "active" || again.Entry.ID != other.Entry.ID {
		t.Fatalf("duplicate save: %+v", again)
	}

	// Actionable errors.
	big := strings.Repeat("x", 70<<10)
	if msg := call(t, a, "save_to_memory", map[string]any{"content": big}, nil); !strings.Contains(msg, "the limit is 65536 bytes") || !strings.Contains(msg, "split the content") {
		t.Fatalf("too large: %q", msg)
	}
	if msg := call(t, a, "get_memory_entry", map[string]any{"key": "zzzzzz"}, nil); !strings.Contains(msg, "no such entry") || !strings.Contains(msg, "list_memory_entries") {
		t.Fatalf("not found: %q", msg)
	}

	// The worker may not delete; the entry stays.
	if msg := call(t, worker, "delete_memory_entry", map[string]any{"key": id}, nil); !strings.Contains(msg, "role worker may not delete") {
		t.Fatalf("worker delete: %q", msg)
	}
	mustCall(t, b, "get_memory_entry", map[string]any{"key": id[:6]}, &got)

	// An owner deletes; the other server no longer finds it.
	var del mcpserver.DeleteOutput
	mustCall(t, a, "delete_memory_entry", map[string]any{"key": id}, &del)
	if del.Deleted.ID != id {
		t.Fatalf("deleted %+v", del)
	}
	if msg := call(t, b, "get_memory_entry", map[string]any{"key": id}, nil); !strings.Contains(msg, "no such entry") {
		t.Fatalf("after delete: %q", msg)
	}

	// Global layer: shared by both servers.
	mustCall(t, a, "save_to_global_memory", map[string]any{"content": "The user prefers small commits", "tags": []string{"preferences"}}, nil)
	mustCall(t, b, "retrieve_from_global_memory", map[string]any{"query": "preferences"}, &found)
	if len(found.Entries) != 1 || !strings.Contains(found.Entries[0].Content, "small commits") {
		t.Fatalf("global: %+v", found)
	}

	// Archive: read as it is now.
	archive := filepath.Join(repo, ".agent", "archive", "memories.md")
	if err := os.MkdirAll(filepath.Dir(archive), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(archive, []byte("# Memories\n\n## Fix: Old flaky test\n- Tags: ci\n- Date: 2025-01-01\n- ID: arch00000001\n- Content: Retry the network fixture\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustCall(t, a, "search_memory_archive", map[string]any{"query": "flaky fixture"}, &found)
	if len(found.Entries) != 1 || found.Entries[0].ID != "arch00000001" {
		t.Fatalf("archive search: %+v", found)
	}
	var asum memsync.Summary
	mustCall(t, b, "get_memory_archive_summary", nil, &asum)
	if sum = asum; sum.Active != nil || sum.Archive.Entries != 1 || sum.Archive.Types["fix"] != 1 {
		t.Fatalf("archive summary: %+v", sum)
	}

	// Restore: refused to the worker, done for an owner, seen by the other server.
	if msg := call(t, worker, "restore_from_memory_archive", map[string]any{"key": "arch0000"}, nil); !strings.Contains(msg, "role worker may not restore") {
		t.Fatalf("worker restore: %q", msg)
	}
	var restored mcpserver.RestoreOutput
	mustCall(t, a, "restore_from_memory_archive", map[string]any{"key": "arch0000"}, &restored)
	if len(restored.Restored) != 1 || restored.Restored[0].ID != "arch00000001" {
		t.Fatalf("restore: %+v", restored)
	}
	mustCall(t, b, "get_memory_entry", map[string]any{"key": "arch00000001"}, &got)
	if msg := call(t, a, "restore_from_memory_archive", map[string]any{"key": "arch00000001"}, nil); !strings.Contains(msg, "in the archive") {
		t.Fatalf("restore twice: %q", msg)
	}

	if st := gitRun(t, env, repo, "status", "--porcelain"); st != "" {
		t.Fatalf("git status not clean:\n%s", st)
	}
}

// TestMCPOutsideRepo: the project tools say what to do; the global ones work.
func TestMCPOutsideRepo(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir(), "GIT_CEILING_DIRECTORIES="+os.TempDir())
	cs := startMCP(t, env, t.TempDir())
	if msg := call(t, cs, "list_memory_entries", nil, nil); !strings.Contains(msg, "outside a git repository") || !strings.Contains(msg, "_global_") {
		t.Fatalf("project tool outside a repo: %q", msg)
	}
	mustCall(t, cs, "save_to_global_memory", map[string]any{"content": "works anywhere"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

// rawMCP is a `memsync mcp` process driven over its raw stdio pipes, line by
// line, for what an SDK client would never send.
type rawMCP struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func startRawMCP(t *testing.T, env []string, dir string) *rawMCP {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), "mcp")
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rawMCP{t: t, cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	return r
}

// initialize is the client's side of MCP's handshake: initialize, its
// answer, then the initialized notification.
func (r *rawMCP) initialize() {
	r.t.Helper()
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if m := r.next(); string(m.ID) != "1" || m.Error != nil || len(m.Result) == 0 {
		r.t.Fatalf("initialize: %+v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func (r *rawMCP) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatalf("write to the server: %v", err)
	}
}

// reply is one JSON-RPC message the server wrote.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// next is the server's next message; a server that exits or stays silent
// for a minute fails the test.
func (r *rawMCP) next() reply {
	r.t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok {
			r.t.Fatal("the server closed its output (exited)")
		}
		var m reply
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			r.t.Fatalf("server wrote %q: %v", l, err)
		}
		return m
	case <-time.After(time.Minute):
		r.t.Fatal("no answer from the server")
	}
	return reply{}
}

// TestMCPBadFrames: a line that is no JSON, a 30 MB line and JSON that is no
// JSON-RPC message each get an error answer, and the server goes on serving
// (issue 10, defect 10).
func TestMCPBadFrames(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	r := startRawMCP(t, env, repo)

	r.initialize()

	r.send(`{not json`)
	if m := r.next(); m.Error == nil || m.Error.Code != -32700 || string(m.ID) != "null" {
		t.Fatalf("malformed line: want a parse error with id null, got %+v", m)
	}

	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 30<<20) + `"}}`)
	if m := r.next(); m.Error == nil || !strings.Contains(m.Error.Message, "longer than") || string(m.ID) != "null" {
		t.Fatalf("30 MB line: want an error, got %+v", m)
	}

	r.send(`{"id":3,"params":{}}`)
	if m := r.next(); m.Error == nil || m.Error.Code != -32600 || string(m.ID) != "3" {
		t.Fatalf("JSON that is no JSON-RPC message: want invalid request for id 3, got %+v", m)
	}

	r.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	m := r.next()
	if string(m.ID) != "4" || m.Error != nil || !strings.Contains(string(m.Result), "save_to_memory") {
		t.Fatalf("tools/list after the bad lines: %+v", m)
	}
	r.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"save_to_memory","arguments":{"content":"the server survived bad frames"}}}`)
	if m := r.next(); string(m.ID) != "5" || m.Error != nil || strings.Contains(string(m.Result), `"isError":true`) {
		t.Fatalf("save after the bad lines: %+v %s", m, m.Result)
	}
	if err := r.in.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("server exit after stdin closed: %v", err)
	}
}

// TestMCPReferences: the MCP tools resolve a reference as show and delete
// do — a list number, then a full ID, then a key, then a unique ID prefix —
// so a key saved over MCP works on the command line too; numeric keys and
// control characters are refused, not dropped (issue 10, defect 19).
func TestMCPReferences(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	cs := startMCP(t, env, repo)

	var first, keyed mcpserver.SaveOutput
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "the first entry"}, &first)
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "Auth uses JWT", "key": "api-auth"}, &keyed)
	// An entry keyed "1" by hand (or by an older memsync).
	f, err := os.OpenFile(filepath.Join(repo, ".agent", "memories.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n## Note: keyed one\n- Date: 2026-01-01\n- ID: kkkk00000001\n- Key: 1\n- Content: keyed one\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	var got memsync.Entry
	mustCall(t, cs, "get_memory_entry", map[string]any{"key": "1"}, &got)
	if got.ID != first.Entry.ID {
		t.Fatalf(`get "1": want entry 1 (%s), got %s %q`, first.Entry.ID, got.ID, got.Title)
	}
	mustCall(t, cs, "get_memory_entry", map[string]any{"key": "api-auth"}, &got)
	if got.ID != keyed.Entry.ID || got.Fields["Key"] != "api-auth" {
		t.Fatalf("get by key: %+v", got)
	}

	// The key saved over MCP resolves on the command line.
	show := exec.Command(memsyncBinary(t), "show", "--json", "api-auth")
	show.Dir, show.Env = repo, env
	out, err := show.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"id": "`+keyed.Entry.ID+`"`) {
		t.Fatalf("memsync show api-auth: %v\n%s", err, out)
	}

	// Refused rather than dropped or shadowed.
	if msg := call(t, cs, "save_to_memory", map[string]any{"content": "numeric key", "key": "7"}, nil); !strings.Contains(msg, "a key cannot be a number") {
		t.Fatalf("numeric key: %q", msg)
	}
	if msg := call(t, cs, "save_to_memory", map[string]any{"content": "agent with a newline", "caller_agent_id": "agent\nx"}, nil); !strings.Contains(msg, "caller_agent_id must be one line") {
		t.Fatalf("caller_agent_id with a newline: %q", msg)
	}
	if msg := call(t, cs, "save_to_memory", map[string]any{"content": "agent with a tab", "caller_agent_id": "agent\tx"}, nil); !strings.Contains(msg, "control character") {
		t.Fatalf("caller_agent_id with a control character: %q", msg)
	}
	if msg := call(t, cs, "save_to_memory", map[string]any{"content": "key with an escape", "key": "k\x1b[2J"}, nil); !strings.Contains(msg, "control character") {
		t.Fatalf("key with a control character: %q", msg)
	}
	var listed mcpserver.Entries
	mustCall(t, cs, "list_memory_entries", nil, &listed)
	if listed.Total != 3 {
		t.Fatalf("refused saves must add nothing: %+v", listed)
	}

	// delete on the command line by the MCP key.
	del := exec.Command(memsyncBinary(t), "delete", "api-auth")
	del.Dir, del.Env = repo, env
	if out, err := del.CombinedOutput(); err != nil || !strings.Contains(string(out), "deleted "+keyed.Entry.ID) {
		t.Fatalf("memsync delete api-auth: %v\n%s", err, out)
	}
	if msg := call(t, cs, "get_memory_entry", map[string]any{"key": "api-auth"}, nil); !strings.Contains(msg, "no such entry") {
		t.Fatalf("after delete: %q", msg)
	}
}

// TestMCPRalphDialect: into a ralph-format memory, a key, a session and a
// title are kept as tags ralph keeps (issue 10 defect 12 refused them; issue
// 12): get_memory_entry finds the entry by its key, the session's view and
// dedup hold, and ralph's own code lists the entries with those tags and
// keeps them through its delete of another entry.
func TestMCPRalphDialect(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := ralphRepo(t, env)
	path := ralphFile(repo)
	ralph := "# Memories\n\n## Patterns\n\n### mem-1770245557-134c\n> Kiro image support.\n<!-- tags: kiro | created: 2026-02-04 -->\n\n## Decisions\n\n## Fixes\n\n## Context\n"
	if err := os.WriteFile(path, []byte(ralph), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := startMCP(t, env, repo)
	s9 := startMCP(t, env, repo, "--session", "s9")

	var keyed, titled, session mcpserver.SaveOutput
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "keyed in ralph", "key": "k1, with comma"}, &keyed)
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "titled in ralph", "title": "A title of its own"}, &titled)
	mustCall(t, s9, "save_to_memory", map[string]any{"content": "in session s9"}, &session)
	var got memsync.Entry
	mustCall(t, cs, "get_memory_entry", map[string]any{"key": "k1, with comma"}, &got)
	if got.ID != keyed.Entry.ID || got.Content != "keyed in ralph" || !strings.HasPrefix(got.ID, "mem-") {
		t.Fatalf("by key: %+v", got)
	}
	mustCall(t, cs, "get_memory_entry", map[string]any{"key": titled.Entry.ID}, &got)
	if got.Title != "A title of its own" {
		t.Fatalf("title: %+v", got)
	}
	var again mcpserver.SaveOutput
	mustCall(t, s9, "save_to_memory", map[string]any{"content": "in session s9"}, &again)
	if again.Entry.ID != session.Entry.ID {
		t.Fatalf("session s9 stored its entry twice: %s %s", again.Entry.ID, session.Entry.ID)
	}

	seen := ralphList(t, repo)
	for id, tag := range map[string]string{keyed.Entry.ID: "key:k1%2C with comma", titled.Entry.ID: "title:A title of its own", session.Entry.ID: "session:s9"} {
		if !slices.Contains(seen[id].Tags, tag) {
			t.Errorf("ralph sees %s as %+v, want the tag %s", id, seen[id], tag)
		}
	}
	runRalph(t, repo, "delete", "mem-1770245557-134c")
	mustCall(t, cs, "get_memory_entry", map[string]any{"key": "k1, with comma"}, &got)
	if got.ID != keyed.Entry.ID {
		t.Fatalf("by key after ralph's delete: %+v", got)
	}
	if _, ok := memsyncList(t, env, repo, "--session", "s8")[session.Entry.ID]; ok {
		t.Error("session s8 lists the entry of session s9")
	}
	if _, ok := memsyncList(t, env, repo, "--session", "s9")[session.Entry.ID]; !ok {
		t.Error("session s9 does not list its entry")
	}
}

// TestMCPDeleteKeepsStatusClean: an MCP delete in a fresh repository, whose
// memory file was written by another tool, keeps the memory files out of
// git status as every other write does (issue 11).
func TestMCPDeleteKeepsStatusClean(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	path := filepath.Join(repo, ".agent", "memories.md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("# Memories\n\n## Note: by hand\n- Date: 2026-01-01\n- ID: hand00000001\n- Content: written by another tool\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := startMCP(t, env, repo)
	var del mcpserver.DeleteOutput
	mustCall(t, cs, "delete_memory_entry", map[string]any{"key": "hand00000001"}, &del)
	if del.Deleted.ID != "hand00000001" {
		t.Fatalf("deleted %+v", del)
	}
	if st := gitRun(t, env, repo, "status", "--porcelain"); st != "" {
		t.Fatalf("git status after an MCP delete:\n%s", st)
	}
}

// The MCP summary tools and `memsync summary --json` give the same object for
// the same memory — a session's view, a damaged line, a size cap from the
// environment — on both layers (issue 11: one summary).
func TestSummarySameOverCLIAndMCP(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir(), "MEMSYNC_SESSION=s1", "MEMSYNC_MAX_BYTES=500000", "MCP_MEMORY_MAX_ENTRIES=40")
	repo := newRepo(t, env)
	for _, args := range [][]string{
		{"add", "Use retries", "-t", "pattern", "--tags", "net"},
		{"add", "Chose Postgres", "-t", "decision", "--tags", "db"},
		{"add", "only in s2", "--session", "s2"},
		{"archive", "2"},
		{"--global", "add", "Prefer small commits", "--tags", "git"},
	} {
		memsyncIn(t, env, repo, args...)
	}
	f, err := os.OpenFile(filepath.Join(repo, ".agent", "memories.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("\n\xff not UTF-8\n")
	_ = f.Close()
	cs := startMCP(t, env, repo)
	for _, c := range []struct {
		tool string
		args []string
	}{
		{"get_memory_summary", []string{"summary", "--json"}},
		{"get_memory_archive_summary", []string{"summary", "--archive", "--json"}},
		{"get_global_memory_summary", []string{"--global", "summary", "--json"}},
		{"get_global_memory_archive_summary", []string{"--global", "summary", "--archive", "--json"}},
	} {
		var cli, mcp map[string]any
		if err := json.Unmarshal([]byte(memsyncIn(t, env, repo, c.args...)), &cli); err != nil {
			t.Fatal(err)
		}
		mustCall(t, cs, c.tool, nil, &mcp)
		a, _ := json.Marshal(cli)
		b, _ := json.Marshal(mcp)
		if string(a) != string(b) {
			t.Errorf("%v:\n%s\n%s:\n%s", c.args, a, c.tool, b)
		}
	}
}

// TestMCPAnswersEveryRequestBeforeEOF: a client that writes its requests
// and closes stdin at once (`printf ... | memsync mcp`, or one that closes
// mid-call) gets an answer to every request, every save is stored, and the
// server exits 0. The session used to end at EOF and drop the calls under
// way and those still queued: saves lost with exit status 0.
func TestMCPAnswersEveryRequestBeforeEOF(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	const saves = 5
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := range saves {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"save_to_memory","arguments":{"content":"piped save %d"}}}`+"\n", 10+i, i)
	}
	in.WriteString(`{"jsonrpc":"2.0","id":20,"method":"tools/list"}` + "\n")
	for round := range 3 { // the drop depended on timing: try a few times
		cmd := exec.Command(memsyncBinary(t), "mcp")
		cmd.Dir, cmd.Env = repo, env
		cmd.Stdin = strings.NewReader(in.String())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("round %d: exit after EOF: %v\n%s", round, err, stderr.String())
		}
		answered := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var m reply
			if json.Unmarshal([]byte(l), &m) == nil && m.Error == nil && !strings.Contains(string(m.Result), `"isError":true`) {
				answered[string(m.ID)] = true
			}
		}
		for _, id := range []string{"1", "10", "11", "12", "13", "14", "20"} {
			if !answered[id] {
				t.Fatalf("round %d: request %s got no answer; output:\n%s\nstderr:\n%s", round, id, out, stderr.String())
			}
		}
		got := memsyncList(t, env, repo)
		if len(got) != saves {
			t.Fatalf("round %d: %d entries stored, want %d: %+v", round, len(got), saves, got)
		}
	}
}

// TestMCPBatchRefused: a JSON-RPC batch (which MCP 2025-06-18 removed) gets
// an error answer and the session goes on; it used to end the server with
// exit status 1 and "invalid trailing data at the end of stream".
func TestMCPBatchRefused(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	r := startRawMCP(t, env, repo)
	r.initialize()
	r.send(`[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"save_to_memory","arguments":{"content":"sent in a batch"}}}]`)
	if m := r.next(); m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, "batch") {
		t.Fatalf("batch: want an invalid request naming the batch, got %+v", m)
	}
	r.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"save_to_memory","arguments":{"content":"sent alone"}}}`)
	if m := r.next(); string(m.ID) != "4" || m.Error != nil || strings.Contains(string(m.Result), `"isError":true`) {
		t.Fatalf("save after the batch: %+v %s", m, m.Result)
	}
	if err := r.in.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("server exit after stdin closed: %v", err)
	}
	got := memsyncList(t, env, repo)
	if len(got) != 1 {
		t.Fatalf("want only the entry sent alone, got %+v", got)
	}
}

// TestMCPFollowsTheMemoryFile: the memory a repository uses is chosen
// again on every call. A server started before ralph made its
// .ralph/agent/memories.md used to keep writing .agent/memories.md, a
// memory no one else read: the CLI and ralph used ralph's file from then on.
func TestMCPFollowsTheMemoryFile(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	cs := startMCP(t, env, repo)
	var listed mcpserver.Entries
	mustCall(t, cs, "list_memory_entries", nil, &listed)
	if listed.Total != 0 {
		t.Fatalf("fresh repository: %+v", listed)
	}

	// ralph starts in the repository and saves; memsync now uses its file.
	if err := os.MkdirAll(filepath.Join(repo, ".ralph", "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	byRalph := runRalph(t, repo, "add", "saved by ralph", "--format", "quiet")
	var saved mcpserver.SaveOutput
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "saved over MCP after ralph"}, &saved)
	if home := filepath.Join(repo, ".git", "memsync", "memories.md"); saved.Path != home {
		t.Errorf("saved into %s, want the memory %s", saved.Path, home)
	}
	if got := runRalph(t, repo, "list"); !strings.Contains(got, "saved over MCP after ralph") {
		t.Errorf("ralph does not list the entry saved over MCP:\n%s", got)
	}
	mustCall(t, cs, "list_memory_entries", nil, &listed)
	if listed.Total != 2 {
		t.Errorf("MCP lists %+v, want ralph's entry and its own", listed)
	}
	cli := memsyncList(t, env, repo)
	if _, ok := cli[byRalph]; !ok {
		t.Errorf("memsync list lacks ralph's entry: %+v", cli)
	}
	if _, ok := cli[saved.Entry.ID]; !ok {
		t.Errorf("memsync list lacks the entry saved over MCP: %+v", cli)
	}
	if _, ok := ralphList(t, repo)[saved.Entry.ID]; !ok {
		t.Errorf("ralph does not list the entry saved over MCP")
	}
}

// TestMCPErrorsSayWhatTheCLISays: a memory file that memsync refuses (a
// symlink out of the memory home, a folder in its place, a file made
// read-only) is a tool error with the fix the CLI's hint gives for that
// case; the server used to advise 'memsync worktree link' for all of them,
// which repairs none.
func TestMCPErrorsSayWhatTheCLISays(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	cs := startMCP(t, env, repo)
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "before the file was replaced"}, nil)
	path := filepath.Join(repo, ".git", "memsync", "memories.md") // the memory itself (a user could link it anywhere)
	outside := filepath.Join(t.TempDir(), "victim.md")
	victim := "# Memories\n\n## Note: outside\n- Date: 2026-01-01\n- ID: out000000001\n- Content: not memsync's\n"
	if err := os.WriteFile(outside, []byte(victim), 0o644); err != nil {
		t.Fatal(err)
	}
	cliHint := func() string {
		cmd := exec.Command(memsyncBinary(t), "add", "through the CLI")
		cmd.Dir, cmd.Env = repo, env
		out, _ := cmd.CombinedOutput()
		_, hint, ok := strings.Cut(string(out), "hint: ")
		if !ok {
			t.Fatalf("the CLI gave no hint:\n%s", out)
		}
		return strings.TrimSpace(hint)
	}
	for _, c := range []struct {
		name  string
		setup func()
	}{
		{"symlink out of the home", func() {
			if err := os.Rename(path, path+".saved"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"folder in its place", func() {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"read-only file", func() {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".saved", path); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o444); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		c.setup()
		hint := cliHint()
		msg := call(t, cs, "save_to_memory", map[string]any{"content": "over MCP, " + c.name}, nil)
		if msg == "" || !strings.Contains(msg, hint) {
			t.Errorf("%s: MCP says %q, want the CLI's fix %q", c.name, msg, hint)
		}
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != victim {
		t.Errorf("the file outside changed: %q %v", b, err)
	}
}

// TestMCPRalphTitles: in ralph's layout, an entry's title is the first line
// of its content, as ralph shows it, in every tool that returns entries
// (it was empty: ralph's dialect has no title line).
func TestMCPRalphTitles(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := ralphRepo(t, env)
	ralph := "# Memories\n\n## Patterns\n\n### mem-1770245557-134c\n> Kiro image support\n> in two lines.\n<!-- tags: kiro | created: 2026-02-04 -->\n\n## Decisions\n\n## Fixes\n\n## Context\n"
	if err := os.WriteFile(ralphFile(repo), []byte(ralph), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := startMCP(t, env, repo)
	const want = "Kiro image support"
	var listed, found mcpserver.Entries
	mustCall(t, cs, "list_memory_entries", map[string]any{}, &listed)
	mustCall(t, cs, "retrieve_from_memory", map[string]any{"query": "kiro image"}, &found)
	var got memsync.Entry
	mustCall(t, cs, "get_memory_entry", map[string]any{"key": "mem-1770245557-134c"}, &got)
	var saved mcpserver.SaveOutput
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "kiro image support\nin two lines."}, &saved)
	for what, es := range map[string][]memsync.Entry{"list": listed.Entries, "retrieve": found.Entries, "get": {got}, "save (duplicate)": {saved.Entry}} {
		if len(es) != 1 || es[0].Title != want {
			t.Errorf("%s: %+v, want the title %q", what, es, want)
		}
	}
}

// TestMCPKeysUnique: a save with a key another entry has is refused with
// that entry's ID, and nothing is stored; get and delete by the key then
// name the one entry (a second entry used to be stored, after which both
// failed as ambiguous); once deleted, the key is free again. A save of the
// same content under its own key again is the stored entry (a retry).
func TestMCPKeysUnique(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	cs := startMCP(t, env, repo)
	var first, retry mcpserver.SaveOutput
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "auth uses JWT", "key": "api-auth"}, &first)
	msg := call(t, cs, "save_to_memory", map[string]any{"content": "auth uses sessions", "key": "api-auth"}, nil)
	if !strings.Contains(msg, first.Entry.ID) || !strings.Contains(msg, "api-auth") {
		t.Fatalf("a save with a taken key: %q, want a refusal naming the key and %s", msg, first.Entry.ID)
	}
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "auth uses JWT", "key": "api-auth"}, &retry)
	if retry.Entry.ID != first.Entry.ID || retry.Duplicate != "active" {
		t.Fatalf("the same save again: %+v", retry)
	}
	if got := memsyncList(t, env, repo); len(got) != 1 {
		t.Fatalf("stored %d entries, want 1: %+v", len(got), got)
	}
	var got memsync.Entry
	mustCall(t, cs, "get_memory_entry", map[string]any{"key": "api-auth"}, &got)
	if got.ID != first.Entry.ID || got.Content != "auth uses JWT" {
		t.Fatalf("get by key: %+v", got)
	}
	var del mcpserver.DeleteOutput
	mustCall(t, cs, "delete_memory_entry", map[string]any{"key": "api-auth"}, &del)
	if del.Deleted.ID != first.Entry.ID {
		t.Fatalf("delete by key: %+v", del)
	}
	var second mcpserver.SaveOutput
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "auth uses sessions", "key": "api-auth"}, &second)
	mustCall(t, cs, "get_memory_entry", map[string]any{"key": "api-auth"}, &got)
	if got.ID != second.Entry.ID || got.Content != "auth uses sessions" {
		t.Fatalf("get by key after the delete and a new save: %+v", got)
	}
}

// TestMCPRequestsInOrder: requests one client sends without waiting for
// answers are handled in the order sent, as a client that pipelines them
// expects: a get sent right after a save finds what it saved, and the
// answers come back in the order of the requests. The SDK handles calls
// concurrently; the get used to run before the save now and then.
func TestMCPRequestsInOrder(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	r := startRawMCP(t, env, repo)
	r.initialize()
	const rounds = 40
	var batch strings.Builder
	for i := range rounds {
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"save_to_memory","arguments":{"content":"pipelined save %d","key":"k%d"}}}`+"\n", 100+2*i, i, i)
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_memory_entry","arguments":{"key":"k%d"}}}`, 101+2*i, i)
		if i < rounds-1 {
			batch.WriteString("\n")
		}
	}
	r.send(batch.String()) // one write: the server reads them all at once
	for i := range 2 * rounds {
		m := r.next()
		if want := fmt.Sprint(100 + i); string(m.ID) != want {
			t.Fatalf("answer %d has the id %s, want %s (answers out of order)", i, m.ID, want)
		}
		var res struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Content string `json:"content"`
			} `json:"structuredContent"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.IsError {
			t.Fatalf("request %s: %+v %s", m.ID, m.Error, m.Result)
		}
		if i%2 == 1 && res.StructuredContent.Content != fmt.Sprintf("pipelined save %d", i/2) {
			t.Fatalf("get %s sent after its save: %s", m.ID, m.Result)
		}
	}
}

// TestMCPOddRequestIDs: a request whose string id has characters JSON may
// spell two ways (<, > and & are escaped by encoding/json, not by the SDK's
// writer) is answered, and so is every request after it. The server used to
// wait for an answer to "a\u003cb\u003e" while it had written one to
// "a<b>", and answered nothing more.
func TestMCPOddRequestIDs(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	r := startRawMCP(t, env, repo)
	r.initialize()
	ids := []string{`"a<b>&"`, `"\u003c"`, `"é"`, `"\u00e9"`, `"\u2028"`, `"a\/b"`, `""`, `-0`, `1e2`, `"tail"`}
	for _, id := range ids {
		r.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
	}
	for _, id := range ids {
		var m reply
		select {
		case l, ok := <-r.lines:
			if !ok {
				t.Fatal("the server closed its output (exited)")
			}
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("server wrote %q: %v", l, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no answer to the request with id %s", id)
		}
		var got, want any
		if json.Unmarshal(m.ID, &got) != nil || json.Unmarshal([]byte(id), &want) != nil || got != want || m.Error != nil {
			t.Fatalf("the request with id %s: answered %s, %+v", id, m.ID, m.Error)
		}
	}
}

// TestMCPHelpNamesEveryTool: `memsync mcp --help` names every project tool
// the server offers and every one a worker may not call. It used to leave
// out edit_memory_entry and review_memory, and said a worker could edit.
func TestMCPHelpNamesEveryTool(t *testing.T) {
	env := testGitEnv(t)
	help := strings.Join(strings.Fields(memsyncIn(t, env, t.TempDir(), "mcp", "--help")), " ")
	for _, name := range mcpserver.ToolNames() {
		if !strings.Contains(name, "global") && !strings.Contains(help, name) {
			t.Errorf("memsync mcp --help does not name %s", name)
		}
	}
	if !strings.Contains(help, "deletes, edits, restores and supersedes are refused") {
		t.Errorf("memsync mcp --help does not say what a worker may not do:\n%s", help)
	}
}

// TestMCPOneLineFieldsRefuseHiddenCharacters: a key and a caller_agent_id
// are one line of printable text, as a title is: a bidi override, a Unicode
// line separator or a zero-width mark (which a terminal or a viewer acts
// on, and which hide what the value says) is refused, nothing is saved.
// Only C0 and C1 controls used to be refused there.
func TestMCPOneLineFieldsRefuseHiddenCharacters(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	cs := startMCP(t, env, repo)
	for _, v := range []string{"ab\u202ecd", "a\u2028b", "a\u2029b", "x\u2066y", "\u200fx"} {
		for _, arg := range []string{"key", "caller_agent_id"} {
			msg := call(t, cs, "save_to_memory", map[string]any{"content": "a fact saved with a hidden " + arg, arg: v}, nil)
			if !strings.Contains(msg, "control character") || !strings.Contains(msg, arg) {
				t.Errorf("%s %q: %q, want a refusal naming it", arg, v, msg)
			}
		}
	}
	var list struct {
		Total int `json:"total"`
	}
	mustCall(t, cs, "list_memory_entries", nil, &list)
	if list.Total != 0 {
		t.Fatalf("%d entries saved with hidden characters", list.Total)
	}
}
