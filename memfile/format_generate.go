package memfile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Generated memories draw words Zipf-distributed from a vocabulary like real
// notes: English function words are the most frequent, then the technical
// words and identifiers agents write about, then a long tail of project
// names (made from syllables), so that a technical query term occurs in a
// few percent of the entries, not in most.
var (
	benchFunction = strings.Fields(`the a to of and for in is it that with on as when use this be by not or
from at we an are if should all so it's can one before after only into must then than`)
	benchTechnical = strings.Fields(`cache caching cached retry retries timeout timeouts database postgres
redis queue worker loop agent test tests build deploy config flag flags max_conns retry-after
useFeatureFlag HTTPServer connection pool session token error errors handler request response async
await promise lock file worktree branch commit merge rebase snapshot memory index query parser
render schema migration endpoint latency throughput batch stream buffer limit`)
	benchSyllables = strings.Fields(`ka lo mi ne ru sa ti vo ze bra cli dro fen gal hux jor kel mav nor pex`)
	benchTypes     = []string{"pattern", "decision", "fix", "solution", "context"}
)

func benchVocabulary(r *rand.Rand) []string {
	word := func() string {
		w := ""
		for range 2 + r.IntN(3) {
			w += benchSyllables[r.IntN(len(benchSyllables))]
		}
		return w
	}
	v := append([]string(nil), benchFunction...)
	for len(v) < 300 {
		v = append(v, word())
	}
	v = append(v, benchTechnical...)
	for len(v) < 3000 {
		v = append(v, word())
	}
	return v
}

// GenerateFile returns a memories.md of about size bytes in orch's format,
// deterministic for a seed: test and benchmark data.
func GenerateFile(size int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	vocab := benchVocabulary(r)
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(w, " ")
	}
	var b bytes.Buffer
	b.WriteString(Header + "\n")
	for n := 0; b.Len() < size; n++ {
		e := Entry{
			ID:      deriveID(fmt.Sprint(seed), n),
			Type:    benchTypes[r.IntN(len(benchTypes))],
			Title:   words(3 + r.IntN(5)),
			Tags:    []string{benchTechnical[r.IntN(len(benchTechnical))], vocab[len(benchFunction)+r.IntN(100)]},
			Date:    fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28)),
			Content: words(30 + r.IntN(40)),
		}
		if n > 0 {
			b.WriteString("\n")
		}
		e.renderOrch(&b)
	}
	return b.Bytes()
}
