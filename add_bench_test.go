package memsync

import (
	"context"
	"fmt"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
)

// BenchmarkMemoryAdd is one Add through the Go API into a repository's
// memory on a branch with a commit: what every front door pays per entry
// (the process start of the CLI aside).
func BenchmarkMemoryAdd(b *testing.B) {
	dir := testgit.Isolate(b)
	testgit.Git(b, dir, "init", "-q", "-b", "main")
	testgit.Git(b, dir, "commit", "-q", "--allow-empty", "-m", "one")
	m, err := Open(dir, Options{NoAccessLog: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		if _, err := m.Add(ctx, Entry{Type: "solution", Tags: []string{"ci"}, Content: fmt.Sprintf("Raise the CI timeout to %d seconds", i)}); err != nil {
			b.Fatal(err)
		}
	}
}
