// Package embed turns texts into vectors for memsync's semantic ranking: an
// Embedder interface, a loader for Model2Vec models (static token
// embeddings averaged per text, pure Go, no network), and a Cache of entry
// vectors kept in the repository's state dir.
//
// # Plugging a model
//
// memsync ships no model. To use one, fetch a Model2Vec model on your own
// machine, for example minishlab/potion-base-8M (about 30 MB):
//
//	huggingface-cli download minishlab/potion-base-8M --local-dir ~/models/potion-base-8M
//
// or, with git and git-lfs:
//
//	git clone https://huggingface.co/minishlab/potion-base-8M ~/models/potion-base-8M
//
// or just the three files LoadModel2Vec reads:
//
//	mkdir -p ~/models/potion-base-8M && cd ~/models/potion-base-8M
//	for f in model.safetensors tokenizer.json config.json; do
//	  curl -fLO https://huggingface.co/minishlab/potion-base-8M/resolve/main/$f
//	done
//
// then point memsync at the folder with MEMSYNC_MODEL=~/models/potion-base-8M
// (or the configuration key). The model is read at search time only; an add
// never computes a vector. The first search after new entries computes theirs
// (about a millisecond per hundred entries) and caches them by content hash.
package embed

import (
	"context"
	"math"
)

// Embedder maps texts to vectors. memsync compares an entry's vector with the
// query's by cosine similarity, so Embed returns one L2-normalized vector of
// Dim() numbers per text, in the order of texts (a text with no known token
// gets the zero vector, whose cosine with anything is 0). Entry vectors are
// cached by the sha256 of the entry's text under the embedder's Name, so
// Name must identify the model and its weights: two embedders of equal Name
// give equal vectors for equal texts, and a changed model changes the Name.
// Embed must be safe for concurrent use.
type Embedder interface {
	Name() string
	Dim() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// The largest files this package reads. A model's files are read whole into
// memory at each search, so each is capped well above any real one
// (potion-base-8M: a 30 MB model, a 700 KB tokenizer; the multilingual
// potion models: about 500 MB and 30 MB) and far below what would exhaust a
// machine; the cache is capped at what the widest model's vectors of a
// large memory take.
const (
	maxConfigBytes    = 1 << 20
	maxTokenizerBytes = 128 << 20
	maxModelBytes     = 2 << 30
	maxCacheBytes     = 2 << 30
)

// normalize sets v to sum scaled to unit length; a zero sum gives the zero
// vector.
func normalize(v []float32, sum []float64) {
	var s float64
	for _, x := range sum {
		s += x * x
	}
	if s == 0 {
		clear(v)
		return
	}
	if math.IsInf(s, 0) { // squares beyond float64: scale down first
		var big float64
		for _, x := range sum {
			big = max(big, math.Abs(x))
		}
		s = 0
		for i := range sum {
			sum[i] /= big
			s += sum[i] * sum[i]
		}
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range sum {
		v[i] = float32(x * inv)
	}
}

// Cosine returns the cosine of two vectors of equal length that are already
// L2-normalized (as every Embedder returns them): their dot product.
func Cosine(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
