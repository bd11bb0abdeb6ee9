package recall_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/embed"
	"github.com/memsync/memsync/internal/recall"
	"github.com/memsync/memsync/memfile"
)

// The retrieval evaluation: testdata/retrieval holds the memories of one
// fictional product (memories.md) and queries with the IDs of the memories
// relevant to each (queries.tsv): keyword queries, paraphrases that share few
// words with the memory, and task descriptions as inject sees them.

// evalQuery is one line of queries.tsv.
type evalQuery struct {
	kind string // keyword, paraphrase or task
	rel  []string
	text string
}

// evalSet is the parsed evaluation set.
type evalSet struct {
	docs    []recall.Doc
	ids     []string
	queries []evalQuery
}

func loadEvalSet(t testing.TB) *evalSet {
	t.Helper()
	data, err := os.ReadFile("testdata/retrieval/memories.md")
	if err != nil {
		t.Fatal(err)
	}
	f := memfile.Parse(data)
	if len(f.Problems) > 0 {
		t.Fatalf("memories.md: %v", f.Problems)
	}
	s := &evalSet{}
	for i := range f.Entries {
		e := &f.Entries[i]
		s.docs = append(s.docs, recall.Doc{Title: e.Title, Type: e.Type, Tags: e.Tags, Content: e.Content})
		s.ids = append(s.ids, f.Entries[i].ID)
	}
	qf, err := os.Open("testdata/retrieval/queries.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer qf.Close()
	sc := bufio.NewScanner(qf)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 {
			t.Fatalf("queries.tsv: bad line %q", line)
		}
		q := evalQuery{kind: parts[0], rel: strings.Split(parts[1], ","), text: parts[2]}
		for _, id := range q.rel {
			if !slices.Contains(s.ids, id) {
				t.Fatalf("queries.tsv: %q: no memory %s", q.text, id)
			}
		}
		s.queries = append(s.queries, q)
	}
	return s
}

// evalResult holds the metrics of one run over the set.
type evalResult struct {
	recall5, mrr10 float64
	byKind         map[string][2]float64 // kind -> recall@5, MRR@10
	firstRank      []int                 // per query, the rank (1-based) of its first relevant hit in the top 10, or 0
	misses         []string
}

// searchOpts are the options a query of kind is searched with: task
// descriptions as inject searches them.
func searchOpts(kind string) recall.Options {
	if kind == "task" {
		return recall.Options{Limit: 10, Keywords: true, MaxTerms: 8}
	}
	return recall.Options{Limit: 10}
}

// evaluate runs every query: recall@5 is, per query, the share of its
// relevant memories in the top 5 (out of at most 5), averaged over the
// queries; MRR@10 is the mean of 1/rank of the first relevant memory in the
// top 10 (0 if none).
func evaluate(s *evalSet, search func(docs []recall.Doc, q string, o recall.Options) []recall.Hit) evalResult {
	r := evalResult{byKind: map[string][2]float64{}}
	count := map[string]int{}
	for _, q := range s.queries {
		hits := search(s.docs, q.text, searchOpts(q.kind))
		found, first := 0, 0
		var got []string
		for k, h := range hits {
			id := s.ids[h.Index]
			got = append(got, id)
			if !slices.Contains(q.rel, id) {
				continue
			}
			if k < 5 {
				found++
			}
			if first == 0 {
				first = k + 1
			}
		}
		rec := float64(found) / float64(min(len(q.rel), 5))
		rr := 0.0
		if first > 0 {
			rr = 1 / float64(first)
		}
		r.recall5 += rec
		r.mrr10 += rr
		r.firstRank = append(r.firstRank, first)
		k := r.byKind[q.kind]
		r.byKind[q.kind] = [2]float64{k[0] + rec, k[1] + rr}
		count[q.kind]++
		if rec < 1 {
			top := got[:min(5, len(got))]
			var titles []string
			for _, id := range top {
				titles = append(titles, s.docs[slices.Index(s.ids, id)].Title)
			}
			r.misses = append(r.misses, fmt.Sprintf("%-10s recall@5 %.2f first %2d  %q\n\t\twant %v\n\t\ttop5 %q", q.kind, rec, first, q.text, q.rel, titles))
		}
	}
	n := float64(len(s.queries))
	r.recall5 /= n
	r.mrr10 /= n
	for kind, v := range r.byKind {
		r.byKind[kind] = [2]float64{v[0] / float64(count[kind]), v[1] / float64(count[kind])}
	}
	return r
}

