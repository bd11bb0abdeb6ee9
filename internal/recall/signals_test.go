package recall_test

import (
	"bufio"
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/recall"
)

// TestRetrievalSignals measures, on the evaluation set, the signals beyond
// BM25 that were tried for search, built from word vectors: soft matching of
// query words to a memory's words, query expansion by nearest words,
// sentence vectors fused through Options.Semantic (the path an embedder
// takes), and pseudo-relevance feedback (RM3). It needs a text file of word
// vectors, one "word x1 ... xN" a line, most frequent words first, named by
// MEMSYNC_EVAL_VECTORS (scripts/eval-vectors makes one from GloVe); without
// it the test is skipped. It prints recall@5 and MRR@10 of each, and checks
// that none loses a keyword query (its exact terms still find it).
func TestRetrievalSignals(t *testing.T) {
	path := os.Getenv("MEMSYNC_EVAL_VECTORS")
	if path == "" {
		t.Skip("MEMSYNC_EVAL_VECTORS names no word vectors (see scripts/eval-vectors)")
	}
	s := loadEvalSet(t)
	e := newSignalEnv(s, readVectors(t, path, 40000))
	t.Logf("%d words with vectors", len(e.vec))
	lexical := func(q string, o recall.Options) []recall.Hit { o.Limit = 0; return recall.Search(s.docs, q, o) }
	var results []evalResult
	run := func(name string, rank func(q string, o recall.Options) []recall.Hit) evalResult {
		r := evaluate(s, func(_ []recall.Doc, q string, o recall.Options) []recall.Hit { return top(rank(q, o), 10) })
		t.Logf("%-44s %v", name, r)
		results = append(results, r)
		return r
	}
	run("BM25F", lexical)
	for _, thr := range []float64{0.4, 0.5, 0.6} {
		run(fmt.Sprintf("soft match >= %.1f, RRF with BM25F", thr), func(q string, o recall.Options) []recall.Hit {
			return rrf(lexical(q, o), e.soft(q, thr))
		})
		run(fmt.Sprintf("soft match >= %.1f, linear with BM25F", thr), func(q string, o recall.Options) []recall.Hit {
			return linear(lexical(q, o), e.soft(q, thr))
		})
	}
	for _, beta := range []float64{0.2, 0.5} {
		run(fmt.Sprintf("expansion: 3 neighbours >= 0.6, weight %.1f", beta), func(q string, o recall.Options) []recall.Hit {
			return e.expanded(q, beta, 3, 0.6)
		})
	}
	sentence := func(q string, o recall.Options) []recall.Hit {
		o.Limit = 0
		o.Semantic = &recall.Semantic{Query: e.embed(recall.Tokens(q)), Docs: e.docVecs}
		return recall.Search(s.docs, q, o)
	}
	results = append(results, run("sentence vectors, fused (Options.Semantic)", sentence))
	for _, lambda := range []float64{0.2, 0.4} {
		run(fmt.Sprintf("RM3: 3 docs, 10 terms, weight %.1f", lambda), func(q string, o recall.Options) []recall.Hit {
			return e.rm3(lexical(q, o), q, 3, 10, lambda)
		})
		run(fmt.Sprintf("RM3 (weight %.1f) + soft match >= 0.4, RRF", lambda), func(q string, o recall.Options) []recall.Hit {
			return rrf(e.rm3(lexical(q, o), q, 3, 10, lambda), e.soft(q, 0.4))
		})
	}
	for _, r := range results {
		if r.byKind["keyword"][0] < 1 {
			t.Errorf("a signal lost a keyword query: %v", r)
		}
	}
}

// signalEnv holds the evaluation set as terms, with word vectors by term.
type signalEnv struct {
	s       *evalSet
	vec     map[string][]float32
	fields  [][4][]string // per doc, the terms of title, tags, type, content
	terms   []map[string]bool
	df      map[string]int
	avgLen  [4]float64
	docVecs [][]float32
	sims    map[[2]string]float64
	vocab   []string
}

// Field weights as in recall's BM25F.
var fieldWeight = [4]float64{3, 2.5, 2, 1}

