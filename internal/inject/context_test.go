package inject

import (
	"slices"
	"testing"
	"time"

	"github.com/memsync/memsync/memfile"
)

// TestSkipMatchingUse: Skip leaves entries out without counting them,
// Matching keeps only what the query matches, and Use ranks a used old
// entry over newer unused ones.
func TestSkipMatchingUse(t *testing.T) {
	f := fileOf(
		entry("fix", "Retry loop", "The retry loop times out on a cold cache", "2026-01-01"),
		entry("pattern", "Logging", "Log with slog at the call site", "2026-01-02"),
		entry("pattern", "Naming", "Name packages in the singular", "2026-01-03"),
		entry("solution", "Cache warmup", "Warm the cache before the retry loop", "2026-01-04"),
	)
	ids := func(res Result) []string {
		var out []string
		for _, i := range res.Chosen {
			out = append(out, f.Entries[i].Title)
		}
		return out
	}
	res := Select(f, Options{Query: "retry loop cache", Matching: true})
	if got := ids(res); len(got) != 2 || !slices.Contains(got, "Retry loop") || !slices.Contains(got, "Cache warmup") || res.Omitted != 0 || res.Filtered != 0 {
		t.Fatalf("matching: chosen %v, omitted %d, filtered %d", got, res.Omitted, res.Filtered)
	}
	if res := Select(f, Options{Query: "zebra", Matching: true}); len(res.Chosen) != 0 {
		t.Fatalf("matching an unknown word: chosen %v", ids(res))
	}
	skip := func(e *memfile.Entry) bool { return e.Title == "Cache warmup" }
	res = Select(f, Options{Query: "retry loop cache", Matching: true, Skip: skip})
	if got := ids(res); !slices.Equal(got, []string{"Retry loop"}) || res.Omitted != 0 || res.Filtered != 0 {
		t.Fatalf("skip: chosen %v, omitted %d, filtered %d", got, res.Omitted, res.Filtered)
	}
	if res.Block != Header+Notice+"```memories\n"+renderEntry(&f.Entries[0], "", "", time.Now(), "", false)+"```\n" {
		t.Fatalf("skip: block\n%s", res.Block)
	}
	// Without a query: by recency, unless use says otherwise.
	if got := ids(Select(f, Options{})); got[0] != "Cache warmup" {
		t.Fatalf("recency: %v", got)
	}
	use := func(e *memfile.Entry) float64 {
		if e.Title == "Logging" {
			return 5
		}
		return 0
	}
	if got := ids(Select(f, Options{Use: use})); got[0] != "Logging" {
		t.Fatalf("use: %v", got)
	}
}
