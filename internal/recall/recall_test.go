package recall

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func indexes(hits []Hit) []int {
	out := make([]int, len(hits))
	for i, h := range hits {
		out[i] = h.Index
	}
	return out
}

func TestSearchRanking(t *testing.T) {
	long := strings.Repeat("some unrelated words about the deployment pipeline and logging. ", 20)
	tests := []struct {
		name  string
		docs  []Doc
		query string
		opts  Options
		want  []int
	}{
		{
			name: "title beats content",
			docs: []Doc{
				{Title: "Pool sizing", Content: "the retry budget is small"},
				{Title: "Retry budget", Content: "keep it small"},
				{Title: "Logging", Content: "nothing here"},
			},
			query: "retry",
			want:  []int{1, 0},
		},
		{
			name: "tags beat content",
			docs: []Doc{
				{Title: "Pool sizing", Tags: []string{"postgres"}, Content: "notes"},
				{Title: "Pool sizing", Content: "we use postgres here"},
			},
			query: "postgres",
			want:  []int{0, 1},
		},
		{
			name: "many mentions in a short body beat one in a long body",
			docs: []Doc{
				{Title: "A", Content: "timeout timeout: the timeout fires early"},
				{Title: "B", Content: long + " timeout " + long},
			},
			query: "timeout",
			want:  []int{0, 1},
		},
		{
			name: "inflection",
			docs: []Doc{
				{Title: "Responses are cached for a minute"},
				{Title: "Unrelated"},
				{Title: "We cache", Content: "caches everywhere"},
			},
			query: "caching",
			want:  []int{2, 0},
		},
		{
			name: "identifier split",
			docs: []Doc{
				{Title: "Flags", Content: "call useFeatureFlag before render"},
				{Title: "Other", Content: "a feature"},
				{Title: "Nothing"},
			},
			query: "feature flag",
			want:  []int{0, 1},
		},
		{
			name: "whole identifier first",
			docs: []Doc{
				{Title: "Pool", Content: "set max_conns to 20"},
				{Title: "Limits", Content: "max retries is 3, and conns are pooled"},
				{Title: "Limits", Content: "the max is 3"},
			},
			query: "max_conns",
			want:  []int{0, 1, 2},
		},
		{
			name: "camel identifier found by snake query",
			docs: []Doc{
				{Title: "Pool", Content: "MaxConns is 20"},
				{Title: "Other", Content: "nothing"},
			},
			query: "max_conns",
			want:  []int{0},
		},
		{
			name: "ties: newer first",
			docs: []Doc{
				{Title: "retry"},
				{Title: "retry"},
				{Title: "retry"},
			},
			query: "retry",
			want:  []int{2, 1, 0},
		},
		{
			name: "type filter",
			docs: []Doc{
				{Title: "retry a", Type: "fix"},
				{Title: "retry b", Type: "pattern"},
				{Title: "retry c", Type: "Fix"},
			},
			query: "retry",
			opts:  Options{Type: "FIX"},
			want:  []int{2, 0},
		},
		{
			name: "tag filter needs all tags",
			docs: []Doc{
				{Title: "retry a", Tags: []string{"go", "db"}},
				{Title: "retry b", Tags: []string{"go"}},
				{Title: "retry c", Tags: []string{"DB", "Go", "x"}},
			},
			query: "retry",
			opts:  Options{Tags: []string{"go", "db"}},
			want:  []int{2, 0},
		},
		{
			name: "any-tag filter needs one of them",
			docs: []Doc{
				{Title: "retry a", Tags: []string{"go", "db"}},
				{Title: "retry b", Tags: []string{"web"}},
				{Title: "retry c", Tags: []string{"DB", "x"}},
				{Title: "retry d"},
			},
			query: "retry",
			opts:  Options{AnyTags: []string{"WEB", "none"}},
			want:  []int{1},
		},
		{
			name: "limit",
			docs: []Doc{
				{Title: "retry"}, {Title: "retry retry"}, {Title: "retry"}, {Title: "retry"},
			},
			query: "retry",
			opts:  Options{Limit: 2},
			want:  []int{1, 3},
		},
		{
			name:  "empty query: all, newest first",
			docs:  []Doc{{Title: "a"}, {Title: "b"}, {Title: "c"}},
			query: "  ",
			want:  []int{2, 1, 0},
		},
		{
			name:  "empty query with filter and limit",
			docs:  []Doc{{Type: "fix"}, {Type: "pattern"}, {Type: "fix"}, {Type: "fix"}},
			query: "",
			opts:  Options{Type: "fix", Limit: 2},
			want:  []int{3, 2},
		},
		{
			name: "fallback: substring inside a word",
			docs: []Doc{
				{Title: "Pool", Content: "set max_conns to 20"},
				{Title: "Other", Content: "nothing"},
				{Title: "Onnx models"},
			},
			query: "onn",
			want:  []int{2, 0},
		},
		{
			name: "fallback counts every term, stopwords too",
			docs: []Doc{
				{Title: "Pool", Content: "set max_conns in the config"},
				{Title: "Other"},
				{Title: "Nope"},
				{Title: "Pool", Content: "set max_conns"},
			},
			query: "the onn",
			want:  []int{0, 3, 1},
		},
		{
			name: "stopwords do not drown the real term",
			docs: []Doc{
				{Title: "How to fix the build", Content: "the the the"},
				{Title: "Cache", Content: "warm the cache"},
			},
			query: "how to fix the cache",
			want:  []int{1, 0},
		},
		{
			name:  "no match",
			docs:  []Doc{{Title: "Pool", Content: "set max_conns to 20"}},
			query: "zebra",
			want:  []int{},
		},
		{
			name:  "no docs",
			query: "zebra",
			want:  []int{},
		},
		{
			name: "japanese",
			docs: []Doc{
				{Title: "Redisのキャッシュ設定", Content: "TTLは60秒"},
				{Title: "ログ"},
			},
			query: "キャッシュ",
			want:  []int{0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits := Search(tc.docs, tc.query, tc.opts)
			if got := indexes(hits); !slices.Equal(got, tc.want) {
				t.Fatalf("Search(%q) = %v, want %v (hits %v)", tc.query, got, tc.want, hits)
			}
		})
	}
}

