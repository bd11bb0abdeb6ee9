// Package similar tells near-duplicate memory entries apart from related
// but different ones: the same fact in other words (a person keeps one)
// against a fact that differs in a number, a name or a path (keep both).
//
// A text's terms are search's (package recall: lower case, stemmed,
// identifiers whole and split) less a few function words; two texts are as
// similar as the share of terms they have in common (Jaccard), quartered
// when one holds a specific term the other lacks (a number, a path, an
// identifier). Threshold was tuned on testdata/pairs.txt, a labelled set of
// pairs written for memsync (see the test for its precision and recall).
package similar

import (
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/memsync/memsync/internal/recall"
)

// Threshold is the score from which two texts are near-duplicates.
const Threshold = 0.4

// Set is what a text is compared by.
type Set struct {
	terms    []uint64 // sorted, unique
	specific []uint64 // sorted, unique: numbers, paths, identifiers
}

// Of is the Set of text.
func Of(text string) Set {
	var s Set
	for _, t := range recall.Tokens(text) {
		if !stop()[t] {
			s.terms = append(s.terms, hash(t))
		}
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(",;:()[]{}\"'`!?", r)
	}) {
		w = strings.TrimRight(w, ".")
		if specific(w) {
			s.specific = append(s.specific, hash(w))
		}
	}
	s.terms = sortUnique(s.terms)
	s.specific = sortUnique(s.specific)
	return s
}

// Terms are the distinct terms a text's Set holds, as words (what a search
// index's postings are keyed by), in the order they first occur.
func Terms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range recall.Tokens(text) {
		if !stop()[t] && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// MayBeNear tells whether a text sharing common of the n terms of another
// can be its near-duplicate: Score is at most the share of terms in common,
// so one below Threshold of n cannot. Finding the entries that share at
// least that many terms (from an index's postings) finds every
// near-duplicate without comparing every entry.
func MayBeNear(common, n int) bool {
	return n > 0 && float64(common) >= Threshold*float64(n)-1e-9
}

// Empty tells a text with no terms (nothing to compare).
func (s Set) Empty() bool { return len(s.terms) == 0 }

// Score is how similar a and b are, 0 to 1.
func Score(a, b Set) float64 {
	if a.Empty() || b.Empty() {
		return 0
	}
	common := intersect(a.terms, b.terms)
	j := float64(common) / float64(len(a.terms)+len(b.terms)-common)
	if intersect(a.specific, b.specific) != max(len(a.specific), len(b.specific)) {
		j /= 4 // a number, path or identifier on one side only: another fact
	}
	return j
}

// Near tells whether a and b are near-duplicates.
func Near(a, b Set) bool { return Score(a, b) >= Threshold }

// specific tells a word that names one thing: with a digit, or a path or
// identifier ("db/pool.go", "max_conns", "config.yaml").
func specific(w string) bool {
	for _, r := range w {
		if unicode.IsDigit(r) {
			return true
		}
	}
	return strings.ContainsAny(strings.Trim(w, "./_-"), "/._")
}

func intersect(a, b []uint64) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			n++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return n
}

func sortUnique(x []uint64) []uint64 {
	slices.Sort(x)
	return slices.Compact(x)
}

func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// stop are function words, as recall.Tokens gives them (a change makes
// other Sets: cacheMagic's version goes up with it).
var stop = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("a an the is are be been was were it its this that these those to of in on at by for from with as and or not no do does must should can may will would has have had than then so if when which who what there here into onto our your their we you they i e g eg about after before over under via also just only all any some such like but very") {
		for _, t := range recall.Tokens(w) {
			m[t] = true
		}
	}
	return m
})
