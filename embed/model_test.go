package embed

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// tinyVocab is the word-piece vocabulary of the generated test model; a
// token's id is its index.
var tinyVocab = []string{
	"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
	"the", "cache", "push", "notification", "token", "##ize", "##r", "##s",
	"un", "##able", "to", "deploy", "dark", "mode", "cafe", "resume", "build",
	"test", "go", "fail", "##ed", "##ure", "##ing", "a", "b", "i", "phone",
	"theme", "color", "scheme", "setting", "never", "arrive", "why", "do",
	"on", "in", "中", "!", ".", ",", "?", "-", "'", "_",
}

// tinyRow is row i of the test embedding matrix: multiples of 1/8 small
// enough to be exact in F16 and BF16.
func tinyRow(i int) []float32 {
	v := make([]float32, 8)
	for j := range v {
		v[j] = float32((i*3+j*5)%11-5) / 8
	}
	return v
}

func tinyWeight(id int) float32 { return 0.5 + float32(id%4)/4 }

type modelOpts struct {
	dtype   string // F32, F16 or BF16
	weights bool
	mapping bool // rows shared through a mapping: token id -> id % 7
}

// f16bits encodes an exactly representable normal float32 (or zero) as F16.
func f16bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>31) << 15
	if b&0x7fffffff == 0 {
		return sign
	}
	exp := int(b>>23&0xff) - 127 + 15
	return sign | uint16(exp)<<10 | uint16(b>>13&0x3ff)
}

// writeSafetensors writes tensors (name -> dtype, shape, bytes) as a
// safetensors file.
func writeSafetensors(t testing.TB, path string, tensors map[string]stTensor) {
	t.Helper()
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	head := map[string]any{}
	var data []byte
	for _, n := range names {
		tt := tensors[n]
		head[n] = map[string]any{"dtype": tt.dtype, "shape": tt.shape, "data_offsets": []int{len(data), len(data) + len(tt.data)}}
		data = append(data, tt.data...)
	}
	h, _ := json.Marshal(head)
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	b = append(append(b, h...), data...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type stTensor struct {
	dtype string
	shape []int
	data  []byte
}

func encodeFloats(dtype string, vals []float32) []byte {
	var b []byte
	for _, x := range vals {
		switch dtype {
		case "F32":
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		case "F16":
			b = binary.LittleEndian.AppendUint16(b, f16bits(x))
		case "BF16":
			b = binary.LittleEndian.AppendUint16(b, uint16(math.Float32bits(x)>>16))
		case "F64":
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(x)))
		}
	}
	return b
}

// tokenizerJSON is a WordPiece tokenizer.json over vocab, as potion models
// have it, with max_input_chars_per_word 12.
func tokenizerJSON(vocab []string) map[string]any {
	v := map[string]int{}
	for i, s := range vocab {
		v[s] = i
	}
	var added []map[string]any
	for i, s := range vocab[:5] {
		added = append(added, map[string]any{"id": i, "content": s, "single_word": false, "lstrip": false,
			"rstrip": false, "normalized": false, "special": true})
	}
	return map[string]any{
		"version":        "1.0",
		"truncation":     nil,
		"padding":        nil,
		"added_tokens":   added,
		"normalizer":     map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer":  map[string]any{"type": "BertPreTokenizer"},
		"post_processor": nil,
		"decoder":        map[string]any{"type": "WordPiece", "prefix": "##", "cleanup": true},
		"model": map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
			"max_input_chars_per_word": 12, "vocab": v},
	}
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeTinyModel writes the generated test model into a new temp folder.
func writeTinyModel(t testing.TB, o modelOpts) string {
	t.Helper()
	dir := t.TempDir()
	rows := len(tinyVocab)
	if o.mapping {
		rows = 7
	}
	var flat []float32
	for i := 0; i < rows; i++ {
		flat = append(flat, tinyRow(i)...)
	}
	ts := map[string]stTensor{"embeddings": {o.dtype, []int{rows, 8}, encodeFloats(o.dtype, flat)}}
	if o.weights {
		var w []float32
		for i := range tinyVocab {
			w = append(w, tinyWeight(i))
		}
		ts["weights"] = stTensor{"F64", []int{len(w)}, encodeFloats("F64", w)}
	}
	if o.mapping {
		var m []byte
		for i := range tinyVocab {
			m = binary.LittleEndian.AppendUint64(m, uint64(i%7))
		}
		ts["mapping"] = stTensor{"I64", []int{len(tinyVocab)}, m}
	}
	writeSafetensors(t, filepath.Join(dir, ModelFile), ts)
	writeJSON(t, filepath.Join(dir, TokenizerFile), tokenizerJSON(tinyVocab))
	writeJSON(t, filepath.Join(dir, ConfigFile), map[string]any{"model_type": "model2vec", "normalize": true, "hidden_dim": 8})
	return dir
}

