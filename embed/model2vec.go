package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"

	"github.com/memsync/memsync/internal/fsutil"
)

// maxDim caps the length of a model's vectors (Model2Vec models have 64 to
// 1024; the largest embedding models 4096): a search holds one vector per
// entry.
const maxDim = 4096

// maxTokens is how many tokens of a text model2vec averages (its encode's
// default max_length); the text is first cut to maxTokens times the median
// token length in characters, as model2vec does.
const maxTokens = 512

// Model2Vec is a Model2Vec static embedding model: a text's vector is the
// mean of its tokens' rows of an embedding matrix (each row scaled by the
// token's weight when the model has weights), L2-normalized. It is an
// Embedder, safe for concurrent use.
type Model2Vec struct {
	name    string
	tok     *tokenizer
	emb     tensor // rows x dim, F32, F16, BF16, F64 or I8
	dim     int
	weights []float32 // per token id, or nil
	mapping []int32   // token id -> row, or nil
	// Normalize is config.json's "normalize". Embed normalizes regardless,
	// since memsync compares by cosine; it is kept for information.
	Normalize bool
}

// The files of a Model2Vec model folder.
const (
	ModelFile     = "model.safetensors"
	TokenizerFile = "tokenizer.json"
	ConfigFile    = "config.json"
)

// LoadModel2Vec loads the Model2Vec model in dir, laid out as on Hugging
// Face (for example minishlab/potion-base-8M): model.safetensors holding an
// "embeddings" matrix (F32, F16, BF16, F64 or I8) and optionally "weights"
// (one per token id) and "mapping" (token id -> row, I32 or I64),
// tokenizer.json (a WordPiece tokenizer with BertNormalizer and
// BertPreTokenizer) and config.json. Each error names the file at fault.
func LoadModel2Vec(dir string) (*Model2Vec, error) {
	read := func(name string, limit int64) ([]byte, error) {
		b, err := fsutil.ReadFile(filepath.Join(dir, name), limit)
		if err != nil {
			return nil, fmt.Errorf("model2vec model %s: %w", dir, err)
		}
		return b, nil
	}
	bad := func(name string, err error) error {
		return fmt.Errorf("model2vec model %s: %w", filepath.Join(dir, name), err)
	}
	cfgData, err := read(ConfigFile, maxConfigBytes)
	if err != nil {
		return nil, err
	}
	tokData, err := read(TokenizerFile, maxTokenizerBytes)
	if err != nil {
		return nil, err
	}
	stData, err := read(ModelFile, maxModelBytes)
	if err != nil {
		return nil, err
	}
	// The fingerprint hashes all three files, in parallel with the parsing.
	sum := make(chan string, 1)
	go func() {
		h := sha256.New()
		for _, b := range [][]byte{cfgData, tokData, stData} {
			fmt.Fprintf(h, "%d\n", len(b))
			h.Write(b)
		}
		sum <- hex.EncodeToString(h.Sum(nil))[:16]
	}()
	m := &Model2Vec{}
	var cfg struct {
		Normalize *bool `json:"normalize"`
	}
	if err := json.Unmarshal(cfgData, &cfg); err != nil {
		return nil, bad(ConfigFile, err)
	}
	m.Normalize = cfg.Normalize != nil && *cfg.Normalize
	if m.tok, err = parseTokenizer(tokData); err != nil {
		return nil, bad(TokenizerFile, err)
	}
	ts, err := parseSafetensors(stData)
	if err != nil {
		return nil, bad(ModelFile, err)
	}
	if err := m.setTensors(ts); err != nil {
		return nil, bad(ModelFile, err)
	}
	m.name = "model2vec:" + filepath.Base(filepath.Clean(dir)) + "@" + <-sum
	return m, nil
}

