package recall

import (
	"slices"
	"testing"
)

// memIndex is an Indexed over docs, built with Terms and Lens.
type memIndex struct {
	docs     []Doc
	postings map[string][]Posting
}

func newMemIndex(docs []Doc) *memIndex {
	ix := &memIndex{docs: docs, postings: map[string][]Posting{}}
	for i := range docs {
		Terms(&docs[i], func(t string, c Counts) { ix.postings[t] = append(ix.postings[t], Posting{i, c}) })
	}
	return ix
}

func (ix *memIndex) Len() int                    { return len(ix.docs) }
func (ix *memIndex) Meta(i int) Doc              { return Doc{Type: ix.docs[i].Type, Tags: ix.docs[i].Tags} }
func (ix *memIndex) Lens(i int) Counts           { return Lens(&ix.docs[i]) }
func (ix *memIndex) Postings(t string) []Posting { return ix.postings[t] }
func (ix *memIndex) Doc(i int) Doc               { return ix.docs[i] }

// TestSearchIndexedMatchesSearch: wherever SearchIndexed answers, it gives
// Search's hits, in Search's order, with Search's scores to the bit; it
// declines only where Search falls back to substrings.
func TestSearchIndexedMatchesSearch(t *testing.T) {
	c := newRandomSearches(3, 4, "onn", "ach", "elvin", "zzz", "ャッ", "ool", "ONN", "e", "api", "con", "pv4", "server cache", "the a", "")
	r := c.r
	answered := 0
	for iter := range 3000 {
		docs := c.docs(r.IntN(3000/(iter%50+1) + 2))
		query, opts := c.query(12), c.options(true)
		want := Search(docs, query, opts)
		var ix Indexed = newMemIndex(docs)
		if iter%2 == 0 {
			ix = totaledIndex{newMemIndex(docs)}
		}
		got, ok := SearchIndexed(ix, nil, query, opts)
		if !ok {
			if slices.ContainsFunc(want, func(h Hit) bool { return h.Score >= 0.01 }) {
				t.Fatalf("iteration %d: query %q: SearchIndexed declined where Search ranks by BM25: %v", iter, query, want)
			}
			continue
		}
		answered++
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d: query %q, opts %+v:\nSearchIndexed %v\nSearch        %v", iter, query, opts, got, want)
		}
		// Over some of the docs: as Search over those docs alone.
		var only []int
		var some []Doc
		for i := range docs {
			if r.IntN(3) > 0 {
				only = append(only, i)
				some = append(some, docs[i])
			}
		}
		if len(only) == 0 {
			continue
		}
		want = Search(some, query, opts)
		for k := range want {
			want[k].Index = only[want[k].Index]
		}
		if got, ok := SearchIndexed(ix, only, query, opts); ok && !slices.Equal(got, want) {
			t.Fatalf("iteration %d, docs %v: query %q, opts %+v:\nSearchIndexed %v\nSearch        %v", iter, only, query, opts, got, want)
		}
	}
	if answered < 1500 {
		t.Fatalf("SearchIndexed answered only %d of 3000 searches", answered)
	}
}

// totaledIndex is a memIndex that knows its total lengths.
type totaledIndex struct{ *memIndex }

func (ix totaledIndex) LensTotal() (t [numFields]uint64) {
	for i := range ix.docs {
		for f, l := range Lens(&ix.docs[i]) {
			t[f] += uint64(l)
		}
	}
	return t
}