// readVectors reads the first limit words of a vector file, keyed by their
// term (recall.Tokens of the word; the most frequent word of a term wins),
// normalized.
func readVectors(t *testing.T, path string, limit int) map[string][]float32 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vec := map[string][]float32{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 0; n < limit && sc.Scan(); n++ {
		fs := strings.Fields(sc.Text())
		toks := recall.Tokens(fs[0])
		if len(toks) != 1 || strings.Trim(fs[0], "abcdefghijklmnopqrstuvwxyz") != "" {
			continue
		}
		if _, dup := vec[toks[0]]; dup {
			continue
		}
		v := make([]float32, len(fs)-1)
		for i := range v {
			x, err := strconv.ParseFloat(fs[i+1], 32)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			v[i] = float32(x)
		}
		vec[toks[0]] = normalize(v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vec
}

func normalize(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	if n > 0 {
		for i := range v {
			v[i] = float32(float64(v[i]) / math.Sqrt(n))
		}
	}
	return v
}

func newSignalEnv(s *evalSet, vec map[string][]float32) *signalEnv {
	e := &signalEnv{s: s, vec: vec, df: map[string]int{}, sims: map[[2]string]float64{}}
	for _, d := range s.docs {
		f := [4][]string{recall.Tokens(d.Title), recall.Tokens(strings.Join(d.Tags, " ")), recall.Tokens(d.Type), recall.Tokens(d.Content)}
		set := map[string]bool{}
		for k, ts := range f {
			e.avgLen[k] += float64(len(ts)) / float64(len(s.docs))
			for _, t := range ts {
				set[t] = true
			}
		}
		for t := range set {
			e.df[t]++
		}
		e.fields = append(e.fields, f)
		e.terms = append(e.terms, set)
	}
	for _, f := range e.fields {
		v := make([]float32, 0)
		for k, ts := range f {
			v = e.addVec(v, ts, fieldWeight[k])
		}
		e.docVecs = append(e.docVecs, normalize(v))
	}
	for w := range vec {
		e.vocab = append(e.vocab, w)
	}
	slices.Sort(e.vocab)
	return e
}

// queryWords are the distinct terms of q but common words.
func queryWords(q string) []string {
	var out []string
	for _, t := range recall.Tokens(q) {
		if !slices.Contains(out, t) && !slices.Contains(recall.Tokens(commonWords), t) {
			out = append(out, t)
		}
	}
	return out
}

const commonWords = `a an and are as at be but by can do does for from had have how i if in into is it its my of on or our so that the their then there these this to was we were what when where which who why will with you your`

func (e *signalEnv) idf(t string) float64 {
	n, d := float64(len(e.s.docs)), float64(e.df[t])
	return math.Log(1 + (n-d+0.5)/(d+0.5))
}

func (e *signalEnv) sim(a, b string) float64 {
	if a == b {
		return 1
	}
	k := [2]string{a, b}
	if v, ok := e.sims[k]; ok {
		return v
	}
	v := 0.0
	if va, vb := e.vec[a], e.vec[b]; va != nil && vb != nil {
		for i := range va {
			v += float64(va[i] * vb[i])
		}
	}
	e.sims[k] = v
	return v
}

// addVec adds to v the IDF-weighted vectors of terms, times w.
func (e *signalEnv) addVec(v []float32, terms []string, w float64) []float32 {
	for _, t := range terms {
		x := e.vec[t]
		if x == nil {
			continue
		}
		if len(v) == 0 {
			v = make([]float32, len(x))
		}
		for i := range v {
			v[i] += float32(w * e.idf(t) * float64(x[i]))
		}
	}
	return v
}

// embed is the sentence vector of terms.
func (e *signalEnv) embed(terms []string) []float32 {
	return normalize(e.addVec(nil, slices.DeleteFunc(slices.Clone(terms), func(t string) bool {
		return slices.Contains(recall.Tokens(commonWords), t)
	}), 1))
}

// soft scores each doc by its best similarity to each query word, at least
// thr, weighted by the word's IDF.
func (e *signalEnv) soft(q string, thr float64) []recall.Hit {
	var hits []recall.Hit
	for i := range e.s.docs {
		sc := 0.0
		for _, a := range queryWords(q) {
			best := 0.0
			for b := range e.terms[i] {
				best = max(best, e.sim(a, b))
			}
			if best >= thr {
				sc += e.idf(a) * best
			}
		}
		if sc > 0 {
			hits = append(hits, recall.Hit{Index: i, Score: sc})
		}
	}
	return sorted(hits)
}

// bm25 is the BM25F score of term a in doc i.
func (e *signalEnv) bm25(i int, a string) float64 {
	x := 0.0
	for k, ts := range e.fields[i] {
		tf := float64(strings.Count(" "+strings.Join(ts, " ")+" ", " "+a+" "))
		if tf > 0 {
			x += fieldWeight[k] * tf / (0.25 + 0.75*float64(len(ts))/e.avgLen[k])
		}
	}
	if x == 0 {
		return 0
	}
	return e.idf(a) * x * 2.2 / (x + 1.2)
}

// expanded is BM25F where a query word a doc lacks counts, at beta, its best
// of the k nearest words at least thr the doc holds.
func (e *signalEnv) expanded(q string, beta float64, k int, thr float64) []recall.Hit {
	near := map[string][]string{}
	for _, a := range queryWords(q) {
		var ws []string
		for _, w := range e.vocab {
			if w != a && e.sim(a, w) >= thr {
				ws = append(ws, w)
			}
		}
		slices.SortFunc(ws, func(x, y string) int { return cmp.Compare(e.sim(a, y), e.sim(a, x)) })
		near[a] = ws[:min(k, len(ws))]
	}
	var hits []recall.Hit
	for i := range e.s.docs {
		sc := 0.0
		for _, a := range queryWords(q) {
			if e.terms[i][a] {
				sc += e.bm25(i, a)
				continue
			}
			best := 0.0
			for _, w := range near[a] {
				if e.terms[i][w] {
					best = max(best, e.sim(a, w)*e.bm25(i, w))
				}
			}
			sc += beta * best
		}
		if sc > 0 {
			hits = append(hits, recall.Hit{Index: i, Score: sc})
		}
	}
	return sorted(hits)
}

// rm3 re-ranks with the query plus the n terms most weighted in the top m
// docs of first (weighted by their scores), at lambda.
func (e *signalEnv) rm3(first []recall.Hit, q string, m, n int, lambda float64) []recall.Hit {
	qw := queryWords(q)
	w := map[string]float64{}
	for _, h := range top(first, m) {
		count, total := map[string]float64{}, 0.0
		for _, ts := range e.fields[h.Index] {
			for _, t := range ts {
				count[t]++
				total++
			}
		}
		for t, c := range count {
			if !slices.Contains(qw, t) && !slices.Contains(recall.Tokens(commonWords), t) {
				w[t] += c / total * h.Score / first[0].Score * e.idf(t)
			}
		}
	}
	var extra []string
	for t := range w {
		extra = append(extra, t)
	}
	slices.SortFunc(extra, func(a, b string) int {
		return cmp.Or(cmp.Compare(w[b], w[a]), strings.Compare(a, b))
	})
	extra = extra[:min(n, len(extra))]
	sum := 0.0
	for _, t := range extra {
		sum += w[t]
	}
	var hits []recall.Hit
	for i := range e.s.docs {
		sc := 0.0
		for _, a := range qw {
			sc += (1 - lambda) * e.bm25(i, a)
		}
		for _, t := range extra {
			sc += lambda * float64(len(qw)) * w[t] / sum * e.bm25(i, t)
		}
		if sc > 0 {
			hits = append(hits, recall.Hit{Index: i, Score: sc})
		}
	}
	return sorted(hits)
}

func sorted(h []recall.Hit) []recall.Hit {
	slices.SortFunc(h, func(x, y recall.Hit) int {
		return cmp.Or(cmp.Compare(y.Score, x.Score), cmp.Compare(y.Index, x.Index))
	})
	return h
}

func top(h []recall.Hit, n int) []recall.Hit { return h[:min(n, len(h))] }

// rrf fuses rankings by reciprocal rank (k = 60).
func rrf(lists ...[]recall.Hit) []recall.Hit {
	score := map[int]float64{}
	for _, hs := range lists {
		for r, h := range hs {
			score[h.Index] += 1 / float64(60+r+1)
		}
	}
	return fromScores(score)
}

// linear adds the rankings' scores, each divided by its best.
func linear(lists ...[]recall.Hit) []recall.Hit {
	score := map[int]float64{}
	for _, hs := range lists {
		for _, h := range hs {
			score[h.Index] += h.Score / hs[0].Score
		}
	}
	return fromScores(score)
}

func fromScores(score map[int]float64) []recall.Hit {
	out := make([]recall.Hit, 0, len(score))
	for i, v := range score {
		out = append(out, recall.Hit{Index: i, Score: v})
	}
	return sorted(out)
}
