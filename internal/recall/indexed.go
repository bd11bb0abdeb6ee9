package recall

import (
	"slices"
)

// Counts are a term's counts in each field of a doc (title, tags, type,
// content), as Search counts them.
type Counts [numFields]uint32

// Posting is a doc that holds a term as a token, and the term's counts in it.
type Posting struct {
	Doc    int
	Counts Counts
}

// InText tells whether the doc holds the term in its title or content
// (not only in its tags or type).
func (p Posting) InText() bool { return p.Counts[fTitle] > 0 || p.Counts[fContent] > 0 }

// Lens are the lengths in bytes of a doc's fields, as Search measures them
// (the tags' lengths added up).
func Lens(d *Doc) Counts {
	l := Counts{fTitle: uint32(len(d.Title)), fType: uint32(len(d.Type)), fContent: uint32(len(d.Content))}
	for _, t := range d.Tags {
		l[fTags] += uint32(len(t))
	}
	return l
}

// Terms calls fn with each distinct term of d and its counts, the terms in
// the order they first occur: what an index of d holds. Search counts the
// same terms with the same counts.
func Terms(d *Doc, fn func(term string, c Counts)) {
	var c Counter
	c.Doc(d, func(id int, n Counts) { fn(c.Terms[id], n) })
}

// Counter counts the terms of docs one after the other (Terms), giving
// each distinct term a number, so that an index of many docs makes one
// string per term rather than one per term and doc. The zero Counter is
// ready to use.
type Counter struct {
	Terms   []string         // the terms seen so far, by number
	ids     map[string]int32 // term -> its number
	counts  []Counts         // per term number, its counts in the doc being counted
	touched []int32          // the terms of that doc, in order
	tok     tokenizer
	field   int
	count   func([]byte)
}

// ID is the number of term, given it now if it has none.
func (c *Counter) ID(term string) int {
	if c.count == nil {
		c.Doc(&Doc{}, nil)
	}
	id, ok := c.ids[term]
	if !ok {
		id = int32(len(c.Terms))
		c.ids[term] = id
		c.Terms = append(c.Terms, term)
		c.counts = append(c.counts, Counts{})
	}
	return int(id)
}

// Doc calls fn with the number (an index into c.Terms) and the counts of
// each distinct term of d, in the order they first occur.
func (c *Counter) Doc(d *Doc, fn func(id int, n Counts)) {
	if c.count == nil {
		c.ids = map[string]int32{}
		c.count = func(b []byte) {
			id, ok := c.ids[string(b)]
			if !ok {
				id = int32(len(c.Terms))
				t := string(b)
				c.ids[t] = id
				c.Terms = append(c.Terms, t)
				c.counts = append(c.counts, Counts{})
			}
			if c.counts[id] == (Counts{}) {
				c.touched = append(c.touched, id)
			}
			c.counts[id][c.field]++
		}
	}
	c.touched = c.touched[:0]
	c.field = fTitle
	c.tok.run(d.Title, c.count)
	c.field = fTags
	for _, t := range d.Tags {
		c.tok.run(t, c.count)
	}
	c.field = fType
	c.tok.run(d.Type, c.count)
	c.field = fContent
	c.tok.run(d.Content, c.count)
	for _, id := range c.touched {
		n := c.counts[id]
		c.counts[id] = Counts{}
		fn(int(id), n)
	}
}

// Indexed is a set of docs whose terms were counted ahead of the query (an
// index, see Terms): what SearchIndexed ranks.
type Indexed interface {
	// Len is the number of docs.
	Len() int
	// Meta is doc i with its Type and Tags (what the filters of Options
	// read); Title and Content may be empty.
	Meta(i int) Doc
	// Lens are the lengths of doc i's fields (see Lens).
	Lens(i int) Counts
	// Postings are the docs that hold term as a token, by Doc ascending.
	Postings(term string) []Posting
	// Doc is doc i whole (Options.MaxTerms reads a sample of them).
	Doc(i int) Doc
}

