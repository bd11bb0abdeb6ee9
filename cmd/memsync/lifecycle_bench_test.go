package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/memfile"
)

// lifecycleFile is a memory of n entries of about 1 KB each.
func lifecycleFile(n int) []byte {
	st := &memfile.Store{}
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
		b.StopTimer()
		for _, p := range []string{filepath.Join(home, "archive"), state} {
			if err := os.RemoveAll(p); err != nil {
				b.Fatal(err)
			}
		}
		// Synced, so that neither side pays for flushing the setup's writes.
		if err := fsutil.WriteFile(file, data, 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.Logf("%d bytes, 10000 entries", len(data))
	b.Run("memsync-gc", func(b *testing.B) {
		for range b.N {
			reset(b)
			cmd := exec.Command(bin, "gc")
			cmd.Dir, cmd.Env = repo, env
			out, err := cmd.CombinedOutput()
			if err != nil || strings.Count(string(out), "archived ") != 9000 {
				b.Fatalf("gc: %v\n%.300s", err, out)
			}
		}
	})
	b.Run("atomic-rewrite", func(b *testing.B) {
		for range b.N {
			reset(b)
			cmd := exec.Command("sh", "-c", "dd if=memories.md of=.memories.md.tmp conv=fsync status=none && mv .memories.md.tmp memories.md")
			cmd.Dir, cmd.Env = home, env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("rewrite: %v\n%s", err, out)
			}
		}
	})
}

// BenchmarkShowProcess: a whole `memsync show` process on a memory of 1000
// entries, recording the access (gc's TTL) and with recording turned off
// (MEMSYNC_RECORD_ACCESS=0). Target: ≤ 1.1×.
func BenchmarkShowProcess(b *testing.B) {
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	repo := newRepo(b, env)
	file := filepath.Join(repo, ".agent", "memories.md")
	_ = os.MkdirAll(filepath.Dir(file), 0o755)
	if err := os.WriteFile(file, memfile.GenerateFile(330<<10, 2), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("recording", func(b *testing.B) {
		benchProcess(b, env, repo, bin, "show", "500")
	})
	b.Run("not-recording", func(b *testing.B) {
		benchProcess(b, append(env, "MEMSYNC_RECORD_ACCESS=0"), repo, bin, "show", "500")
	})
	if data, err := os.ReadFile(filepath.Join(repo, ".git", "memsync", "state", "access.log")); err != nil || len(data) == 0 {
		b.Fatalf("no access recorded: %v", err)
	}
}
