package memsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memsync/memsync/embed"
	"github.com/memsync/memsync/internal/embedtest"
	"github.com/memsync/memsync/internal/testgit"
)

// A model of three meanings for the tests: memory trouble, styling, retries.
var (
	testWords   = []string{"ram", "memory", "oom", "limit", "theme", "dark", "css", "colors", "retry", "http"}
	testVectors = [][]float32{
		{1, 0, 0}, {0.9, 0.1, 0}, {0.95, 0, 0.1}, {0.7, 0, 0.3},
		{0, 1, 0}, {0, 0.9, 0.1}, {0.1, 1, 0}, {0, 1, 0.2},
		{0, 0, 1}, {0, 0.1, 1},
	}
)

func testModel(t *testing.T) string {
	dir := t.TempDir()
	if err := embedtest.WriteModel(dir, testWords, testVectors); err != nil {
		t.Fatal(err)
	}
	return dir
}

// counting is an Embedder that counts the texts it embeds.
type counting struct {
	embed.Embedder
	mu    sync.Mutex
	texts int
}

func (c *counting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.texts += len(texts)
	c.mu.Unlock()
	return c.Embedder.Embed(ctx, texts)
}

func (c *counting) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.texts
}

func semanticRepo(t *testing.T, o Options) (*Memory, []Entry) {
	testgit.Isolate(t)
	dir := t.TempDir()
	testgit.Git(t, dir, "init", "-q")
	m, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	var added []Entry
	for _, c := range []string{
		"Dispatcher pods hit the memory limit at peak",
		"Theme colors are CSS custom properties; dark mode follows the system",
		"Retry twice on HTTP 503 from the pricing service",
	} {
		e, err := m.Add(context.Background(), Entry{Content: c})
		if err != nil {
			t.Fatal(err)
		}
		added = append(added, e)
	}
	return m, added
}