func TestSearchScores(t *testing.T) {
	docs := []Doc{
		{Title: "Pool", Content: "set max_conns to 20"},
		{Title: "Retry", Content: "retry after 413"},
	}
	if hits := Search(docs, "retry", Options{}); len(hits) != 1 || hits[0].Score <= 0.01 {
		t.Errorf("BM25 hit %v: want one hit with a real score", hits)
	}
	if hits := Search(docs, "onn", Options{}); len(hits) != 1 || hits[0].Score <= 0 || hits[0].Score > 0.01 {
		t.Errorf("fallback hit %v: want one hit with a small score", hits)
	}
	for _, h := range Search(docs, "", Options{}) {
		if h.Score != 0 {
			t.Errorf("empty query hit %v: want score 0", h)
		}
	}
}

// slowSearch is Search without the substring prefilter: it tokenizes every
// field of every doc.
func slowSearch(docs []Doc, query string, opts Options) []Hit {
	var idx []int
	for i := range docs {
		if keep(&docs[i], opts) {
			idx = append(idx, i)
		}
	}
	terms := queryTerms(query)
	var hits []Hit
	if len(terms) == 0 {
		for _, i := range idx {
			hits = append(hits, Hit{Index: i})
		}
	} else {
		scoring := withoutStopwords(terms)
		fields := func(d Doc) [numFields][]string {
			return [numFields][]string{{d.Title}, d.Tags, {d.Type}, {d.Content}}
		}
		var avg [numFields]float64
		tf := map[int][][numFields]float64{}
		df := make([]float64, len(scoring))
		for _, i := range idx {
			row := make([][numFields]float64, len(scoring))
			for f, texts := range fields(docs[i]) {
				for _, text := range texts {
					avg[f] += float64(len(text))
					for _, tok := range Tokens(text) {
						if t := slices.Index(scoring, tok); t >= 0 {
							row[t][f]++
						}
					}
				}
			}
			for t := range row {
				if row[t] != [numFields]float64{} {
					df[t]++
				}
			}
			tf[i] = row
		}
		n := float64(len(idx))
		for f := range avg {
			avg[f] /= n
		}
		for _, i := range idx {
			var lens [numFields]float64
			for f, texts := range fields(docs[i]) {
				for _, text := range texts {
					lens[f] += float64(len(text))
				}
			}
			score := 0.0
			for t, row := range tf[i] {
				x := 0.0
				for f := range row {
					if row[f] > 0 {
						x += weights[f] * row[f] / (1 - b + b*lens[f]/avg[f])
					}
				}
				if x > 0 {
					score += math.Log(1+(n-df[t]+0.5)/(df[t]+0.5)) * x * (k1 + 1) / (x + k1)
				}
			}
			if score > 0 {
				hits = append(hits, Hit{Index: i, Score: score})
			}
		}
		if len(hits) == 0 {
			for _, i := range idx {
				found := 0
				for _, term := range terms {
					for _, texts := range fields(docs[i]) {
						if slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(lower(s), term) }) {
							found++
							break
						}
					}
				}
				if found > 0 {
					hits = append(hits, Hit{Index: i, Score: fallbackScore * float64(found)})
				}
			}
		}
	}
	slices.SortFunc(hits, func(x, y Hit) int {
		if c := cmp.Compare(y.Score, x.Score); c != 0 {
			return c
		}
		return cmp.Compare(y.Index, x.Index)
	})
	if opts.Limit > 0 && len(hits) > opts.Limit {
		hits = hits[:opts.Limit]
	}
	return hits
}

