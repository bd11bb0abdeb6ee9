package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

// counting wraps an Embedder and counts the texts it embeds.
type counting struct {
	Embedder
	texts atomic.Int64
}

func (c *counting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

// fill asks the cache for texts and returns how many were embedded.
func fill(t *testing.T, c *Cache, e *counting, texts ...string) int {
	t.Helper()
	before := e.texts.Load()
	got, err := c.Vectors(context.Background(), e, texts)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := e.Embedder.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, direct) {
		t.Fatalf("cached vectors differ from computed ones")
	}
	return int(e.texts.Load() - before)
}

func tinyModel(t *testing.T) *counting {
	m, err := LoadModel2Vec(writeTinyModel(t, modelOpts{dtype: "F32", weights: true}))
	if err != nil {
		t.Fatal(err)
	}
	return &counting{Embedder: m}
}

func TestCacheComputesOnlyMissing(t *testing.T) {
	e := tinyModel(t)
	c := NewCache(filepath.Join(t.TempDir(), "state"))
	if n := fill(t, c, e, "push notification", "dark mode", "cache test", "dark mode"); n != 3 {
		t.Fatalf("first fill embedded %d texts, want 3 (one is a duplicate)", n)
	}
	if n := fill(t, c, e, "cache test", "push notification", "dark mode"); n != 0 {
		t.Fatalf("warm lookup embedded %d texts", n)
	}
	if n := fill(t, c, e, "cache test", "theme color", "dark mode"); n != 1 {
		t.Fatalf("one new text: embedded %d", n)
	}
	// That rewrite dropped "push notification", no longer asked for.
	if n := fill(t, c, e, "push notification", "cache test", "theme color", "dark mode"); n != 1 {
		t.Fatalf("dropped text: embedded %d, want 1", n)
	}
	// A new cache on the same dir (another process) reads the file.
	if n := fill(t, NewCache(filepath.Dir(c.path)), e, "theme color", "push notification"); n != 0 {
		t.Fatalf("cache reopened: embedded %d", n)
	}
}

func TestCacheRebuildsCorruptFile(t *testing.T) {
	e := tinyModel(t)
	dir := t.TempDir()
	c := NewCache(dir)
	texts := []string{"push notification", "dark mode", "cache test"}
	fill(t, c, e, texts...)
	good, err := os.ReadFile(c.path)
	if err != nil {
		t.Fatal(err)
	}
	flip := append([]byte(nil), good...)
	flip[len(flip)/2] ^= 1
	for name, b := range map[string][]byte{
		"flipped bit": flip,
		"truncated":   good[:len(good)-7],
		"empty":       nil,
		"garbage":     []byte("memsync-vectors 1\n\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"),
	} {
		if err := os.WriteFile(c.path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if n := fill(t, c, e, texts...); n != 3 {
			t.Fatalf("%s: embedded %d texts, want all 3", name, n)
		}
		if n := fill(t, c, e, texts...); n != 0 {
			t.Fatalf("%s: the rebuilt file did not serve: embedded %d", name, n)
		}
	}
}

func TestCacheModelChangeInvalidates(t *testing.T) {
	dir := writeTinyModel(t, modelOpts{dtype: "F32"})
	state := t.TempDir()
	c := NewCache(state)
	m1, err := LoadModel2Vec(dir)
	if err != nil {
		t.Fatal(err)
	}
	e1 := &counting{Embedder: m1}
	fill(t, c, e1, "push notification", "dark mode")
	// The same model loaded again: same fingerprint, all hits.
	m2, _ := LoadModel2Vec(dir)
	if n := fill(t, c, &counting{Embedder: m2}, "push notification", "dark mode"); n != 0 || m2.Name() != m1.Name() {
		t.Fatalf("same model: embedded %d, names %s %s", n, m1.Name(), m2.Name())
	}
	// config.json changes: a new fingerprint, all recomputed.
	writeJSON(t, filepath.Join(dir, ConfigFile), map[string]any{"model_type": "model2vec", "normalize": false})
	m3, err := LoadModel2Vec(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m3.Name() == m1.Name() {
		t.Fatalf("fingerprint unchanged: %s", m3.Name())
	}
	if n := fill(t, c, &counting{Embedder: m3}, "push notification", "dark mode"); n != 2 {
		t.Fatalf("changed model: embedded %d, want 2", n)
	}
}

// TestCacheTwoProcesses has two real processes fill one cache at once, each
// with its own texts (30 and 31 of them), many times; the file left must
// be whole.
func TestCacheTwoProcesses(t *testing.T) {
	if os.Getenv("EMBED_CACHE_CHILD") != "" {
		return
	}
	model := writeTinyModel(t, modelOpts{dtype: "F16"})
	state := t.TempDir()
	var cmds []*exec.Cmd
	for i := 0; i < 2; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCacheChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "EMBED_CACHE_CHILD="+fmt.Sprint(i), "EMBED_MODEL="+model, "EMBED_STATE="+state)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() { t.Log(out.String()) })
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	m, err := LoadModel2Vec(model)
	if err != nil {
		t.Fatal(err)
	}
	got := NewCache(state).load(m.Name(), m.Dim())
	if len(got) != 30 && len(got) != 31 {
		t.Fatalf("cache file holds %d vectors, want the 30 or 31 of the last writer", len(got))
	}
}

