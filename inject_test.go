package memsync_test

import (
	"context"
	"fmt"
	"os"
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
