package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync/memfile"
)

// BenchmarkInjectProcess: a whole `memsync inject --budget 2000` process over
// a 10 MB memory side by side with `grep -ci` on the same file. Target: ratio
// ≤ 4 and under 200 ms.
func BenchmarkInjectProcess(b *testing.B) {
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	repo := newRepo(b, env)
	file := filepath.Join(repo, ".agent", "memories.md")
	_ = os.MkdirAll(filepath.Dir(file), 0o755)
	if err := os.WriteFile(file, memfile.GenerateFile(10<<20, 1), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("memsync", func(b *testing.B) {
		benchProcess(b, env, repo, bin, "inject", "--budget", "2000", "Why does the retry loop time out when the cache is cold?")
	})
	b.Run("memsync-long-prompt", func(b *testing.B) {
		benchProcess(b, env, repo, bin, "inject", "--budget", "2000", longPrompt)
	})
	b.Run("grep", func(b *testing.B) {
		benchProcess(b, env, repo, "grep", "-ci", "retry", file)
	})
}

// longPrompt is a task as a loop engine would write it (the query of inject
// by default).
const longPrompt = `You are working on the payments service. The integration tests for the refund
endpoint fail intermittently on CI with a timeout after the database migration ran. Investigate the retry
logic in the HTTP client, the connection pool settings of postgres, the cache warmup in the worker, and the
feature flag useFeatureFlag that gates the new refund flow. Write a fix, add regression tests, update the
changelog, keep the public API stable, and explain the root cause in the pull request description.`

// BenchmarkMCPRetrieve: one retrieve_from_memory round trip over stdio to a
// running `memsync mcp` on a 1000-entry memory, side by side with a whole
// `memsync search` process on the same data. Target ratio ≤ 0.5.
func BenchmarkMCPRetrieve(b *testing.B) {
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	repo := newRepo(b, env)
	file := filepath.Join(repo, ".agent", "memories.md")
	_ = os.MkdirAll(filepath.Dir(file), 0o755)
	if err := os.WriteFile(file, memfile.GenerateFile(330<<10, 2), 0o644); err != nil {
		b.Fatal(err)
	}
	f, _ := memfile.Open(filepath.Dir(file)).Load()
	b.Logf("%d entries", len(f.Entries))
	b.Run("mcp", func(b *testing.B) {
		cs := startMCP(b, env, repo)
		params := &mcp.CallToolParams{Name: "retrieve_from_memory", Arguments: map[string]any{"query": "retry timeout", "limit": 10}}
		b.ResetTimer()
		for range b.N {
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.IsError {
				b.Fatalf("retrieve: %v %+v", err, res)
			}
		}
	})
	b.Run("search-process", func(b *testing.B) {
		benchProcess(b, env, repo, bin, "search", "retry timeout", "--limit", "10")
	})
}
