// Package recall ranks memory entries for a query: the relevance ranking
// behind `memsync search`.
//
// Ranking is BM25 (k1 = 1.2, b = 0.75) over four fields with weights, in the
// BM25F way: a term's count in each field is weighted and normalized by that
// field's length (in bytes) against its average, the weighted counts are
// added up, and the sum is saturated once:
//
//	tf'   = Σ_field weight · tf / (1 − b + b · len / avgLen)
//	score = Σ_term idf · tf' · (k1 + 1) / (tf' + k1)
//	idf   = ln(1 + (N − df + 0.5) / (df + 0.5))
//
// The weights are title 3, tags 2.5, type 2, content 1: a memory is usually
// found by what its title and tags say it is about. N, df and the average
// lengths are taken over the documents that pass the Options filters. Terms
// come from Tokens; common English words ("the", "how", "to", ...) are left
// out of the query unless it has nothing else.
//
// Speed: a document can only yield a term if the term occurs in it as a
// case-insensitive substring (Tokens yields prefixes of the lowercased text).
// So Search looks for the query terms as substrings, which is fast and does
// not allocate, and tokenizes only the words where one occurs, never whole
// documents; lengths are counted in bytes for the same reason.
package recall

import (
	"cmp"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/memsync/memsync/internal/hugepage"
)

// Doc is one searchable memory entry.
type Doc struct {
	Title   string
	Type    string
	Tags    []string
	Content string
}

// Options narrow a search.
type Options struct {
	Limit int      // 0 = no limit
	Tags  []string // if set, a doc must carry ALL these tags (case-insensitive)
	// AnyTags, if set, keeps only docs carrying at least one of these tags
	// (case-insensitive).
	AnyTags []string
	Type    string // if set, a doc's Type must equal it (case-insensitive)
	// Keywords drops the query's common words ("the", "why", ...) entirely
	// when it has others, even from the substring fallback: for long
	// queries such as a whole prompt, where they only cost time.
	Keywords bool
	// MaxTerms, if above 0, keeps only that many of the query's terms: the
	// most specific ones, judged on a sample of the docs (see rarest). Each
	// term costs a scan of all docs, so this bounds the time of a long query.
	MaxTerms int
	// Semantic, if set, fuses a second ranking by vector similarity into
	// the lexical one (see Semantic).
	Semantic *Semantic
	// Unsorted returns every hit in no particular order (Limit is not
	// applied): for a caller that reads every hit's score, and so need not
	// pay for sorting them.
	Unsorted bool
}

// Hit is one ranked result: Index into the docs slice, and its score.
type Hit struct {
	Index int
	Score float64
}

// BM25 parameters and field weights; see the package doc.
const (
	k1 = 1.2
	b  = 0.75

	// fallbackScore is the score per query term of a document that holds a
	// term only inside a longer word (see Search).
	fallbackScore = 0.001

	// maxTerms caps the distinct terms of a query (they are kept in a bitmask).
	maxTerms = 64
)

// The fields of a Doc, in the order they are scored.
const (
	fTitle = iota
	fTags
	fType
	fContent
	numFields
)

var weights = [numFields]float64{fTitle: 3, fTags: 2.5, fType: 2, fContent: 1}

