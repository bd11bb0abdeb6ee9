package memsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/similar"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// TestAddNamesNearDuplicates: an add nearly the same as an active entry is
// stored, and Similar names that entry; the exact duplicate keeps today's
// answer, and a different fact (another number) names nothing.
func TestAddNamesNearDuplicates(t *testing.T) {
	_, m := citeRepo(t)
	ctx := context.Background()
	first, err := m.Add(ctx, Entry{Content: "Always use try-catch blocks for async operations"})
	if err != nil {
		t.Fatal(err)
	}
	pool, _ := m.Add(ctx, Entry{Content: "The pool size is 10"})
	e, err := m.Add(ctx, Entry{Content: "Async operations should always be wrapped in try-catch blocks"})
	if err != nil || e.Duplicate != "" || !slices.Equal(e.Similar, []string{first.ID}) {
		t.Fatalf("near-duplicate add: %+v, %v", e, err)
	}
	if d, _ := m.Add(ctx, Entry{Content: "always use TRY-CATCH blocks for async operations"}); d.Duplicate != "active" || d.Similar != nil {
		t.Fatalf("exact duplicate: %+v", d)
	}
	if o, _ := m.Add(ctx, Entry{Content: "The pool size is 20"}); o.Similar != nil {
		t.Fatalf("another number named %v (pool %s)", o.Similar, pool.ID)
	}
	// The entry a supersede replaces is not named as similar.
	s, err := m.AddWith(ctx, Entry{Content: "The pool size is 10 per worker"}, AddOptions{Supersedes: pool.ID})
	if err != nil || slices.Contains(s.Similar, pool.ID) {
		t.Fatalf("supersede: %+v, %v", s, err)
	}
}

// nearMemory is the memory of a repository holding about n entries
// (memfile.GenerateFile).
func nearMemory(b *testing.B, n int) string {
	dir := testgit.Isolate(b)
	b.Setenv("MEMSYNC_GLOBAL_DIR", b.TempDir())
	testgit.Git(b, dir, "init", "-q")
	m, err := Open(dir, Options{NoAccessLog: true})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Add(context.Background(), Entry{Content: "first"}); err != nil {
		b.Fatal(err)
	}
	data := memfile.GenerateFile(n*300, 1)
	if err := os.WriteFile(m.Path(), data, 0o644); err != nil {
		b.Fatal(err)
	}
	f, _ := m.load(context.Background(), View{})
	b.Logf("%d entries", len(f.Entries))
	return dir
}

// BenchmarkNearDuplicates1000 is what the door's near-duplicate check adds
// to an add, on a memory of about 1,000 entries: in a fresh process (the
// file parsed, every entry's terms made; the CLI) and in a long-lived one
// (the MCP server, a Go program: the file unchanged since the last call).
func BenchmarkNearDuplicates1000(b *testing.B) {
	dir := nearMemory(b, 1000)
	ctx := context.Background()
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			m, err := Open(dir, Options{NoAccessLog: true})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.similarTo(ctx, "", "retry the upstream call with jittered backoff"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open", func(b *testing.B) { // the part of "fresh" that is not the check
		for b.Loop() {
			m, err := Open(dir, Options{NoAccessLog: true})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.load(ctx, View{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		m, err := Open(dir, Options{NoAccessLog: true})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			if _, err := m.similarTo(ctx, "", fmt.Sprintf("retry the upstream call %d times with jittered backoff", i)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSimilarIndexedMatchesScan: the near-duplicates an add finds through
// the search index are the ones comparing every entry finds, with the same
// scores, in the same order: for texts made from the entries of real and
// generated memories (as they are, a word dropped, a word added), for the
// labelled pairs of package similar, and after appends the index has not
// folded in yet. The index answers every time (no fallback hides a miss).
func TestSimilarIndexedMatchesScan(t *testing.T) {
	pairs, err := os.ReadFile(filepath.Join("internal", "similar", "testdata", "pairs.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ralph, err := os.ReadFile(filepath.Join("memfile", "testdata", "ralph-orchestrator.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"ralph": ralph, "generated": memfile.GenerateFile(400<<10, 7)} {
		t.Run(name, func(t *testing.T) {
			_, m := citeRepo(t)
			ctx := context.Background()
			if _, err := m.Add(ctx, Entry{Content: "first"}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(m.Path(), data, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := m.load(ctx, View{})
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for i, e := range f.Entries {
				if i%3 != 0 {
					continue
				}
				words := strings.Fields(e.Content)
				var half []string // every other word, and as many new ones: near the threshold
				for k, w := range words {
					if k%2 == 0 {
						half = append(half, w)
					} else {
						half = append(half, fmt.Sprintf("w%dx%d", i, k))
					}
				}
				texts = append(texts, e.Content, strings.Join(words[min(1, len(words)):], " "), e.Content+" during the nightly deploy", strings.Join(half, " "))
			}
			// The labelled pairs: one side stored, the other asked.
			for _, line := range strings.Split(string(pairs), "\n") {
				if parts := strings.Split(line, " | "); len(parts) == 3 {
					if _, err := m.Add(ctx, Entry{Content: parts[1]}); err != nil {
						t.Fatal(err)
					}
					texts = append(texts, parts[2])
				}
			}
			check := func(texts []string) {
				t.Helper()
				for _, text := range texts {
					body := nearText(&memfile.Entry{Title: memfile.TitleFrom(text), Content: text})
					q := similar.Of(body)
					if q.Empty() {
						continue
					}
					got, ok, err := m.similarIndexed(ctx, q, similar.Terms(body))
					if err != nil || !ok {
						t.Fatalf("%q: the index did not answer (%v)", text, err)
					}
					want, err := m.similarScan(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("%q:\nindex %v\nscan  %v", text, got, want)
					}
				}
			}
			check(texts)
			// Appends since the index was built: read from its tail.
			for i, text := range texts[:min(5, len(texts))] {
				if _, err := m.Add(ctx, Entry{Content: fmt.Sprintf("%s, seen again in run %d", text, i)}); err != nil {
					t.Fatal(err)
				}
			}
			check(texts[:min(60, len(texts))])
		})
	}
}

// TestSimilarManyAlike: entries that each share most terms with the new
// text but differ in a number (numbered runs of one sentence) are more than
// the index path reads (maxNearReads); the add compares every entry instead,
// and names the same near-duplicates as comparing every entry does.
func TestSimilarManyAlike(t *testing.T) {
	_, m := citeRepo(t)
	ctx := context.Background()
	for i := range maxNearReads + 40 {
		if _, err := m.Add(ctx, Entry{Content: fmt.Sprintf("writer %d learned %d in round", i%7, i)}); err != nil {
			t.Fatal(err)
		}
	}
	dup, err := m.Add(ctx, Entry{Content: "the writer learned it in the round"})
	if err != nil {
		t.Fatal(err)
	}
	text := "the writer learned it in the round again"
	body := nearText(&memfile.Entry{Title: memfile.TitleFrom(text), Content: text})
	q := similar.Of(body)
	if _, ok, err := m.similarIndexed(ctx, q, similar.Terms(body)); ok || err != nil {
		t.Fatalf("the index path answered (%v) with %d alike entries", err, maxNearReads+40)
	}
	got, err := m.similarTo(ctx, memfile.TitleFrom(text), text)
	if err != nil || !slices.Equal(got, []string{dup.ID}) {
		t.Fatalf("similarTo: %v, %v; want [%s]", got, err, dup.ID)
	}
}