// setTensors checks the tensors against each other and the vocabulary.
func (m *Model2Vec) setTensors(ts map[string]tensor) error {
	emb, ok := ts["embeddings"]
	if !ok {
		return fmt.Errorf(`no tensor named "embeddings"`)
	}
	switch emb.dtype {
	case "F32", "F16", "BF16", "F64", "I8":
	default:
		return fmt.Errorf("embeddings dtype %s is not supported (supported: F32, F16, BF16, F64, I8)", emb.dtype)
	}
	if len(emb.shape) != 2 || emb.shape[0] == 0 || emb.shape[1] == 0 {
		return fmt.Errorf("embeddings shape %v is not a non-empty matrix", emb.shape)
	}
	if emb.shape[1] > maxDim {
		return fmt.Errorf("embeddings shape %v: vectors of %d numbers are more than the %d supported", emb.shape, emb.shape[1], maxDim)
	}
	rows := emb.shape[0]
	m.emb, m.dim = emb, emb.shape[1]
	if r, ok := emb.nonFinite(m.dim); ok {
		return fmt.Errorf("embeddings row %d holds NaN or an infinity", r)
	}
	size := m.tok.size
	if w, ok := ts["weights"]; ok {
		if len(w.shape) != 1 || w.shape[0] < size {
			return fmt.Errorf("weights shape %v does not cover the %d token ids", w.shape, size)
		}
		var err error
		if m.weights, err = w.floats(); err != nil {
			return fmt.Errorf("weights: %w", err)
		}
		for i, x := range m.weights {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("weights: the weight of token %d is NaN or an infinity", i)
			}
		}
	}
	if mp, ok := ts["mapping"]; ok {
		if len(mp.shape) != 1 || mp.shape[0] < size {
			return fmt.Errorf("mapping shape %v does not cover the %d token ids", mp.shape, size)
		}
		ids, err := mp.ints()
		if err != nil {
			return fmt.Errorf("mapping: %w", err)
		}
		m.mapping = make([]int32, len(ids))
		for i, r := range ids {
			if r < 0 || r >= int64(rows) {
				return fmt.Errorf("mapping sends token %d to row %d of %d", i, r, rows)
			}
			m.mapping[i] = int32(r)
		}
	} else if size > rows {
		return fmt.Errorf("embeddings has %d rows for %d token ids in %s", rows, size, TokenizerFile)
	}
	return nil
}

// Name identifies the model folder and the content of its three files.
func (m *Model2Vec) Name() string { return m.name }

// Dim is the length of the vectors.
func (m *Model2Vec) Dim() int { return m.dim }

// Embed returns the normalized mean of each text's token rows, as model2vec
// encodes: no special tokens, unknown tokens dropped, at most 512 tokens.
func (m *Model2Vec) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*m.dim)
	// Rows are summed in float64: large finite rows would overflow a
	// float32 sum to an infinity, and the vector to NaN.
	sum := make([]float64, m.dim)
	for i, text := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		clear(sum)
		for _, id := range m.ids(text) {
			m.addRow(sum, id)
		}
		v := flat[i*m.dim : (i+1)*m.dim : (i+1)*m.dim]
		normalize(v, sum)
		out[i] = v
	}
	return out, nil
}

// ids returns the token ids model2vec averages for text.
func (m *Model2Vec) ids(text string) []int {
	if n := maxTokens * m.tok.medianLen; len(text) > n {
		if i := runeOffset(text, n); i < len(text) {
			text = text[:i]
		}
	}
	ids := m.tok.encode(text)
	k := 0
	for _, id := range ids {
		if id != m.tok.unkID {
			ids[k] = id
			k++
		}
	}
	return ids[:min(k, maxTokens)]
}

// runeOffset returns the byte offset of the n-th rune of s, or len(s).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// addRow adds token id's row, times its weight, to v.
func (m *Model2Vec) addRow(v []float64, id int) {
	row := id
	if m.mapping != nil {
		row = int(m.mapping[id])
	}
	w := float64(1)
	if m.weights != nil {
		w = float64(m.weights[id])
	}
	base := row * m.dim
	if m.emb.dtype == "F32" {
		d := m.emb.data[4*base : 4*(base+m.dim)]
		for j := range v {
			v[j] += w * float64(f32le(d[4*j:]))
		}
		return
	}
	for j := range v {
		x, _ := m.emb.at(base + j)
		v[j] += w * float64(x)
	}
}