// Search ranks docs for query, best first. Ties keep the newer doc first (higher Index = newer).
//
// Only docs that pass opts are considered. A query without terms (empty, or
// only punctuation) returns them all, newest first, with score 0. Otherwise
// the docs with a BM25 score above 0 are returned; if there are none, the
// docs in which a query term occurs inside some longer word (query "onn",
// doc "max_conns") are returned instead, with a small score (0.001 per term
// found) — so the answer is empty only when no query term occurs anywhere.
// opts.Limit, if above 0, caps the number of hits (see also opts.Unsorted).
func Search(docs []Doc, query string, opts Options) []Hit {
	var idx []int
	for i := range docs {
		if keep(&docs[i], opts) {
			idx = append(idx, i)
		}
	}
	terms := queryTerms(query)
	if opts.Keywords {
		terms = withoutStopwords(terms)
	}
	if opts.MaxTerms > 0 && len(terms) > opts.MaxTerms {
		terms = rarest(func(i int) Doc { return docs[i] }, idx, terms, opts.MaxTerms)
	}
	var hits []Hit
	switch {
	case len(terms) == 0:
		hits = make([]Hit, len(idx))
		for k, i := range idx {
			hits[k] = Hit{Index: i}
		}
	case opts.Semantic.usable(len(docs)):
		var full []bool
		hits, full = rank(docs, idx, terms, withoutStopwords(terms))
		hits = opts.Semantic.fuse(idx, hits, full)
	default:
		hits, _ = rank(docs, idx, terms, withoutStopwords(terms))
	}
	return order(hits, opts)
}

// keep reports whether d passes the filters of opts.
func keep(d *Doc, opts Options) bool {
	if t := strings.TrimSpace(opts.Type); t != "" && !strings.EqualFold(strings.TrimSpace(d.Type), t) {
		return false
	}
	for _, want := range opts.Tags {
		want = strings.TrimSpace(want)
		if want != "" && !slices.ContainsFunc(d.Tags, func(tag string) bool {
			return strings.EqualFold(strings.TrimSpace(tag), want)
		}) {
			return false
		}
	}
	return len(opts.AnyTags) == 0 || slices.ContainsFunc(d.Tags, func(tag string) bool {
		return slices.ContainsFunc(opts.AnyTags, func(want string) bool {
			return strings.EqualFold(strings.TrimSpace(tag), strings.TrimSpace(want))
		})
	})
}

// queryTerms returns the distinct terms of query, in order, at most maxTerms.
func queryTerms(query string) []string {
	var terms []string
	for _, t := range Tokens(query) {
		if !slices.Contains(terms, t) && len(terms) < maxTerms {
			terms = append(terms, t)
		}
	}
	return terms
}

