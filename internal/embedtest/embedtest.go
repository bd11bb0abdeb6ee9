// Package embedtest writes Model2Vec models for tests: a WordPiece
// tokenizer over given words and their vectors as F32 safetensors, in the
// layout embed.LoadModel2Vec reads.
package embedtest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// special are the tokens every model starts with, as BERT vocabularies do.
var special = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}

// WriteModel writes into dir (which must exist) a model whose vocabulary is
// the special tokens then words, with vectors[i] the row of words[i] (the
// special tokens get zero rows). All vectors must have one length.
func WriteModel(dir string, words []string, vectors [][]float32) error {
	if len(words) != len(vectors) || len(words) == 0 {
		return fmt.Errorf("embedtest: %d words, %d vectors", len(words), len(vectors))
	}
	dim := len(vectors[0])
	vocab := map[string]int{}
	var data []byte
	for i, w := range append(append([]string{}, special...), words...) {
		vocab[w] = i
		row := make([]float32, dim)
		if i >= len(special) {
			row = vectors[i-len(special)]
		}
		if len(row) != dim {
			return fmt.Errorf("embedtest: vector of %q has %d numbers, not %d", w, len(row), dim)
		}
		for _, x := range row {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(x))
		}
	}
	head, err := json.Marshal(map[string]any{"embeddings": map[string]any{
		"dtype": "F32", "shape": []int{len(vocab), dim}, "data_offsets": []int{0, len(data)},
	}})
	if err != nil {
		return err
	}
	st := binary.LittleEndian.AppendUint64(nil, uint64(len(head)))
	st = append(append(st, head...), data...)
	var added []map[string]any
	for i, s := range special {
		added = append(added, map[string]any{"id": i, "content": s, "special": true, "normalized": false})
	}
	tok := map[string]any{
		"version":       "1.0",
		"added_tokens":  added,
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model": map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
			"max_input_chars_per_word": 100, "vocab": vocab},
	}
	files := map[string]any{"tokenizer.json": tok, "config.json": map[string]any{"model_type": "model2vec", "normalize": true, "hidden_dim": dim}}
	for name, v := range files {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "model.safetensors"), st, 0o644)
}
