package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/internal/embedtest"
)

// TestFrontDoorsAgree drives one repository through the three front doors —
// the CLI (--json, real processes), the MCP server (a real `memsync mcp`)
// and the Go API (memsync.Open in this process) — and checks that they
// store and show the same entries, find each other's duplicates, leave git
// status clean, and keep the global layer's files private.
func TestFrontDoorsAgree(t *testing.T) {
	env := testGitEnv(t)
	global := filepath.Join(t.TempDir(), "global")
	env = append(env, "MEMSYNC_GLOBAL_DIR="+global)
	t.Setenv("MEMSYNC_GLOBAL_DIR", global)
	repo := newRepo(t, env)
	ctx := context.Background()

	cliJSON := func(out any, args ...string) {
		t.Helper()
		if err := json.Unmarshal([]byte(memsyncIn(t, env, repo, append(args, "--json")...)), out); err != nil {
			t.Fatalf("memsync %v: %v", args, err)
		}
	}
	cs := startMCP(t, env, repo)
	m, err := memsync.Open(repo, memsync.Options{})
	if err != nil {
		t.Fatal(err)
	}

	// One entry through each door.
	var byCLI memsync.Entry
	cliJSON(&byCLI, "add", "Alpha: pool at most 10 connections", "-t", "pattern", "--tags", "db,pool")
	var saved struct {
		Entry     memsync.Entry `json:"entry"`
		Duplicate string        `json:"duplicate"`
	}
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "Beta: retry twice on 503", "type": "fix", "tags": []string{"http"}}, &saved)
	byMCP := saved.Entry
	byGo, err := m.Add(ctx, memsync.Entry{Type: "decision", Tags: []string{"ci"}, Content: "Gamma: CI timeout is 600 s"})
	if err != nil {
		t.Fatal(err)
	}

	// Each door finds the others' content as a duplicate, the same way.
	var dup memsync.Entry
	cliJSON(&dup, "add", "  gamma: ci TIMEOUT is 600 s")
	if dup.ID != byGo.ID || dup.Duplicate != "active" {
		t.Fatalf("CLI duplicate of the Go entry: %+v", dup)
	}
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "alpha: POOL at most 10 connections"}, &saved)
	if saved.Entry.ID != byCLI.ID || saved.Duplicate != "active" {
		t.Fatalf("MCP duplicate of the CLI entry: %+v", saved)
	}
	if d, err := m.Add(ctx, memsync.Entry{Content: "beta: retry twice on 503"}); err != nil || d.ID != byMCP.ID || d.Duplicate != "active" {
		t.Fatalf("Go duplicate of the MCP entry: %+v %v", d, err)
	}

	// The three doors list the same three entries, field for field.
	var fromCLI []memsync.Entry
	cliJSON(&fromCLI, "list")
	var listed struct {
		Entries []memsync.Entry `json:"entries"`
	}
	mustCall(t, cs, "list_memory_entries", map[string]any{}, &listed)
	fromMCP := listed.Entries
	slices.Reverse(fromMCP) // newest first there
	fromGo, err := m.List(ctx, memsync.View{})
	if err != nil {
		t.Fatal(err)
	}
	norm := func(es []memsync.Entry) string {
		b, _ := json.Marshal(es)
		return string(b)
	}
	if len(fromGo) != 3 || norm(fromCLI) != norm(fromGo) || norm(fromMCP) != norm(fromGo) {
		t.Fatalf("the doors disagree:\nCLI %s\nMCP %s\nGo  %s", norm(fromCLI), norm(fromMCP), norm(fromGo))
	}
	for i, want := range []string{byCLI.ID, byMCP.ID, byGo.ID} {
		if fromGo[i].ID != want {
			t.Fatalf("entry %d is %s, want %s", i+1, fromGo[i].ID, want)
		}
	}

	// Found by each door's search, with the same entry.
	var hits []memsync.Entry
	cliJSON(&hits, "search", "retry 503")
	var found struct {
		Entries []memsync.Entry `json:"entries"`
	}
	mustCall(t, cs, "retrieve_from_memory", map[string]any{"query": "retry 503"}, &found)
	goHits, err := m.Search(ctx, "retry 503", memsync.SearchOptions{Limit: 5})
	if err != nil || len(hits) == 0 || len(found.Entries) == 0 || len(goHits) == 0 ||
		hits[0].ID != byMCP.ID || found.Entries[0].ID != byMCP.ID || goHits[0].ID != byMCP.ID {
		t.Fatalf("search: CLI %+v MCP %+v Go %+v %v", hits, found.Entries, goHits, err)
	}

	if st := gitRun(t, env, repo, "status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Fatalf("git status not clean:\n%s", st)
	}

	// The global layer through each door: private files.
	memsyncIn(t, env, repo, "--global", "add", "global by the CLI")
	mustCall(t, cs, "save_to_global_memory", map[string]any{"content": "global by MCP"}, nil)
	g, err := memsync.Open("", memsync.Options{Global: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Add(ctx, memsync.Entry{Content: "global by Go"}); err != nil {
		t.Fatal(err)
	}
	all, err := g.List(ctx, memsync.View{})
	if err != nil || len(all) != 3 {
		t.Fatalf("global: %d entries, %v", len(all), err)
	}
	for path, want := range map[string]os.FileMode{global: 0o700, g.Path(): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: mode %v (%v), want %v", path, fi.Mode().Perm(), err, want)
		}
	}
}

