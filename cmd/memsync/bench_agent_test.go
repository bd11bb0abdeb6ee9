package main

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkInjectProcess: a whole `memsync inject --budget 2000` process over
// a memory of 30,000 entries (12 MB) side by side with `grep -ci` on the same
// file, with a short prompt and with a paragraph (the prompt is the
// relevance query). Target: ratio ≤ 3.
func BenchmarkInjectProcess(b *testing.B) {
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	repo, file := repoWithMemory(b, env, size30k)
	sideBySide(b, []string{"grep", "inject", "inject-long-prompt"}, []func(int) time.Duration{
		func(int) time.Duration { return runProcess(b, env, repo, "grep", "-ci", "retry", file) },
		func(int) time.Duration {
			return runProcess(b, env, repo, bin, "inject", "--budget", "2000", "Why does the retry loop time out when the cache is cold?")
		},
		func(int) time.Duration {
			return runProcess(b, env, repo, bin, "inject", "--budget", "2000", longPrompt)
		},
	})
}

// longPrompt is a task as a loop engine would write it.
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
	repo, _ := repoWithMemory(b, env, 330<<10)
	cs := startMCP(b, env, repo)
	params := &mcp.CallToolParams{Name: "retrieve_from_memory", Arguments: map[string]any{"query": "retry timeout", "limit": 10}}
	sideBySide(b, []string{"search-process", "mcp"}, []func(int) time.Duration{
		func(int) time.Duration {
			return runProcess(b, env, repo, bin, "search", "retry timeout", "--limit", "10")
		},
		func(int) time.Duration {
			start := time.Now()
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.IsError {
				b.Fatalf("retrieve: %v %+v", err, res)
			}
			return time.Since(start)
		},
	})
}
