package memsync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/internal/testgit"
)

// Inject picks the memory relevant to the prompt when the budget has room
// for one entry, puts it before the task, and says what it left out.
func TestInjectBudget(t *testing.T) {
	dir := testgit.Isolate(t)
	testgit.Git(t, dir, "init", "-q")
	m, err := memsync.Open(dir, memsync.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []string{
		"The CSS build uses tailwind with a custom palette of twelve colours",
		"Database migrations: run make migrate before the integration tests",
		"Release notes are written in CHANGELOG.md under Unreleased",
	} {
		if _, err := m.Add(ctx, memsync.Entry{Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	budget := 150 // tokens (about 4 bytes each): room for one entry
	res, err := m.Inject(ctx, "fix the failing database migrations\n", memsync.InjectOptions{Budget: &budget})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 1 || !strings.Contains(res.Entries[0].Content, "make migrate") {
		t.Fatalf("chose %+v", res.Entries)
	}
	if res.Omitted != 2 || res.Mode != "auto" || res.Budget != budget || strings.Count(res.Memories, "\n[") != 1 {
		t.Fatalf("Inject = %+v", res)
	}
	if !strings.HasPrefix(res.Output, "# Memories") || !strings.HasSuffix(res.Output, "fix the failing database migrations\n") || !strings.Contains(res.Output, "make migrate") {
		t.Fatalf("output: %q", res.Output)
	}

	none, err := m.Inject(ctx, "task\n", memsync.InjectOptions{Mode: "none"})
	if err != nil || none.Output != "task\n" || len(none.Entries) != 0 {
		t.Fatalf("mode none: %+v, %v", none, err)
	}
	if _, err := m.Inject(ctx, "task\n", memsync.InjectOptions{Mode: "sometimes"}); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
}

// Inject the memories relevant to an agent's task into its prompt, within
// a budget of tokens (the configuration's by default: orch.yml's memories
// block, .agent/memsync.yml, MEMSYNC_BUDGET).
func ExampleMemory_Inject() {
	dir := newRepo()
	defer func() { _ = os.RemoveAll(dir) }()
	m, _ := memsync.Open(dir, memsync.Options{})
	ctx := context.Background()
	_, _ = m.Add(ctx, memsync.Entry{Type: "fix", Content: "Flaky login test: wait for the session cookie"})
	_, _ = m.Add(ctx, memsync.Entry{Content: "Docs are built with mkdocs"})

	budget := 140 // tokens (about 4 bytes each): room for one of them
	res, _ := m.Inject(ctx, "the login test fails again\n", memsync.InjectOptions{Budget: &budget})
	fmt.Println(len(res.Entries), res.Entries[0].Content, res.Omitted)
	fmt.Printf("%q\n", res.Output[strings.LastIndex(res.Output, "---"):])
	// Output:
	// 1 Flaky login test: wait for the session cookie 1
	// "---\n\n# Task\n\nthe login test fails again\n"
}

// Inject ranks the global layer's entries with the project's under one
// budget, marks them "(global)" with Layer "global", never creates the
// global folder, leaves the layer out with NoGlobal, and takes an entry
// the project has (same ID) once.
func TestInjectGlobalLayer(t *testing.T) {
	dir := testgit.Isolate(t)
	home := filepath.Join(t.TempDir(), "global")
	t.Setenv("MEMSYNC_GLOBAL_DIR", home)
	testgit.Git(t, dir, "init", "-q")
	m, err := memsync.Open(dir, memsync.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	add := func(m *memsync.Memory, content string) string {
		t.Helper()
		e, err := m.Add(ctx, memsync.Entry{Content: content})
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	migrate := add(m, "Integration tests: run make migrate before them")
	css := add(m, "The CSS build uses tailwind with a custom palette of twelve colours")
	const task = "the integration tests fail\n"

	res, err := m.Inject(ctx, task, memsync.InjectOptions{})
	if err != nil || len(res.Entries) != 2 {
		t.Fatalf("no global layer: %+v, %v", res.Entries, err)
	}
	for _, e := range res.Entries {
		if e.Layer != "project" {
			t.Errorf("%s: layer %q, want project", e.ID, e.Layer)
		}
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Fatalf("Inject made the global folder: %v", err)
	}

	g, err := memsync.Open("", memsync.Options{Global: true})
	if err != nil {
		t.Fatal(err)
	}
	docker := add(g, "Integration tests of every repository need docker running")
	res, err = m.Inject(ctx, task, memsync.InjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Entries {
		got = append(got, e.ID+" "+e.Layer)
	}
	// Ranked together: both about integration tests before the CSS note.
	if len(got) != 3 || got[2] != css+" project" || !slices.Contains(got, migrate+" project") || !slices.Contains(got, docker+" global") {
		t.Fatalf("entries %v, want %s and %s (global) before %s", got, migrate, docker, css)
	}
	if !strings.Contains(res.Memories, "\n["+docker+"] (global) ") || strings.Contains(res.Memories, "["+migrate+"] (global)") {
		t.Fatalf("marks:\n%s", res.Memories)
	}
	js, err := json.Marshal(res.Entries)
	if err != nil || !strings.Contains(string(js), `"id":"`+docker+`"`) || !strings.Contains(string(js), `"layer":"global"`) {
		t.Fatalf("JSON %s, %v", js, err)
	}

	// One budget for both layers: the block never exceeds it.
	for budget := 60; budget <= 400; budget += 20 {
		res, err := m.Inject(ctx, task, memsync.InjectOptions{Budget: &budget})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(res.Output) - len(task); n > budget*4 {
			t.Fatalf("budget %d tokens: %d bytes of memory", budget, n)
		}
		if len(res.Entries)+res.Omitted != 3 {
			t.Fatalf("budget %d: %d chosen + %d omitted, want 3", budget, len(res.Entries), res.Omitted)
		}
	}

	res, err = m.Inject(ctx, task, memsync.InjectOptions{NoGlobal: true})
	if err != nil || len(res.Entries) != 2 || strings.Contains(res.Memories, docker) {
		t.Fatalf("NoGlobal: %+v, %v", res.Entries, err)
	}

	// Promoted, then restored: the same ID in both layers goes in once.
	if _, err := m.Promote(ctx, migrate); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Restore(ctx, migrate); err != nil {
		t.Fatal(err)
	}
	res, err = m.Inject(ctx, task, memsync.InjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(res.Memories, "["+migrate+"]"); n != 1 || len(res.Entries) != 3 {
		t.Fatalf("%s in the block %d times, %d entries:\n%s", migrate, n, len(res.Entries), res.Memories)
	}
}
