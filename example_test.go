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

// git runs git for the examples, failing loudly.
func git(dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=ex", "GIT_AUTHOR_EMAIL=ex@memsync.invalid",
		"GIT_COMMITTER_NAME=ex", "GIT_COMMITTER_EMAIL=ex@memsync.invalid")
	if out, err := cmd.CombinedOutput(); err != nil {
		panic(fmt.Sprintf("git %v: %v\n%s", args, err, out))
	}
}

// Snapshot commits the memory onto refs/memsync/snapshots (the git hooks do
// it after each commit); Log and Diff read that history.
func ExampleMemory_Snapshot() {
	dir := newRepo()
	defer func() { _ = os.RemoveAll(dir) }()
	git(dir, "commit", "-q", "--allow-empty", "-m", "init")
	m, _ := memsync.Open(dir, memsync.Options{})
	ctx := context.Background()

	_, _ = m.Add(ctx, memsync.Entry{Content: "Run migrations before the tests"})
	first, _ := m.Snapshot(ctx, memsync.SnapshotOptions{})
	again, _ := m.Snapshot(ctx, memsync.SnapshotOptions{})
	fmt.Println(first.Created, again.Created) // nothing changed: no second snapshot

	_, _ = m.Add(ctx, memsync.Entry{Content: "Seed the cache in CI"})
	d, _ := m.Diff(ctx, "", memsync.LiveRev, memsync.DiffOptions{})
	fmt.Println(len(d.Changes), d.Changes[0].Kind, d.Changes[0].After.Content)
	// Output:
	// true false
	// 1 added Seed the cache in CI
}

// Sync shares the memory between clones through an ordinary git remote:
// what one clone learned reaches the other.
func ExampleMemory_Sync() {
	root, _ := os.MkdirTemp("", "memsync-example-")
	defer func() { _ = os.RemoveAll(root) }()
	git(root, "init", "-q", "--bare", "remote.git")
	for _, c := range []string{"a", "b"} {
		git(root, "clone", "-q", "remote.git", c)
	}
	git(root+"/a", "commit", "-q", "--allow-empty", "-m", "init")
	git(root+"/a", "push", "-q", "origin", "HEAD")
	ctx := context.Background()

	a, _ := memsync.Open(root+"/a", memsync.Options{})
	_, _ = a.Add(ctx, memsync.Entry{Content: "The staging database is read-only on Fridays"})
	if _, err := a.Sync(ctx, "", memsync.SyncOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	b, _ := memsync.Open(root+"/b", memsync.Options{})
	if _, err := b.Sync(ctx, "origin", memsync.SyncOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	got, _ := b.List(ctx, memsync.View{})
	fmt.Println(len(got), got[0].Content)
	// Output:
	// 1 The staging database is read-only on Fridays
}

// Add stores an entry once: the same content again (case and spacing aside)
// is the stored entry, marked as a duplicate.
func ExampleMemory_Add() {
	dir := newRepo()
	defer func() { _ = os.RemoveAll(dir) }()
	m, _ := memsync.Open(dir, memsync.Options{})
	ctx := context.Background()

	e, _ := m.Add(ctx, memsync.Entry{Type: "fix", Tags: []string{"ci"}, Content: "Raise the CI timeout to 600 s"})
	fmt.Println(e.Type, e.Tags, e.Title, e.Duplicate == "")
	again, _ := m.Add(ctx, memsync.Entry{Content: "raise the CI timeout to 600 S"})
	fmt.Println(again.ID == e.ID, again.Duplicate)
	// Output:
	// fix [ci] Raise the CI timeout to 600 s true
	// true active
}

// Search ranks by relevance: identifiers whole and split, word forms folded.
func ExampleMemory_Search() {
	dir := newRepo()
	defer func() { _ = os.RemoveAll(dir) }()
	m, _ := memsync.Open(dir, memsync.Options{})
	ctx := context.Background()
	for _, c := range []string{
		"Set GOMEMLIMIT to 80% of the container's memory",
		"Cache the token for 10 minutes in Redis",
		"Caching: invalidate on every deploy",
	} {
		_, _ = m.Add(ctx, memsync.Entry{Content: c})
	}
	hits, _ := m.Search(ctx, "cached tokens", memsync.SearchOptions{Limit: 2})
	for _, h := range hits {
		fmt.Println(h.Content)
	}
	// Output:
	// Cache the token for 10 minutes in Redis
	// Caching: invalidate on every deploy
}
