package memsync

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// BenchmarkAgentContext is the work of one 'memsync context' hook (the
// process start aside) on a memory of 1,000 and of 30,000 generated
// entries: a prompt of a new session, and a session's start. The search
// index is built before the timer starts, as the first read after a write
// builds it.
func BenchmarkAgentContext(b *testing.B) {
	for _, n := range []int{1000, 30000} {
		dir := benchContextRepo(b, n)
		for _, ev := range []string{
			`{"session_id":"s%d","hook_event_name":"UserPromptSubmit","prompt":"Why does the retry loop time out when the cache is cold?"}`,
			`{"session_id":"s%d","hook_event_name":"SessionStart","source":"startup"}`,
		} {
			name := "prompt"
			if strings.Contains(ev, "SessionStart") {
				name = "start"
			}
			b.Run(fmt.Sprintf("entries=%d/%s", n, name), func(b *testing.B) {
				i := 0
				for b.Loop() {
					i++
					out, err := AgentContext(context.Background(), "claude", strings.NewReader(fmt.Sprintf(ev, i)), ContextOptions{Dir: dir, Timeout: time.Minute})
					if err != nil || len(out) == 0 {
						b.Fatalf("%s: %v", out, err)
					}
				}
			})
		}
	}
}

// benchContextRepo is a repository whose memory holds n generated entries.
func benchContextRepo(b *testing.B, n int) string {
	dir := testgit.Isolate(b)
	testgit.Git(b, dir, "init", "-q")
	m, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Add(context.Background(), Entry{Content: "make the layout"}); err != nil {
		b.Fatal(err)
	}
	path, err := m.store.Resolve(m.store.Path())
	if err != nil {
		b.Fatal(err)
	}
	data := memfile.GenerateFile(n*411, 1) // about 411 bytes an entry
	if got := len(memfile.Parse(data).Entries); got < n*9/10 || got > n*11/10 {
		b.Fatalf("generated %d entries, want about %d", got, n)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	if _, err := m.Search(context.Background(), "warm", SearchOptions{Limit: 1}); err != nil { // builds the index
		b.Fatal(err)
	}
	return dir
}