// lower lowercases s rune by rune like strings.ToLower, but keeps invalid
// UTF-8 bytes as they are rather than turning them into U+FFFD.
func lower(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			sb.WriteByte(s[i])
		} else {
			sb.WriteRune(unicode.ToLower(r))
		}
		i += n
	}
	return sb.String()
}

var words = strings.Fields(`cache caches cached Caching max_conns MaxConns maxConn conn conns
	retry-after Retry retries retried useFeatureFlag feature flags HTTPServer http server
	v2 413 connection Connect the a is to ÉCOLE école Kelvin \u212Aelvin İstanbul istanbul
	キャッシュ キャ 🚀 onnx class classes add added pool_size pool-size PoolSize fix pattern
	falcon reCache precached v2Api IPv4 2api Server xMaxConns ÉCOLEcache`)

// randomSearches makes the random cases of the property tests: docs and
// queries of the test words, and options.
type randomSearches struct {
	r       *rand.Rand
	words   []string
	queries []string // asked now and then instead of a phrase
}

func newRandomSearches(seed1, seed2 uint64, queries ...string) *randomSearches {
	words := append(words, "\u212Aelvin") // strings.Fields does not see the escape above
	return &randomSearches{rand.New(rand.NewPCG(seed1, seed2)), words, queries}
}

// word is one of the words.
func (c *randomSearches) word() string { return c.words[c.r.IntN(len(c.words))] }

// phrase is 1 to n words, joined in the ways text joins them.
func (c *randomSearches) phrase(n int) string {
	var sb strings.Builder
	for range c.r.IntN(n) + 1 {
		sb.WriteString(c.word())
		sb.WriteString([]string{" ", " ", ", ", "\n", "_", "-", ""}[c.r.IntN(7)])
	}
	return sb.String()
}

// docs are n docs of phrases, types and up to two tags.
func (c *randomSearches) docs(n int) []Doc {
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = Doc{Title: c.phrase(4), Type: []string{"fix", "pattern", "Fix", ""}[c.r.IntN(4)], Content: c.phrase(20)}
		for range c.r.IntN(3) {
			docs[i].Tags = append(docs[i].Tags, c.word())
		}
	}
	return docs
}

// query is a phrase of up to n words, or one of the queries.
func (c *randomSearches) query(n int) string {
	q := c.phrase(n)
	if c.r.IntN(5) == 0 {
		q = c.queries[c.r.IntN(len(c.queries))]
	}
	return q
}