// TestCacheChild is one process of TestCacheTwoProcesses.
func TestCacheChild(t *testing.T) {
	who := os.Getenv("EMBED_CACHE_CHILD")
	if who == "" {
		t.Skip("run by TestCacheTwoProcesses")
	}
	m, err := LoadModel2Vec(os.Getenv("EMBED_MODEL"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache(os.Getenv("EMBED_STATE"))
	n := 30 // and 31 for the other process: files of two sizes
	if who == "1" {
		n = 31
	}
	for round := 0; round < 100; round++ {
		var texts []string
		for i := 0; i < n; i++ { // new texts every round: every call rewrites
			texts = append(texts, fmt.Sprintf("cache test %s %d %d", who, round, i))
		}
		v, err := c.Vectors(context.Background(), m, texts)
		if err != nil || len(v) != n {
			t.Fatal(err, len(v))
		}
	}
}

// benchModel writes a potion-sized model: 30k word pieces, dim 256, F32
// (about 30 MB), and returns its folder and a list of its whole words.
func benchModel(b *testing.B) (string, []string) {
	dir := b.TempDir()
	r := rand.New(rand.NewSource(1))
	const n, dim = 30000, 256
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	seen := map[string]bool{}
	var words []string
	for len(vocab) < n {
		var sb strings.Builder
		for k := 2 + r.Intn(7); k > 0; k-- {
			sb.WriteByte(byte('a' + r.Intn(26)))
		}
		w := sb.String()
		if len(vocab)%3 == 0 {
			w = "##" + w
		} else {
			words = append(words, w)
		}
		if !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	flat := make([]float32, n*dim)
	for i := range flat {
		flat[i] = r.Float32()*2 - 1
	}
	writeSafetensors(b, filepath.Join(dir, ModelFile), map[string]stTensor{"embeddings": {"F32", []int{n, dim}, encodeFloats("F32", flat)}})
	tj, _ := json.Marshal(tokenizerJSON(vocab))
	if err := os.WriteFile(filepath.Join(dir, TokenizerFile), tj, 0o644); err != nil {
		b.Fatal(err)
	}
	writeJSON(b, filepath.Join(dir, ConfigFile), map[string]any{"normalize": true})
	return dir, words
}

// benchTexts makes count texts of about 300 bytes from words.
func benchTexts(words []string, count int) []string {
	r := rand.New(rand.NewSource(2))
	var texts []string
	for i := 0; i < count; i++ {
		var sb strings.Builder
		for sb.Len() < 300 {
			sb.WriteString(words[r.Intn(len(words))])
			if r.Intn(3) == 0 {
				sb.WriteString("ing, ")
			} else {
				sb.WriteByte(' ')
			}
		}
		texts = append(texts, sb.String())
	}
	return texts
}

func BenchmarkLoadModel2Vec(b *testing.B) {
	dir, _ := benchModel(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := LoadModel2Vec(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheFill is the first search after 1000 new entries.
func BenchmarkCacheFill(b *testing.B) {
	dir, words := benchModel(b)
	m, err := LoadModel2Vec(dir)
	if err != nil {
		b.Fatal(err)
	}
	texts := benchTexts(words, 1000)
	state := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		_ = os.Remove(filepath.Join(state, CacheFile))
		if _, err := NewCache(state).Vectors(context.Background(), m, texts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheWarm is a search whose 1000 entry vectors are all cached.
func BenchmarkCacheWarm(b *testing.B) {
	dir, words := benchModel(b)
	m, err := LoadModel2Vec(dir)
	if err != nil {
		b.Fatal(err)
	}
	texts := benchTexts(words, 1000)
	c := NewCache(b.TempDir())
	if _, err := c.Vectors(context.Background(), m, texts); err != nil {
		b.Fatal(err)
	}
	e := &counting{Embedder: m}
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Vectors(context.Background(), e, texts); err != nil {
			b.Fatal(err)
		}
	}
	if e.texts.Load() != 0 {
		b.Fatalf("warm lookups embedded %d texts", e.texts.Load())
	}
}
