package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/embed"
	"github.com/memsync/memsync/internal/embedtest"
)

// BenchmarkSearch1000Process: whole `memsync search` and `memsync inject
// --budget 2000` processes on a memory of 1000 entries, by words alone and
// with a model of the size of potion-base-8M (30,000 tokens, 256 numbers
// each) fused in: warm (the entries' vectors cached) and cold (the cache
// removed first, so the process embeds all 1000 entries), side by side with
// `grep -ci`. Targets: search ≤ 15 ms, inject ≤ 20 ms, the cold search ≤ 1 s.
func BenchmarkSearch1000Process(b *testing.B) {
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	repo, file := repoWithMemory(b, env, 330<<10)
	model := potionSizedModel(b, file)
	withModel := slices.Concat(env, []string{"MEMSYNC_MODEL=" + model})
	cache := filepath.Join(repo, ".git", "memsync", "state", embed.CacheFile)
	const query = "retry timeout"
	sideBySide(b, []string{"grep", "search", "inject", "search-model", "search-model-cold", "inject-model"}, []func(int) time.Duration{
		func(int) time.Duration { return runProcess(b, env, repo, "grep", "-ci", "retry", file) },
		func(int) time.Duration { return runProcess(b, env, repo, bin, "search", query, "--limit", "10") },
		func(int) time.Duration { return runProcess(b, env, repo, bin, "inject", "--budget", "2000", query) },
		func(int) time.Duration {
			return runProcess(b, withModel, repo, bin, "search", query, "--limit", "10")
		},
		func(int) time.Duration {
			if err := os.Remove(cache); err != nil && !errors.Is(err, fs.ErrNotExist) {
				b.Fatal(err)
			}
			return runProcess(b, withModel, repo, bin, "search", query, "--limit", "10")
		},
		func(int) time.Duration {
			return runProcess(b, withModel, repo, bin, "inject", "--budget", "2000", query)
		},
	})
}

// potionSizedModel writes a model of 30,000 tokens of 256 random numbers:
// the words of the memory file, then made-up ones.
func potionSizedModel(b *testing.B, file string) string {
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	seen := map[string]bool{}
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(string(data)), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if !seen[w] && len(words) < 30000 {
			seen[w] = true
			words = append(words, w)
		}
	}
	for i := 0; len(words) < 30000; i++ {
		words = append(words, fmt.Sprintf("tok%d", i))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	vecs := make([][]float32, len(words))
	for i := range vecs {
		vecs[i] = make([]float32, 256)
		for k := range vecs[i] {
			vecs[i][k] = float32(rng.NormFloat64())
		}
	}
	dir := b.TempDir()
	if err := embedtest.WriteModel(dir, words, vecs); err != nil {
		b.Fatal(err)
	}
	return dir
}
