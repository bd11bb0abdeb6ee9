package memfile

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// benchWords is the vocabulary of generated memories: English-ish text with
// the identifiers agents write about.
var benchWords = strings.Fields(`the a to of and for in with when use cache caching cached retry retries timeout
timeouts database postgres redis queue worker loop agent test tests build deploy config flag flags
max_conns retry-after useFeatureFlag HTTPServer connection pool session token error errors handler
request response async await promise lock file worktree branch commit merge rebase snapshot memory
index query parser render schema migration endpoint latency throughput batch stream buffer limit`)

var benchTypes = []string{"pattern", "decision", "fix", "solution", "context"}

// GenerateFile returns a memories.md of about size bytes in orch's format,
// deterministic for a seed: test and benchmark data.
func GenerateFile(size int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b strings.Builder
	b.WriteString(Header + "\n")
	for n := 0; b.Len() < size; n++ {
		words := func(k int) string {
			w := make([]string, k)
			for i := range w {
				w[i] = benchWords[r.IntN(len(benchWords))]
			}
			return strings.Join(w, " ")
		}
		e := Entry{
			ID:      encodeID([]byte(fmt.Sprintf("%012d", n*7919+int(seed)))),
			Type:    benchTypes[r.IntN(len(benchTypes))],
			Title:   words(3 + r.IntN(5)),
			Tags:    strings.Fields(words(1 + r.IntN(3))),
			Date:    fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28)),
			Content: words(30 + r.IntN(40)),
		}
		if n > 0 {
			b.WriteString("\n")
		}
		e.renderOrch(&b)
	}
	return []byte(b.String())
}
