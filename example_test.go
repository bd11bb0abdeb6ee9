package memsync_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/memsync/memsync"
)

// newRepo makes a throwaway git repository for the examples.
func newRepo() string {
	dir, _ := os.MkdirTemp("", "memsync-example-")
	_ = exec.Command("git", "init", "-q", dir).Run()
	return dir
}

// Open the memory of the repository that holds a folder, add to it and
// search it: the same file, lock and rules as the memsync command.
func ExampleOpen() {
	dir := newRepo()
	defer func() { _ = os.RemoveAll(dir) }()

	m, err := memsync.Open(dir, memsync.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = m.Close() }()
	ctx := context.Background()

	e, _ := m.Add(ctx, memsync.Entry{Type: "pattern", Tags: []string{"db"}, Content: "Use a connection pool of at most 10 (max_conns)"})
	again, _ := m.Add(ctx, memsync.Entry{Content: "use a connection pool of at most 10 (MAX_CONNS)"})
	fmt.Println(again.ID == e.ID, again.Duplicate)

	hits, _ := m.Search(ctx, "max_conns", memsync.SearchOptions{Limit: 5})
	fmt.Println(len(hits), hits[0].Title, hits[0].Tags)
	// Output:
	// true active
	// 1 Use a connection pool of at most 10 (max_conns) [db]
}

// Entries are named by number, full ID, key or unique ID prefix; Delete
// removes them for good (Archive would keep them).
func ExampleMemory_Delete() {
	dir := newRepo()
	defer func() { _ = os.RemoveAll(dir) }()
	m, _ := memsync.Open(dir, memsync.Options{})
	ctx := context.Background()

	_, _ = m.Add(ctx, memsync.Entry{Content: "first", Fields: map[string]string{"Key": "one"}})
	_, _ = m.Add(ctx, memsync.Entry{Content: "second"})
	got, _ := m.Get(ctx, memsync.View{}, "one", "2")
	fmt.Println(got[0].Content, got[1].Content)

	_, _ = m.Delete(ctx, "one")
	all, _ := m.List(ctx, memsync.View{})
	fmt.Println(len(all), all[0].Content, all[0].Number)
	// Output:
	// first second
	// 1 second 1
}
