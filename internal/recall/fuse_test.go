package recall

import (
	"math"
	"slices"
	"testing"
)

// unit is v scaled to length 1.
func unit(v ...float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(n))
	}
	return out
}

func TestSemanticFusion(t *testing.T) {
	docs := []Doc{
		{Title: "Set GOMEMLIMIT in every container", Tags: []string{"go"}, Content: "GOMEMLIMIT=900MiB for a 1 GiB limit"},
		{Title: "Dispatcher was killed for running out of RAM", Tags: []string{"k8s"}, Content: "the pod hit its limit at peak"},
		{Title: "Heap grows during report export", Tags: []string{"node"}, Content: "streams instead of buffers"},
		{Title: "Theme colors are CSS custom properties", Tags: []string{"web"}, Content: "dark mode reads prefers-color-scheme"},
	}
	// Meaning, in two made-up dimensions: memory trouble, and styling. The
	// GOMEMLIMIT doc is made far from the query, so that only its words can
	// put it first.
	vecs := [][]float32{unit(-0.2, 1), unit(1, 0), unit(0.9, 0.2), unit(0, 1)}
	memoryQuery := unit(1, 0)
	tests := []struct {
		name  string
		query string
		opts  Options
		want  []int
	}{
		// The doc holding the identifier comes first although the others
		// are closer in meaning; they follow by their rank in meaning.
		{"exact identifier first", "GOMEMLIMIT", Options{}, []int{0, 1, 2}},
		// No doc holds "oom" or "pods": meaning alone ranks them.
		{"meaning finds other words", "oom pods", Options{}, []int{1, 2}},
		// The tag filter holds for docs found by meaning too.
		{"filters apply", "oom pods", Options{Tags: []string{"node"}}, []int{2}},
		{"limit", "oom pods", Options{Limit: 1}, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Semantic = &Semantic{Query: memoryQuery, Docs: vecs}
			got := indexes(Search(docs, tt.query, tt.opts))
			if !slices.Equal(got, tt.want) {
				t.Errorf("Search(%q) = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
}

// Vectors that do not fit the docs (a stale cache, another model) are not
// used: the ranking is the lexical one.
func TestSemanticIgnoredWhenItDoesNotFit(t *testing.T) {
	docs := []Doc{{Title: "retry budget"}, {Title: "pool size"}, {Title: "retry storm"}}
	want := Search(docs, "retry", Options{})
	for _, s := range []*Semantic{
		{Query: unit(1, 0), Docs: [][]float32{unit(1, 0)}},           // fewer vectors than docs
		{Query: nil, Docs: [][]float32{unit(1, 0), unit(1, 0), nil}}, // no query vector
	} {
		got := Search(docs, "retry", Options{Semantic: s})
		if !slices.Equal(got, want) {
			t.Errorf("Search with %+v = %v, want the lexical %v", s, got, want)
		}
	}
	// A doc without a vector, or with one of another length, is ranked by
	// its words only.
	s := &Semantic{Query: unit(1, 0), Docs: [][]float32{nil, unit(1, 0, 0), unit(1, 0)}}
	if got := indexes(Search(docs, "pool", Options{Semantic: s})); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("Search(pool) = %v, want [1 2]: pool by its word, retry storm by meaning", got)
	}
}