// SearchIndexed is Search over the docs of ix, or over those only names
// (ascending; nil: all), with the same hits in the same order and the same
// scores; a hit's Index is the doc's in ix. It reports false when the index
// cannot tell them: with opts.Semantic, and when no doc holds a query term
// as a token (Search then looks for the terms inside longer words); the
// caller then runs Search over the docs.
func SearchIndexed(ix Indexed, only []int, query string, opts Options) (hits []Hit, ok bool) {
	if opts.Semantic != nil {
		return nil, false
	}
	n := ix.Len()
	// in tells the docs that pass the filters (nil: all of them).
	var in []bool
	filtered := opts.Type != "" || len(opts.Tags) > 0 || len(opts.AnyTags) > 0
	idx := make([]int, 0, n)
	if only != nil || filtered {
		in = make([]bool, n)
	}
	for k := range n {
		i := k
		if only != nil {
			if k >= len(only) {
				break
			}
			if i = only[k]; i < 0 || i >= n || k > 0 && i <= only[k-1] {
				return nil, false
			}
		}
		if filtered {
			if d := ix.Meta(i); !keep(&d, opts) {
				continue
			}
		}
		if in != nil {
			in[i] = true
		}
		idx = append(idx, i)
	}
	terms := queryTerms(query)
	if opts.Keywords {
		terms = withoutStopwords(terms)
	}
	if opts.MaxTerms > 0 && len(terms) > opts.MaxTerms {
		terms = rarest(func(i int) Doc { return ix.Doc(i) }, idx, terms, opts.MaxTerms)
	}
	if len(terms) == 0 {
		hits = make([]Hit, len(idx))
		for k, i := range idx {
			hits[k] = Hit{Index: i}
		}
		return order(hits, opts), true
	}
	scored := withoutStopwords(terms)
	var sums [numFields]float64
	if t, ok := ix.(Totaled); ok && in == nil {
		sums = float64s(t.LensTotal())
	} else {
		for _, i := range idx {
			for f, l := range ix.Lens(i) {
				sums[f] += float64(l)
			}
		}
	}
	nd := float64(len(idx))
	avg := sums
	for f := range avg {
		avg[f] /= nd
	}
	// Term by term, as score adds them up doc by doc: the same sums in
	// the same order, without a table of every candidate's counts.
	row := make([]int32, n) // doc -> 1 + its place in hits
	var lens [][numFields]float64
	for _, term := range terms {
		if !slices.Contains(scored, term) {
			continue
		}
		ps := ix.Postings(term)
		held := func(p Posting) bool {
			return p.Doc >= 0 && p.Doc < n && (in == nil || in[p.Doc]) && p.Counts != (Counts{})
		}
		df := 0.0
		for _, p := range ps {
			if held(p) {
				df++
			}
		}
		w := idf(nd, df)
		for _, p := range ps {
			if !held(p) {
				continue
			}
			k := int(row[p.Doc]) - 1
			if k < 0 {
				k = len(hits)
				row[p.Doc] = int32(k + 1)
				hits = append(hits, Hit{Index: p.Doc})
				lens = append(lens, float(ix.Lens(p.Doc)))
			}
			hits[k].Score += termScore(float(p.Counts), lens[k], avg, w)
		}
	}
	if len(hits) == 0 {
		return nil, false
	}
	return order(hits, opts), true
}

// order is the hits as opts asks for them: in Search's order, the first
// opts.Limit of them, or as they are (opts.Unsorted).
func order(hits []Hit, opts Options) []Hit {
	if opts.Unsorted {
		return hits
	}
	return best(hits, opts.Limit)
}

// best is the first limit hits in Search's order (byScore), all of them
// when limit is 0: a heap picks a few of many without sorting them all.
func best(hits []Hit, limit int) []Hit {
	if limit <= 0 || limit*8 >= len(hits) {
		slices.SortFunc(hits, byScore)
		if limit > 0 && len(hits) > limit {
			hits = hits[:limit]
		}
		return hits
	}
	// top is a heap of the best limit so far, the worst of them at top[0].
	top := make([]Hit, 0, limit)
	worse := func(a, b Hit) bool { return byScore(a, b) > 0 }
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(top) {
				return
			}
			if c+1 < len(top) && worse(top[c+1], top[c]) {
				c++
			}
			if !worse(top[c], top[i]) {
				return
			}
			top[i], top[c] = top[c], top[i]
			i = c
		}
	}
	for _, h := range hits {
		switch {
		case len(top) < limit:
			top = append(top, h)
			for i := len(top) - 1; i > 0 && worse(top[i], top[(i-1)/2]); i = (i - 1) / 2 {
				top[i], top[(i-1)/2] = top[(i-1)/2], top[i]
			}
		case byScore(h, top[0]) < 0:
			top[0] = h
			down(0)
		}
	}
	slices.SortFunc(top, byScore)
	return top
}

// Totaled is an Indexed that knows the Lens of all its docs added up,
// which SearchIndexed then need not add up for a search of them all.
type Totaled interface {
	LensTotal() [numFields]uint64
}

func float64s(c [numFields]uint64) (f [numFields]float64) {
	for i, v := range c {
		f[i] = float64(v)
	}
	return f
}

func float(c Counts) (f [numFields]float64) {
	for i, v := range c {
		f[i] = float64(v)
	}
	return f
}