// options are a type, tag and limit now and then; with all, also any-tags
// and keywords (which slowSearch does not know).
func (c *randomSearches) options(all bool) Options {
	var opts Options
	if c.r.IntN(4) == 0 {
		opts.Type = "fix"
	}
	if c.r.IntN(4) == 0 {
		opts.Tags = []string{c.word()}
	}
	if all && c.r.IntN(4) == 0 {
		opts.AnyTags = []string{c.word(), c.word()}
	}
	if c.r.IntN(4) == 0 {
		opts.Limit = c.r.IntN(4)
	}
	if all && c.r.IntN(3) == 0 {
		opts.Keywords, opts.MaxTerms = true, 1+c.r.IntN(8)
	}
	return opts
}

// TestSearchMatchesSlowSearch checks that the prefilter never changes results.
func TestSearchMatchesSlowSearch(t *testing.T) {
	c := newRandomSearches(1, 2, "onn", "ach", "elvin", "zzz", "ャッ", "ool", "ONN", "e", "api", "con", "pv4", "server cache", "the a")
	for iter := range 3000 {
		docs := c.docs(c.r.IntN(12))
		query, opts := c.query(3), c.options(false)
		got, want := Search(docs, query, opts), slowSearch(docs, query, opts)
		same := len(got) == len(want)
		for i := 0; same && i < len(got); i++ {
			same = got[i].Index == want[i].Index && math.Abs(got[i].Score-want[i].Score) < 1e-9
		}
		if !same {
			t.Fatalf("iteration %d: query %q, opts %+v, docs %q:\nSearch     %v\nslowSearch %v", iter, query, opts, docs, got, want)
		}
	}
}

func TestSearchDeterministic(t *testing.T) {
	docs := benchDocs(2000)
	first := Search(docs, "connection timeout retry", Options{})
	if len(first) == 0 {
		t.Fatal("no hits")
	}
	for range 3 {
		if got := Search(docs, "connection timeout retry", Options{}); !slices.Equal(got, first) {
			t.Fatal("results differ between runs")
		}
	}
}

// benchDocs makes n English-ish memories of about 350 bytes each: words
// drawn with Zipf's law from common English and programming words, then a
// long tail of made-up words, with identifiers among them.
func benchDocs(n int) []Doc {
	vocab := strings.Fields(`the a to of and in is for on with that it as be this by
		we use when not from or are if set run build test error fix config file cache
		server request response client database query index table user session token
		timeout retry connection pool limit memory log logging deploy release version
		branch commit merge review lint format parse write read update delete create
		check handle return value type string int list map slice struct interface method
		function package module import export default option flag feature env variable
		path directory url http https json yaml api endpoint header body status code
		failed failing fails works working slow fast faster lock mutex goroutine channel
		context cancel deadline worker queue job task schedule cron batch stream buffer
		max_conns retry-after useFeatureFlag HTTPServer v2 413 maxRetries pool_size
		ctx.Done() go.mod package.json Dockerfile CI pipeline k8s pod node service`)
	r := rand.New(rand.NewPCG(42, 7))
	syllables := strings.Fields("ba be bi bo bu da de di do ka ke ko la le li lo ma me mi mo na ne ni no pa pe po ra re ri ro sa se si so ta te ti to va ve vi tra tre pro pre con ver ter man sel mor lin")
	for range 4000 {
		var w string
		for range 2 + r.IntN(3) {
			w += syllables[r.IntN(len(syllables))]
		}
		vocab = append(vocab, w+[]string{"", "", "", "s", "ed", "ing", "er", "ion"}[r.IntN(8)])
	}
	tags := strings.Fields("go db ci http cache test deploy auth perf api")
	types := []string{"pattern", "fix", "solution", "decision"}
	zipf := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	sentence := func(n int) string {
		var sb strings.Builder
		for i := range n {
			w := vocab[zipf.Uint64()]
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				sb.WriteByte(' ')
			}
			sb.WriteString(w)
		}
		return sb.String()
	}
	docs := make([]Doc, n)
	for i := range docs {
		d := Doc{Title: sentence(4 + r.IntN(5)), Type: types[r.IntN(len(types))]}
		for range r.IntN(3) + 1 {
			d.Tags = append(d.Tags, tags[r.IntN(len(tags))])
		}
		var body []string
		for range 4 + r.IntN(4) {
			body = append(body, sentence(5+r.IntN(8))+".")
		}
		d.Content = strings.Join(body, " ")
		docs[i] = d
	}
	return docs
}