func (r evalResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "recall@5 %.3f  MRR@10 %.3f", r.recall5, r.mrr10)
	for _, kind := range []string{"keyword", "paraphrase", "task"} {
		v := r.byKind[kind]
		fmt.Fprintf(&b, "  | %s %.3f/%.3f", kind, v[0], v[1])
	}
	return b.String()
}

// Floors of the retrieval evaluation: a change that ranks worse fails.
const (
	floorRecall5 = 0.77
	floorMRR10   = 0.75
)

func TestRetrievalQuality(t *testing.T) {
	s := loadEvalSet(t)
	kinds := map[string]int{}
	for _, q := range s.queries {
		kinds[q.kind]++
	}
	t.Logf("%d memories, %d queries %v", len(s.docs), len(s.queries), kinds)
	r := evaluate(s, recall.Search)
	for _, m := range r.misses {
		t.Logf("miss: %s", m)
	}
	t.Logf("%v", r)
	if r.recall5 < floorRecall5 || r.mrr10 < floorMRR10 {
		t.Errorf("retrieval quality fell: recall@5 %.3f (floor %.3f), MRR@10 %.3f (floor %.3f)", r.recall5, floorRecall5, r.mrr10, floorMRR10)
	}
	if dir := os.Getenv("MEMSYNC_MODEL"); dir != "" {
		evaluateModel(t, s, dir, r)
	}
}

// evaluateModel prints the figures of the set searched with the Model2Vec
// model in dir fused in, as memsync searches with MEMSYNC_MODEL set, beside
// those of the words alone (lexical); it fails if the model costs a keyword
// query, and counts the queries whose top answer it pushes below the top 3.
func evaluateModel(t *testing.T, s *evalSet, dir string, lexical evalResult) {
	model, err := embed.LoadModel2Vec(dir)
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(s.docs))
	for i := range s.docs {
		texts[i] = s.docs[i].Text()
	}
	ctx := context.Background()
	vecs, err := model.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	r := evaluate(s, func(docs []recall.Doc, q string, o recall.Options) []recall.Hit {
		qv, err := model.Embed(ctx, []string{q})
		if err != nil {
			t.Fatal(err)
		}
		o.Semantic = &recall.Semantic{Query: qv[0], Docs: vecs}
		return recall.Search(docs, q, o)
	})
	t.Logf("with %s: %v", model.Name(), r)
	pushed := 0
	for k := range s.queries {
		if lexical.firstRank[k] == 1 && (r.firstRank[k] == 0 || r.firstRank[k] > 3) {
			pushed++
			t.Logf("top answer pushed to rank %d: %q", r.firstRank[k], s.queries[k].text)
		}
	}
	t.Logf("recall@5 %+.3f, MRR@10 %+.3f over words alone; %d top answers pushed below the top 3", r.recall5-lexical.recall5, r.mrr10-lexical.mrr10, pushed)
	if r.byKind["keyword"][0] < lexical.byKind["keyword"][0] {
		t.Errorf("the model lost keyword queries: recall@5 %.3f, words alone %.3f", r.byKind["keyword"][0], lexical.byKind["keyword"][0])
	}
}

// Exact identifiers rank the memories that hold them first, above memories
// about the same subject in other words.
func TestRetrievalExactIdentifiers(t *testing.T) {
	s := loadEvalSet(t)
	for _, q := range []string{"GOMEMLIMIT", "max_conns", "pool_max_conns", "SKIP LOCKED", "POST_NOTIFICATIONS", "CROSSSLOT"} {
		hits := recall.Search(s.docs, q, recall.Options{Limit: 10})
		var holding []int
		for i, d := range s.docs {
			text := d.Title + "\n" + strings.Join(d.Tags, " ") + "\n" + d.Content
			if strings.Contains(strings.ToLower(text), strings.ToLower(q)) {
				holding = append(holding, i)
			}
		}
		if len(holding) == 0 {
			t.Fatalf("%q: no memory holds it", q)
		}
		if len(hits) < len(holding) {
			t.Fatalf("%q: %d hits, %d memories hold it", q, len(hits), len(holding))
		}
		for k, h := range hits[:len(holding)] {
			if !slices.Contains(holding, h.Index) {
				t.Errorf("%q: hit %d is %q, which does not hold it; want the %d memories that do first", q, k+1, s.docs[h.Index].Title, len(holding))
			}
		}
	}
}