// TestFrontDoorsAgreeOnMeaning: with a model (MEMSYNC_MODEL), the CLI's
// search and inject, MCP's retrieve and the Go API rank alike, and find a
// memory by meaning when no word of the query is in it.
func TestFrontDoorsAgreeOnMeaning(t *testing.T) {
	model := t.TempDir()
	if err := embedtest.WriteModel(model,
		[]string{"ram", "memory", "limit", "theme", "dark", "css", "retry", "http"},
		[][]float32{{1, 0, 0}, {0.9, 0.1, 0}, {0.7, 0, 0.3}, {0, 1, 0}, {0, 0.9, 0.1}, {0.1, 1, 0}, {0, 0, 1}, {0, 0.1, 1}},
	); err != nil {
		t.Fatal(err)
	}
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+filepath.Join(t.TempDir(), "global"))
	repo := newRepo(t, env)
	ctx := context.Background()
	// The Go API's adds name the author testGitEnv names (the entries'
	// sizes, which the inject budget below counts, do not depend on the machine).
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@memsync.invalid")
	m, err := memsync.Open(repo, memsync.Options{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	var want memsync.Entry
	for _, c := range []string{
		"Dispatcher pods hit the memory limit at peak",
		"Theme colors are CSS custom properties; dark mode follows the system",
		"Retry twice on HTTP 503 from the pricing service",
	} {
		e, err := m.Add(ctx, memsync.Entry{Content: c})
		if err != nil {
			t.Fatal(err)
		}
		if want.ID == "" {
			want = e
		}
	}
	env = append(env, "MEMSYNC_MODEL="+model)
	var cli []memsync.Entry
	if err := json.Unmarshal([]byte(memsyncIn(t, env, repo, "search", "ram", "--json")), &cli); err != nil {
		t.Fatal(err)
	}
	var found struct {
		Entries []memsync.Entry `json:"entries"`
	}
	mustCall(t, startMCP(t, env, repo), "retrieve_from_memory", map[string]any{"query": "ram"}, &found)
	goHits, err := m.Search(ctx, "ram", memsync.SearchOptions{})
	if err != nil || len(cli) == 0 || len(found.Entries) == 0 || len(goHits) == 0 ||
		cli[0].ID != want.ID || found.Entries[0].ID != want.ID || goHits[0].ID != want.ID {
		t.Fatalf("search ram, want %s first: CLI %+v MCP %+v Go %+v %v", want.ID, cli, found.Entries, goHits, err)
	}
	if out := memsyncIn(t, env, repo, "inject", "--budget", "120", "ram"); !strings.Contains(out, want.Content) {
		t.Fatalf("inject ram: want %q in\n%s", want.Content, out)
	}
	if st := gitRun(t, env, repo, "status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Fatalf("git status not clean:\n%s", st)
	}
}