func TestTokenize(t *testing.T) {
	m, err := LoadModel2Vec(writeTinyModel(t, modelOpts{dtype: "F32"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Café Résumé!", []string{"cafe", "resume", "!"}},        // lowercase, accents stripped, punctuation split
		{"tokenizers", []string{"token", "##ize", "##r", "##s"}}, // ##continuations, longest first
		{"Pushing tokens", []string{"push", "##ing", "token", "##s"}},
		{"unable to deploy, never", []string{"un", "##able", "to", "deploy", ",", "never"}},
		{"xyzzy cache", []string{"[UNK]", "cache"}}, // unknown word: one [UNK]
		{"cachez", []string{"[UNK]"}},               // a part not in the vocab spoils the word
		{"notification", []string{"notification"}},  // 12 characters: allowed
		{"notifications", []string{"[UNK]"}},        // 13 > max_input_chars_per_word
		{"dark_mode-theme", []string{"dark", "_", "mode", "-", "theme"}},
		{"a中b", []string{"a", "中", "b"}},                                 // CJK padded with spaces
		{"push\x00\u200bing\ttest\n", []string{"push", "##ing", "test"}}, // control and format characters dropped
		{"a[SEP]b [CLS]", []string{"a", "[SEP]", "b", "[CLS]"}},          // added tokens matched verbatim
		{"", nil},
	} {
		if got := m.tok.tokens(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("tokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// want is the hand-computed vector: the normalized (weighted) sum of the
// rows of the tokens, unknown tokens left out.
func want(o modelOpts, tokens ...string) []float32 {
	s := make([]float64, 8)
	for _, tok := range tokens {
		id := -1
		for i, v := range tinyVocab {
			if v == tok {
				id = i
			}
		}
		row := id
		if o.mapping {
			row = id % 7
		}
		w := float32(1)
		if o.weights {
			w = tinyWeight(id)
		}
		for j, x := range tinyRow(row) {
			s[j] += float64(w * x)
		}
	}
	var n float64
	for _, x := range s {
		n += x * x
	}
	out := make([]float32, 8)
	for j := range s {
		if n > 0 {
			out[j] = float32(s[j] / math.Sqrt(n))
		}
	}
	return out
}

func TestEmbedIsNormalizedMean(t *testing.T) {
	for _, o := range []modelOpts{
		{dtype: "F32"}, {dtype: "F16"}, {dtype: "BF16"},
		{dtype: "F32", weights: true}, {dtype: "F16", weights: true},
		{dtype: "F32", weights: true, mapping: true},
	} {
		m, err := LoadModel2Vec(writeTinyModel(t, o))
		if err != nil {
			t.Fatal(o, err)
		}
		if m.Dim() != 8 || !m.Normalize {
			t.Fatalf("%+v: dim %d normalize %v", o, m.Dim(), m.Normalize)
		}
		texts := []string{"Cache tokens", "cafe xyzzy", "cafe", "xyzzy", "the the cache"}
		got, err := m.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		wants := [][]float32{
			want(o, "cache", "token", "##s"),
			want(o, "cafe"), // the unknown word is dropped, not averaged in
			want(o, "cafe"),
			make([]float32, 8), // nothing known: the zero vector
			want(o, "the", "the", "cache"),
		}
		for i := range texts {
			for j := range wants[i] {
				if math.Abs(float64(got[i][j]-wants[i][j])) > 1e-6 {
					t.Fatalf("%+v: Embed(%q) = %v, want %v", o, texts[i], got[i], wants[i])
				}
			}
		}
		if c := Cosine(got[0], got[0]); math.Abs(float64(c-1)) > 1e-6 {
			t.Errorf("%+v: |v|² = %v", o, c)
		}
	}
}

func TestEmbedTruncatesLikeModel2Vec(t *testing.T) {
	m, err := LoadModel2Vec(writeTinyModel(t, modelOpts{dtype: "F32"}))
	if err != nil {
		t.Fatal(err)
	}
	// 511 "a" then "cache": 512 tokens, all averaged; one more "a" pushes
	// "cache" past the 512th token.
	in := strings.Repeat("a ", 511) + "cache"
	if got := m.ids(in); len(got) != 512 || got[511] != 6 {
		t.Fatalf("ids: %d tokens, last %d", len(got), got[len(got)-1])
	}
	if got := m.ids("a " + in); len(got) != 512 || got[511] != 28 {
		t.Fatalf("ids: %d tokens, last %d", len(got), got[len(got)-1])
	}
	// The text is first cut to 512 times the median token length in
	// characters (4 here): "cache" after 2048 characters is never seen.
	if m.tok.medianLen != 4 {
		t.Fatalf("median token length %d", m.tok.medianLen)
	}
	long := strings.Repeat("xyzzy ", 400) + "cache"
	if got := m.ids(long); len(got) != 0 {
		t.Fatalf("ids of a long text: %v", got)
	}
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	good := writeTinyModel(t, modelOpts{dtype: "F32"})
	copyModel := func() string {
		dir := t.TempDir()
		for _, f := range []string{ModelFile, TokenizerFile, ConfigFile} {
			b, err := os.ReadFile(filepath.Join(good, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	emb := encodeFloats("F32", make([]float32, len(tinyVocab)*8))
	rawHeader := func(dir, head string, data []byte) {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(head)))
		b = append(append(b, head...), data...)
		if err := os.WriteFile(filepath.Join(dir, ModelFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tokWith := func(dir string, edit func(map[string]any)) {
		j := tokenizerJSON(tinyVocab)
		edit(j)
		writeJSON(t, filepath.Join(dir, TokenizerFile), j)
	}
	cases := []struct {
		name  string
		setup func(dir string)
		file  string
		msg   string
	}{
		{"missing model", func(d string) { _ = os.Remove(filepath.Join(d, ModelFile)) }, ModelFile, "no such file"},
		{"missing tokenizer", func(d string) { _ = os.Remove(filepath.Join(d, TokenizerFile)) }, TokenizerFile, "no such file"},
		{"missing config", func(d string) { _ = os.Remove(filepath.Join(d, ConfigFile)) }, ConfigFile, "no such file"},
		{"bad config", func(d string) { _ = os.WriteFile(filepath.Join(d, ConfigFile), []byte("{"), 0o644) }, ConfigFile, "unexpected end"},
		{"short file", func(d string) { _ = os.WriteFile(filepath.Join(d, ModelFile), []byte{1, 2}, 0o644) }, ModelFile, "shorter than the 8-byte header length"},
		{"bad header length", func(d string) {
			b := binary.LittleEndian.AppendUint64(nil, 1<<40)
			_ = os.WriteFile(filepath.Join(d, ModelFile), append(b, "{}"...), 0o644)
		}, ModelFile, "header length 1099511627776 exceeds the file"},
		{"header not JSON", func(d string) { rawHeader(d, "[1]", nil) }, ModelFile, "not a JSON object"},
		{"offsets past the end", func(d string) {
			rawHeader(d, `{"embeddings":{"dtype":"F32","shape":[50,8],"data_offsets":[0,1600]}}`, emb[:100])
		}, ModelFile, "data_offsets [0 1600] outside the 100 data bytes"},
		{"shape/bytes mismatch", func(d string) {
			rawHeader(d, `{"embeddings":{"dtype":"F32","shape":[50,9],"data_offsets":[0,1600]}}`, emb)
		}, ModelFile, "shape [50 9] of F32 needs 1800 bytes, data_offsets give 1600"},
		{"shape overflow", func(d string) {
			rawHeader(d, `{"embeddings":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,16]}}`, emb)
		}, ModelFile, "overflows"},
		{"unknown dtype", func(d string) {
			rawHeader(d, `{"embeddings":{"dtype":"F8_E4M3","shape":[50,8],"data_offsets":[0,400]}}`, emb)
		}, ModelFile, `unknown dtype "F8_E4M3"`},
		{"unsupported dtype", func(d string) {
			rawHeader(d, `{"embeddings":{"dtype":"I32","shape":[50,8],"data_offsets":[0,1600]}}`, emb)
		}, ModelFile, "embeddings dtype I32 is not supported"},
		{"no embeddings", func(d string) {
			rawHeader(d, `{"emb":{"dtype":"F32","shape":[50,8],"data_offsets":[0,1600]}}`, emb)
		}, ModelFile, `no tensor named "embeddings"`},
		{"too few rows", func(d string) {
			rawHeader(d, `{"embeddings":{"dtype":"F32","shape":[40,10],"data_offsets":[0,1600]}}`, emb)
		}, ModelFile, "40 rows for 50 token ids"},
		{"unsupported tokenizer model", func(d string) {
			tokWith(d, func(j map[string]any) {
				j["model"] = map[string]any{"type": "Unigram", "unk_id": 1, "vocab": [][]any{{"a", -1.0}}}
			})
		}, TokenizerFile, `tokenizer model "Unigram" is not supported (supported: WordPiece)`},
		{"unsupported normalizer", func(d string) {
			tokWith(d, func(j map[string]any) {
				j["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "Precompiled"}}}
			})
		}, TokenizerFile, `normalizer "Precompiled" is not supported`},
		{"unsupported pre-tokenizer", func(d string) {
			tokWith(d, func(j map[string]any) { j["pre_tokenizer"] = map[string]any{"type": "Metaspace"} })
		}, TokenizerFile, `pre_tokenizer "Metaspace" is not supported`},
		{"tokenizer not JSON", func(d string) { _ = os.WriteFile(filepath.Join(d, TokenizerFile), []byte("nope"), 0o644) }, TokenizerFile, "invalid character"},
	}
	for _, c := range cases {
		dir := copyModel()
		c.setup(dir)
		_, err := LoadModel2Vec(dir)
		if err == nil {
			t.Errorf("%s: loaded", c.name)
			continue
		}
		if !strings.Contains(err.Error(), filepath.Join(dir, c.file)) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %q does not name %s and say %q", c.name, err, c.file, c.msg)
		}
	}
}

func FuzzSafetensors(f *testing.F) {
	dir := f.TempDir()
	for _, o := range []modelOpts{{dtype: "F16", weights: true, mapping: true}, {dtype: "BF16"}} {
		p := filepath.Join(dir, "m.safetensors")
		d := writeTinyModel(f, o)
		b, err := os.ReadFile(filepath.Join(d, ModelFile))
		if err != nil {
			f.Fatal(err)
		}
		_ = p
		f.Add(b)
	}
	f.Add([]byte("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":{}}        "))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := parseSafetensors(b)
		if err != nil {
			return
		}
		for _, tt := range ts {
			_, _ = tt.floats()
			_, _ = tt.ints()
		}
		m := &Model2Vec{tok: &tokenizer{size: 50}}
		if m.setTensors(ts) == nil {
			v := make([]float64, m.dim)
			for id := 0; id < 50; id++ {
				m.addRow(v, id)
			}
		}
	})
}

func FuzzTokenizerJSON(f *testing.F) {
	b, _ := json.Marshal(tokenizerJSON(tinyVocab))
	f.Add(b, "Café tokenizers, a[SEP]b 中 notifications")
	f.Add([]byte(`{"model":{"continuing_subword_prefix":"","vocab":{"a":0}},"pre_tokenizer":{"type":"BertPreTokenizer"}}`), "aaa")
	f.Fuzz(func(t *testing.T, b []byte, text string) {
		tok, err := parseTokenizer(b)
		if err != nil {
			return
		}
		for _, id := range tok.encode(text) {
			if id < 0 || id >= tok.size {
				t.Fatalf("id %d outside [0,%d)", id, tok.size)
			}
		}
	})
}