// With a model, search finds a memory by meaning when no word matches; adds
// compute nothing; the entries' vectors are computed once and cached; inject
// ranks the same way.
func TestSearchByMeaning(t *testing.T) {
	ctx := context.Background()
	model, err := embed.LoadModel2Vec(testModel(t))
	if err != nil {
		t.Fatal(err)
	}
	e := &counting{Embedder: model}
	m, added := semanticRepo(t, Options{Embedder: e})
	if n := e.count(); n != 0 {
		t.Fatalf("adds embedded %d texts, want none", n)
	}
	hits, err := m.Search(ctx, "ram", SearchOptions{})
	if err != nil || len(hits) == 0 || hits[0].ID != added[0].ID {
		t.Fatalf("search ram: %+v %v, want %s first", hits, err, added[0].ID)
	}
	if n := e.count(); n != 4 {
		t.Fatalf("first search embedded %d texts, want 3 entries and the query", n)
	}
	if _, err := os.Stat(filepath.Join(m.store.StateDir, embed.CacheFile)); err != nil {
		t.Fatalf("no vector cache: %v", err)
	}
	if hits, err = m.Search(ctx, "oom", SearchOptions{}); err != nil || hits[0].ID != added[0].ID {
		t.Fatalf("search oom: %+v %v", hits, err)
	}
	if n := e.count(); n != 5 {
		t.Fatalf("second search embedded %d texts in all, want only its query more", n)
	}
	// Fresh Memory, same repository: the cache on disk serves it.
	m2, err := Open(m.repo.WorkTree, Options{Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Search(ctx, "dark theme", SearchOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := e.count(); n != 6 {
		t.Fatalf("a new Memory embedded %d texts in all, want only its query more", n)
	}
	res, err := m.Inject(ctx, "ram", InjectOptions{Budget: new(130)})
	if err != nil || len(res.Entries) != 1 || res.Entries[0].ID != added[0].ID {
		t.Fatalf("inject ram: %+v %v, want %s alone", res, err, added[0].ID)
	}
	// Without the model, no entry holds "ram".
	plain, err := Open(m.repo.WorkTree, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hits, err := plain.Search(ctx, "ram", SearchOptions{}); err != nil || len(hits) != 0 {
		t.Fatalf("lexical search ram: %+v %v, want nothing", hits, err)
	}
}

// MEMSYNC_MODEL and the configuration name a model folder; a bad one is a
// configuration error at the first search, with a hint, and never stops an add.
func TestModelFolder(t *testing.T) {
	ctx := context.Background()
	model := testModel(t)
	t.Setenv("MEMSYNC_MODEL", model)
	m, added := semanticRepo(t, Options{})
	if hits, err := m.Search(ctx, "ram", SearchOptions{}); err != nil || len(hits) == 0 || hits[0].ID != added[0].ID {
		t.Fatalf("MEMSYNC_MODEL: %+v %v", hits, err)
	}

	missing := filepath.Join(t.TempDir(), "missing")
	t.Setenv("MEMSYNC_MODEL", missing)
	m, added = semanticRepo(t, Options{})
	_, err := m.Search(ctx, "ram", SearchOptions{})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "MEMSYNC_MODEL") || !strings.Contains(err.Error(), "unset it") {
		t.Fatalf("missing model: %v, want a configuration error naming MEMSYNC_MODEL with a hint", err)
	}
	// A long-lived Memory (the MCP server's) does not keep the failure: once
	// the folder is fixed, its next search uses the model.
	if err := os.CopyFS(missing, os.DirFS(model)); err != nil {
		t.Fatal(err)
	}
	if hits, err := m.Search(ctx, "ram", SearchOptions{}); err != nil || len(hits) == 0 || hits[0].ID != added[0].ID {
		t.Fatalf("after the folder was fixed: %+v %v", hits, err)
	}

	t.Setenv("MEMSYNC_MODEL", "")
	testgit.Isolate(t)
	dir := t.TempDir()
	testgit.Git(t, dir, "init", "-q")
	if err := os.MkdirAll(filepath.Join(dir, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".agent", "memsync.yml"), []byte("model: "+model+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := m.Add(ctx, Entry{Content: "Dispatcher pods hit the memory limit"})
	if err != nil {
		t.Fatal(err)
	}
	if hits, err := m.Search(ctx, "ram", SearchOptions{}); err != nil || len(hits) != 1 || hits[0].ID != e.ID {
		t.Fatalf("configured model: %+v %v", hits, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".agent", "memsync.yml"), []byte("model: models/potion\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Fatalf("relative model folder: %v, want an error", err)
	}
}

// The global layer's files are private (TestGlobalFilesPrivate); so are the
// vectors of its entries, from which much of their words can be read back.
func TestGlobalVectorsPrivate(t *testing.T) {
	ctx := context.Background()
	model, err := embed.LoadModel2Vec(testModel(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "g")
	t.Setenv("MEMSYNC_GLOBAL_DIR", dir)
	g, err := Open("", Options{Global: true, Embedder: model})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Add(ctx, Entry{Content: "Dispatcher pods hit the memory limit"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Search(ctx, "ram", SearchOptions{}); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(g.store.StateDir, embed.CacheFile)
	for path, want := range map[string]os.FileMode{g.store.StateDir: 0o700, cache: 0o600} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v %v, want %v", path, fi.Mode().Perm(), err, want)
		}
	}
	// A cache written readable by all before is made private.
	if err := os.Chmod(cache, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Add(ctx, Entry{Content: "Theme colors follow the system"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Search(ctx, "ram", SearchOptions{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(cache); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("rewritten cache: %v %v, want 0600", fi.Mode().Perm(), err)
	}
}

// A vector cache that cannot be written (here a folder holds its name) is a
// warning: the search still answers by meaning.
func TestSearchWhenCacheNotSaved(t *testing.T) {
	ctx := context.Background()
	model, err := embed.LoadModel2Vec(testModel(t))
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	m, added := semanticRepo(t, Options{Embedder: model, Warn: func(s string) { warned = append(warned, s) }})
	if err := os.MkdirAll(filepath.Join(m.store.StateDir, embed.CacheFile, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	hits, err := m.Search(ctx, "ram", SearchOptions{})
	if err != nil || len(hits) == 0 || hits[0].ID != added[0].ID {
		t.Fatalf("search ram: %+v %v, want %s first", hits, err, added[0].ID)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "vector cache not saved") {
		t.Fatalf("warnings %q, want one saying the cache was not saved", warned)
	}
}
