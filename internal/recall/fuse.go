package recall

import (
	"cmp"
	"slices"
	"strings"
)

// Semantic is a ranking by meaning, fused into the lexical one: a vector for
// the query and one per doc, parallel to the docs given to Search (a nil
// vector: the doc has none). Vectors are L2-normalized and of one length, so
// a dot product is their cosine. Package embed computes them.
type Semantic struct {
	Query []float32
	Docs  [][]float32
}

// Text is the text of d an embedder turns into its vector: title, tags and
// content, a line each. Search and the evaluation embed the same text.
func (d *Doc) Text() string {
	return d.Title + "\n" + strings.Join(d.Tags, ", ") + "\n" + d.Content
}

// rrfK is the constant of reciprocal rank fusion: a doc scores
// 1/(rrfK + rank) in each ranking it is in. 60 is the value of the method's
// paper (Cormack, Clarke and Büttcher, 2009); it keeps one ranking's top from
// drowning the other's.
const rrfK = 60

// fullBonus lifts the docs that hold every query term above all the others:
// a fused score is below 2/(rrfK+1).
const fullBonus = 1

// usable reports whether s can rank n docs.
func (s *Semantic) usable(n int) bool {
	return s != nil && len(s.Query) > 0 && len(s.Docs) == n
}

// fuse merges the lexical hits (full: whether each holds every scored
// query term) with the docs of idx ranked by cosine to the query (those
// above 0), by reciprocal rank fusion. The docs that hold every query term
// come first, so an exact identifier is never outranked by a doc that is
// only similar; then the others. The scores are the fused ones (plus
// fullBonus for the first group).
func (s *Semantic) fuse(idx []int, hits []Hit, full []bool) []Hit {
	order := make([]int, len(hits))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(x, y int) int { return byScore(hits[x], hits[y]) })
	score := make(map[int]float64, len(hits))
	for r, k := range order {
		score[hits[k].Index] = 1 / float64(rrfK+r+1)
		if full[k] {
			score[hits[k].Index] += fullBonus
		}
	}
	sem := make([]Hit, 0, len(idx))
	for _, i := range idx {
		if v := s.Docs[i]; len(v) == len(s.Query) {
			if c := dot(s.Query, v); c > 0 {
				sem = append(sem, Hit{Index: i, Score: float64(c)})
			}
		}
	}
	slices.SortFunc(sem, byScore)
	for r, h := range sem {
		score[h.Index] += 1 / float64(rrfK+r+1)
	}
	out := make([]Hit, 0, len(score))
	for i, sc := range score {
		out = append(out, Hit{Index: i, Score: sc})
	}
	return out
}

// byScore orders hits best first; ties put the newer doc (higher Index) first.
func byScore(x, y Hit) int {
	if c := cmp.Compare(y.Score, x.Score); c != 0 {
		return c
	}
	return cmp.Compare(y.Index, x.Index)
}

// dot is the dot product of two vectors of one length.
func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
