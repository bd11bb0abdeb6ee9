package memory_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/memory"
)

// mapStore is a custom backend, as in seed 002's example: memories in a map,
// found by substring. A database or a vector store plugs in the same way.
type mapStore struct {
	mu    sync.Mutex
	order []string
	byID  map[string]memory.Entry
}

func (s *mapStore) Record(_ context.Context, items []memory.Item) ([]memory.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = map[string]memory.Entry{}
	}
	var out []memory.Entry
	for _, it := range items {
		id := uuid.Must(uuid.NewV7())
		m := memory.Entry{ID: id.String(), Content: it.Text(), Source: it.Source}
		s.byID[m.ID] = m
		s.order = append(s.order, m.ID)
		out = append(out, m)
	}
	return out, nil
}

func (s *mapStore) Retrieve(_ context.Context, q memory.Query) ([]memory.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []memory.Entry
	for i := len(s.order) - 1; i >= 0 && len(out) < q.Limit; i-- {
		if m := s.byID[s.order[i]]; strings.Contains(m.Content, q.Search) {
			out = append(out, m)
		}
	}
	return out, nil
}

// A Agent over a custom in-memory Recorder and Retriever.
func ExampleAgent() {
	ctx := context.Background()
	store := &mapStore{}
	agent := &memory.Agent{Recorder: store, Retriever: store, Source: "example"}

	recorded, _ := agent.Record(ctx, memory.Item{Input: "What is the capital of France?", Output: "Paris"})
	fmt.Println("recorded a uuidv7:", uuid.MustParse(recorded[0].ID).Version() == 7)

	found, _ := agent.Retrieve(ctx, memory.Query{Search: "France", Limit: 5})
	for _, m := range found {
		fmt.Printf("%s (from %s)\n", m.Content, m.Source)
	}
	// Output:
	// recorded a uuidv7: true
	// Input: What is the capital of France?
	// Output: Paris (from example)
}

// AutoUpdate records every operation run through Invoke; a subscribed agent
// records what is published on its topics.
func ExampleAgent_Subscribe() {
	ctx := context.Background()
	store := &mapStore{}
	agent := &memory.Agent{Recorder: store, Retriever: store, AutoUpdate: true, SubscribeTopics: []string{"lessons"}}

	_, _ = agent.Invoke(ctx, "2+2?", func(context.Context, string) (string, error) { return "4", nil })

	var bus memory.Bus
	stop := agent.Subscribe(&bus)
	bus.Publish(ctx, "lessons", memory.Item{Output: "Run the linter before committing", Source: "reviewer"})
	bus.Publish(ctx, "chatter", memory.Item{Output: "not recorded"})
	stop()
	bus.Publish(ctx, "lessons", memory.Item{Output: "not recorded either"})

	all, _ := agent.Retrieve(ctx, memory.Query{Limit: 10})
	for _, m := range all {
		fmt.Printf("%q\n", m.Content)
	}
	// Output:
	// "Run the linter before committing"
	// "Input: 2+2?\nOutput: 4"
}

// The default store: the repository's .agent/memories.md, through the same
// interfaces.
func ExampleFileStore() {
	home, _ := os.MkdirTemp("", "memsync-example-")
	defer func() { _ = os.RemoveAll(home) }()
	// The global layer here; memory.OpenRepo(dir) opens a repository's.
	_ = os.Setenv("MEMSYNC_GLOBAL_DIR", home)
	m, err := memsync.Open("", memsync.Options{Global: true})
	if err != nil {
		fmt.Println(err)
		return
	}

	var store interface {
		memory.Recorder
		memory.Retriever
	} = &memory.FileStore{Memory: m, Tags: []string{"demo"}}
	agent := &memory.Agent{Recorder: store, Retriever: store, Source: "loop-1"}

	ctx := context.Background()
	_, _ = agent.Record(ctx,
		memory.Item{Input: "Why do integration tests time out on CI?", Output: "The CI timeout is 300 s; raise it to 600 s"},
		memory.Item{Output: "Prefer table-driven tests"})
	found, _ := agent.Retrieve(ctx, memory.Query{Search: "CI timeout", Limit: 1})
	fmt.Println(found[0].Title, "|", found[0].Source, "|", found[0].Tags)

	data, _ := os.ReadFile(home + "/memories.md")
	fmt.Println(strings.Contains(string(data), "- Source: loop-1"))
	// Output:
	// Why do integration tests time out on CI? | loop-1 | [demo]
	// true
}
