package similar

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

type pair struct {
	dup  bool
	a, b string
}

func readPairs(t *testing.T) []pair {
	f, err := os.Open("testdata/pairs.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pair
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		p := strings.Split(l, " | ")
		if len(p) != 3 || (p[0] != "dup" && p[0] != "diff") {
			t.Fatalf("bad line %q", l)
		}
		out = append(out, pair{p[0] == "dup", p[1], p[2]})
	}
	return out
}

// precisionRecall of the rule "score >= th" on the labelled pairs.
func precisionRecall(ps []pair, th float64) (p, r float64, fp, fn []pair) {
	tp := 0
	for _, x := range ps {
		near := Score(Of(x.a), Of(x.b)) >= th
		switch {
		case near && x.dup:
			tp++
		case near:
			fp = append(fp, x)
		case x.dup:
			fn = append(fn, x)
		}
	}
	return float64(tp) / float64(tp+len(fp)), float64(tp) / float64(tp+len(fn)), fp, fn
}

// TestThreshold: on the labelled set (at least 100 pairs) the chosen
// threshold keeps precision at 0.9 or more, so that the door rarely
// bothers anyone with a pair that is no duplicate; -v prints the table.
func TestThreshold(t *testing.T) {
	ps := readPairs(t)
	dups := 0
	for _, p := range ps {
		if p.dup {
			dups++
		}
	}
	if len(ps) < 100 || dups < 40 || len(ps)-dups < 40 {
		t.Fatalf("%d pairs (%d duplicates): the set is too small", len(ps), dups)
	}
	t.Logf("%d pairs, %d duplicates, %d different", len(ps), dups, len(ps)-dups)
	t.Logf("| threshold | precision | recall |")
	t.Logf("|---|---|---|")
	for _, th := range []float64{0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6} {
		p, r, _, _ := precisionRecall(ps, th)
		mark := ""
		if th == Threshold {
			mark = " (chosen)"
		}
		t.Logf("| %.2f%s | %.2f | %.2f |", th, mark, p, r)
	}
	p, r, fp, fn := precisionRecall(ps, Threshold)
	for _, x := range fp {
		t.Logf("false positive %.2f: %q | %q", Score(Of(x.a), Of(x.b)), x.a, x.b)
	}
	for _, x := range fn {
		t.Logf("missed %.2f: %q | %q", Score(Of(x.a), Of(x.b)), x.a, x.b)
	}
	if p < 0.9 || r < 0.5 {
		t.Fatalf("threshold %.2f: precision %.2f, recall %.2f", Threshold, p, r)
	}
}

func TestScore(t *testing.T) {
	for _, c := range []struct {
		a, b string
		near bool
	}{
		{"The pool size is 10", "the pool size is 10", true},
		{"The pool size is 10", "The pool size is 20", false},
		{"fact 1 is base", "fact 2 is base", false},
		{"lesson 3 " + strings.Repeat("text ", 100), "lesson 4 " + strings.Repeat("text ", 100), false},
		{"", "anything", false},
		{"the a an", "the a an", false},
		// Function words are no shared fact (about, after, ...).
		{"one entry about builds", "second entry about deploys", false},
		{"Rebuild after a schema change", "Redeploy after a config change", false},
	} {
		if got := Near(Of(c.a), Of(c.b)); got != c.near {
			t.Errorf("Near(%q, %q) = %v (%.2f)", c.a, c.b, got, Score(Of(c.a), Of(c.b)))
		}
	}
}

func BenchmarkNear1000(b *testing.B) {
	sets := make([]Set, 1000)
	for i := range sets {
		sets[i] = Of(fmt.Sprintf("entry %d: retry the upstream call with jittered backoff when the pool of connection %d is exhausted", i, i*7))
	}
	q := Of("retry the upstream call with backoff when the connection pool is exhausted")
	for b.Loop() {
		for _, s := range sets {
			Near(q, s)
		}
	}
}

func BenchmarkOf(b *testing.B) {
	text := "Retry the upstream call with jittered backoff when the pool of connections is exhausted; see backend/http/retry.go:42 and max_conns in config.yaml. The worker gives up after 3 tries and logs the request ID."
	for b.Loop() {
		Of(text)
	}
}

// TestCache: Sets read back from the cache file are the Sets of the texts;
// a damaged file is an empty cache.
func TestCache(t *testing.T) {
	path := t.TempDir() + "/sets"
	texts := []string{"The pool size is 10, see db/pool.go", "Always use try-catch blocks", ""}
	c := OpenCache(path)
	for _, s := range texts {
		c.Of(s)
	}
	if err := c.Save(0o600); err != nil {
		t.Fatal(err)
	}
	c = OpenCache(path)
	if len(c.sets) != len(texts) {
		t.Fatalf("read back %d sets", len(c.sets))
	}
	for _, s := range texts {
		got, want := c.Of(s), Of(s)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q: %v, want %v", s, got, want)
		}
	}
	if c.changed {
		t.Error("every set was in the cache, yet it changed")
	}
	if err := os.WriteFile(path, []byte(cacheMagic+"\x01\x02"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c = OpenCache(path); len(c.sets) != 0 {
		t.Fatalf("damaged file read as %d sets", len(c.sets))
	}
}
