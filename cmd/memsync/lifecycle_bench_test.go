package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/memfile"
)

// lifecycleFile is a memory of n entries of about 1 KB each.
func lifecycleFile(n int) []byte {
	st := &store.Store{}
	f := &memfile.File{Preamble: memfile.Header + "\n"}
	filler := strings.Repeat("retry the request with backoff when the upstream times out; ", 15)
	for i := range n {
		f.Entries = append(f.Entries, st.NewEntry("pattern", "", fmt.Sprintf("learning %d: %s", i, filler), []string{"bench", fmt.Sprint(i % 7)}))
	}
	return f.Render()
}

// BenchmarkGCProcess: a whole `memsync gc` process over 10k active entries
// (10 MB) that moves 9k of them to the archive (max 1000), side by side with
// one plain atomic rewrite of the same 10 MB (dd with fsync, then mv).
// Target: gc ≤ 2× the rewrite, and under 300 ms.
func BenchmarkGCProcess(b *testing.B) {
	bin := memsyncBinary(b)
	env := append(testGitEnv(b), "MCP_MEMORY_MAX_ENTRIES=1000", "MCP_MEMORY_TTL_DAYS=90")
	repo := newRepo(b, env)
	home := filepath.Join(repo, ".agent")
	file := filepath.Join(home, "memories.md")
	data := lifecycleFile(10_000)
	_ = os.MkdirAll(home, 0o755)
	state := filepath.Join(repo, ".git", "memsync")
	reset := func(b *testing.B) {
		for _, p := range []string{filepath.Join(home, "archive"), state} {
			if err := os.RemoveAll(p); err != nil {
				b.Fatal(err)
			}
		}
		// Synced, so that neither side pays for flushing the setup's writes.
		if err := fsutil.WriteFile(file, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d bytes, 10000 entries", len(data))
	sideBySide(b, []string{"atomic-rewrite", "memsync-gc"}, []func(int) time.Duration{
		func(int) time.Duration {
			reset(b)
			return runProcess(b, env, home, "sh", "-c", "dd if=memories.md of=.memories.md.tmp conv=fsync status=none && mv .memories.md.tmp memories.md")
		},
		func(int) time.Duration {
			reset(b)
			return runProcess(b, env, repo, bin, "gc")
		},
	})
	if arc, err := os.ReadFile(filepath.Join(home, "archive", "memories.md")); err != nil || strings.Count(string(arc), "\n## ") != 9000 {
		b.Fatalf("gc did not archive 9000 entries: %v", err)
	}
}

// BenchmarkShowProcess: a whole `memsync show` process on a memory of 1000
// entries, recording the access (gc's TTL) and with recording turned off
// (MEMSYNC_RECORD_ACCESS=0). Target: ≤ 1.1×.
func BenchmarkShowProcess(b *testing.B) {
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	repo, _ := repoWithMemory(b, env, 330<<10)
	noRecord := append(slices.Clone(env), "MEMSYNC_RECORD_ACCESS=0")
	sideBySide(b, []string{"not-recording", "recording"}, []func(int) time.Duration{
		func(int) time.Duration { return runProcess(b, noRecord, repo, bin, "show", "500") },
		func(int) time.Duration { return runProcess(b, env, repo, bin, "show", "500") },
	})
	if data, err := os.ReadFile(filepath.Join(repo, ".git", "memsync", "state", "access.log")); err != nil || len(data) == 0 {
		b.Fatalf("no access recorded: %v", err)
	}
}