func BenchmarkSearch30k(b *testing.B) {
	docs := benchDocs(30000)
	size := 0
	for _, d := range docs {
		size += len(d.Title) + len(d.Type) + len(d.Content) + len(strings.Join(d.Tags, ", "))
	}
	const query = "connection pool timeout"
	hits := len(Search(docs, query, Options{}))
	b.ReportMetric(float64(size)/1e6, "MB")
	b.ReportMetric(float64(hits), "hits")
	b.ResetTimer()
	for b.Loop() {
		Search(docs, query, Options{})
	}
}

func ExampleSearch() {
	docs := []Doc{
		{Title: "Database pool", Type: "pattern", Content: "Set max_conns to 20 for Postgres."},
		{Title: "Cache headers", Type: "fix", Content: "Responses are cached for 60s."},
	}
	for _, h := range Search(docs, "caching", Options{}) {
		fmt.Println(docs[h.Index].Title)
	}
	// Output: Cache headers
}

// FuzzSearch checks Search against slowSearch on arbitrary text: docs are
// the text split at '|', with the title before the first newline.
func FuzzSearch(f *testing.F) {
	f.Add("Pool|set max_conns to 20|HTTPServer retry-after\nuseFeatureFlag", "max_conns")
	f.Add("Caching\ncached caches|\u212Aelvin İstanbul|キャッシュ設定", "caching kelvin istanbul キャッシュ")
	f.Add("falcon reCache|v2Api IPv4", "con cache api pv4")
	f.Add("bad\xff\xfe|\ufffd ok", "\ufffd zz")
	f.Fuzz(func(t *testing.T, text, query string) {
		var docs []Doc
		for _, part := range strings.Split(text, "|") {
			title, content, _ := strings.Cut(part, "\n")
			docs = append(docs, Doc{Title: title, Content: content, Tags: strings.Fields(content)})
		}
		got, want := Search(docs, query, Options{}), slowSearch(docs, query, Options{})
		same := len(got) == len(want)
		for i := 0; same && i < len(got); i++ {
			same = got[i].Index == want[i].Index && math.Abs(got[i].Score-want[i].Score) < 1e-9
		}
		if !same {
			t.Fatalf("query %q, docs %q:\nSearch     %v\nslowSearch %v", query, docs, got, want)
		}
	})
}

// TestParallelCountSameScores: counting in parts on several cores gives
// exactly the scores of counting on one.
func TestParallelCountSameScores(t *testing.T) {
	docs := benchDocs(4 * minPart)
	if len(docs) < 2*minPart {
		t.Fatalf("only %d docs", len(docs))
	}
	prev := runtime.GOMAXPROCS(1)
	one := Search(docs, "retry timeout cache", Options{})
	runtime.GOMAXPROCS(max(prev, 4))
	many := Search(docs, "retry timeout cache", Options{})
	runtime.GOMAXPROCS(prev)
	if len(one) == 0 || !slices.Equal(one, many) {
		t.Fatalf("one core: %d hits, several: %d hits, or different scores", len(one), len(many))
	}
}

// TestMaxTerms: a long query keeps its most specific terms: words in most
// docs go first, even before words the sample did not find.
func TestMaxTerms(t *testing.T) {
	var docs []Doc
	for i := range 2000 {
		docs = append(docs, Doc{Title: fmt.Sprintf("note %d", i), Content: "the build uses make and the tests use go test"})
	}
	docs[1234].Content += " postgres pool limits"
	q := "make the build and tests pass with postgres"
	if all := Search(docs, q, Options{}); len(all) != len(docs) || all[0].Index != 1234 {
		t.Fatalf("without MaxTerms: %d hits, first %v", len(all), all[0])
	}
	hits := Search(docs, q, Options{Keywords: true, MaxTerms: 2})
	if len(hits) != 1 || hits[0].Index != 1234 {
		t.Fatalf("MaxTerms 2: hits %v, want only doc 1234", hits)
	}
}