// stopwords are left out of a query that has other terms: they match most
// documents, add little to the ranking and would defeat the substring
// prefilter. Stored as stems.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be but by can do does for from
		had have how i if in into is it its my of on or our so that the their
		then there these this to was we were what when where which who why will with you your`) {
		for _, t := range Tokens(w) {
			m[t] = true
		}
	}
	return m
}()

func withoutStopwords(terms []string) []string {
	var out []string
	for _, t := range terms {
		if !stopwords[t] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return terms
	}
	return out
}

// sampleDocs is how many docs rarest looks at.
const sampleDocs = 512

// rarest keeps the n most specific terms, judged by the docs of a sample of
// idx (evenly spread) they are found in as substrings: first the terms found
// in at most half of the sample, fewest first; then those found in none
// (rare, or absent: the sample cannot tell); then those in most docs, which
// weigh little. Ties go to the longer term, then to the earlier. The terms
// keep their query order.
func rarest(doc func(i int) Doc, idx []int, terms []string, n int) []string {
	c := newCounter(terms, nil)
	df := make([]int, len(terms))
	step := max(1, len(idx)/sampleDocs)
	sampled := 0
	for k := 0; k < len(idx); k += step {
		sampled++
		d := doc(idx[k])
		found := c.doc(&d)
		for t := range terms {
			if found&(1<<t) != 0 {
				df[t]++
			}
		}
	}
	order := make([]int, len(terms))
	for t := range order {
		order[t] = t
	}
	tier := func(t int) int {
		switch {
		case df[t] == 0:
			return 1
		case df[t] > sampled/2: // in most docs: of little weight (idf < ln 2)
			return 2
		}
		return 0
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(tier(a), tier(b)); c != 0 {
			return c
		}
		if c := cmp.Compare(df[a], df[b]); c != 0 {
			return c
		}
		return cmp.Compare(len(terms[b]), len(terms[a]))
	})
	keep := order[:n]
	slices.Sort(keep)
	out := make([]string, n)
	for k, t := range keep {
		out[k] = terms[t]
	}
	return out
}

// counter finds query terms in docs. It looks for each term as a
// case-insensitive substring, and tokenizes only the chunk of text around
// each place it is found (see chunkAt): no other text can hold the term.
type counter struct {
	terms  []string
	needle []*needle            // the terms to look for
	scored []bool               // terms to count; the others are only looked for
	tf     [][numFields]float64 // per term, its count in each field of the doc
	lens   [numFields]float64   // length in bytes of each field of the doc
	text   docText
	tok    tokenizer
	count  func([]byte) // adds 1 to tf[term][field] for each token equal to terms[term]
	term   int
	field  int
}

func newCounter(terms, scored []string) *counter {
	c := &counter{terms: terms, tf: make([][numFields]float64, len(terms))}
	for _, t := range terms {
		c.needle = append(c.needle, newNeedle(t))
		c.scored = append(c.scored, slices.Contains(scored, t))
	}
	c.count = func(tok []byte) {
		if string(tok) == c.terms[c.term] {
			c.tf[c.term][c.field]++
		}
	}
	return c
}

// doc sets c.tf and c.lens for d (c.tf only for scored terms), and returns
// the bitmask of all the terms found in d as substrings.
func (c *counter) doc(d *Doc) (found uint64) {
	clear(c.tf)
	c.text.reset()
	c.text.add(fTitle, d.Title)
	c.lens = [numFields]float64{fTitle: float64(len(d.Title)), fType: float64(len(d.Type)), fContent: float64(len(d.Content))}
	for _, tag := range d.Tags {
		c.text.add(fTags, tag)
		c.lens[fTags] += float64(len(tag))
	}
	c.text.add(fType, d.Type)
	c.text.add(fContent, d.Content)
	for t, needle := range c.needle {
		for from := 0; ; {
			sp, p := c.text.find(needle, from)
			if p < 0 {
				break
			}
			found |= 1 << t
			if !c.scored[t] {
				break
			}
			next := c.text.lowOffset(sp, p) + 1
			if !midWord(sp.s, p) {
				// Count the term in the whole chunk, and go on after it.
				start, end := chunkAt(sp.s, p)
				c.term, c.field = t, sp.field
				c.tok.run(sp.s[start:end], c.count)
				next = max(next, c.text.lowOffset(sp, end))
			}
			from = next
		}
	}
	return found
}

// maxPrealloc bounds the term counts countPart sets room for at once.
const maxPrealloc = 1 << 20

// minPart is the fewest docs a goroutine of rank counts.
const minPart = 2048

// cand is a doc with a scored term, and the lengths of its fields.
type cand struct {
	i    int
	lens [numFields]float64
}

// countPart is what rank counts over a part of the docs.
type countPart struct {
	cands []cand               // docs with a scored term
	tfs   [][numFields]float64 // their term counts, one after the other
	weak  []Hit                // docs with a term as a substring, while cands is empty
	lens  [numFields]float64   // field lengths summed over all the docs
	df    []float64            // per term, the docs with it
}

func (pt *countPart) count(docs []Doc, idx []int, terms, scored []string) {
	c := newCounter(terms, scored)
	pt.df = make([]float64, len(terms))
	// At their largest (every doc a candidate; the counts up to 32 MB):
	// pages never written to are never touched, while growing would copy,
	// onto fresh pages, every time.
	pt.cands = hugepage.Make[cand](len(idx))[:0]
	pt.tfs = hugepage.Make[[numFields]float64](min(len(idx)*len(terms), maxPrealloc))[:0]
	for _, i := range idx {
		found := c.doc(&docs[i])
		for f, n := range c.lens {
			pt.lens[f] += n
		}
		if found == 0 {
			continue
		}
		counted := false
		for t := range terms {
			if c.tf[t] != [numFields]float64{} {
				pt.df[t]++
				counted = true
			}
		}
		switch {
		case counted:
			pt.cands = append(pt.cands, cand{i, c.lens})
			pt.tfs = append(pt.tfs, c.tf...)
		case len(pt.cands) == 0:
			pt.weak = append(pt.weak, Hit{Index: i, Score: fallbackScore * float64(bits.OnesCount64(found))})
		}
	}
}

// rank scores the docs idx for terms. It returns the docs with a BM25
// score above 0 for the scored terms; if there are none, the docs that hold
// any of the terms as a substring, with a score of fallbackScore per term.
// full tells, per hit, whether the doc holds every scored term.
func rank(docs []Doc, idx []int, terms, scored []string) (hits []Hit, full []bool) {
	nt := len(terms)
	// Count in parallel over parts of idx; the sums are of whole numbers,
	// so the scores do not depend on how idx was split.
	np := min(runtime.GOMAXPROCS(0), len(idx)/minPart)
	parts := make([]countPart, max(np, 1))
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(idx)/len(parts), (p+1)*len(idx)/len(parts)
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[p].count(docs, idx[lo:hi], terms, scored)
		}()
	}
	wg.Wait()
	var (
		cands []cand
		tfs   [][numFields]float64
		weak  []Hit
		avg   [numFields]float64
	)
	df := make([]float64, nt)
	for _, pt := range parts {
		cands = append(cands, pt.cands...)
		tfs = append(tfs, pt.tfs...)
		weak = append(weak, pt.weak...)
		for f := range avg {
			avg[f] += pt.lens[f]
		}
		for t := range df {
			df[t] += pt.df[t]
		}
	}
	if len(cands) == 0 {
		return weak, make([]bool, len(weak))
	}
	return score(cands, tfs, terms, scored, df, float64(len(idx)), avg)
}

// idf is BM25's inverse document frequency of a term df of n docs hold.
func idf(n, df float64) float64 { return math.Log(1 + (n-df+0.5)/(df+0.5)) }

// termScore is BM25's score of one term in a doc, given the term's counts
// in its fields (tf), the doc's field lengths, the average field lengths
// and the term's idf; 0 for a doc without the term. A doc's score is the
// sum of its terms', added in the query's order.
func termScore(tf, lens, avg [numFields]float64, idf float64) float64 {
	x := 0.0
	for f, tf := range tf {
		if tf > 0 {
			x += weights[f] * tf / (1 - b + b*lens[f]/avg[f])
		}
	}
	if x <= 0 {
		return 0
	}
	return idf * x * (k1 + 1) / (x + k1)
}

// score scores the candidates of a ranking: tfs holds each one's counts of
// every term (len(terms) rows per candidate), df the docs with each term,
// n the docs ranked and sums their field lengths added up. full tells,
// per hit, whether the doc holds every scored term.
func score(cands []cand, tfs [][numFields]float64, terms, scored []string, df []float64, n float64, sums [numFields]float64) (hits []Hit, full []bool) {
	nt := len(terms)
	nscored := 0
	for _, t := range terms {
		if slices.Contains(scored, t) {
			nscored++
		}
	}
	avg := sums
	for f := range avg {
		avg[f] /= n
	}
	idfs := make([]float64, nt)
	for t := range idfs {
		idfs[t] = idf(n, df[t])
	}
	hits = make([]Hit, len(cands))
	full = make([]bool, len(cands))
	for k, cd := range cands {
		score, held := 0.0, 0
		for t, tf := range tfs[k*nt : (k+1)*nt] {
			if s := termScore(tf, cd.lens, avg, idfs[t]); s > 0 {
				score += s
				held++
			}
		}
		hits[k] = Hit{Index: cd.i, Score: score}
		full[k] = held == nscored
	}
	return hits, full
}
