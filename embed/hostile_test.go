//go:build unix

package embed

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// fifo makes a named pipe at path and a writer that opens it (which blocks
// until someone opens it for reading), then closes it at once. It returns
// whether the writer got in; the test's cleanup lets a waiting writer go.
func fifo(t *testing.T, path string) *atomic.Bool {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A second name for the pipe, to release the writer even after the
	// first name was replaced.
	spare := filepath.Join(t.TempDir(), "spare")
	if err := os.Link(path, spare); err != nil {
		t.Fatal(err)
	}
	var opened atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := os.OpenFile(spare, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		opened.Store(true)
		_, _ = f.WriteString("not a model")
		_ = f.Close()
	}()
	t.Cleanup(func() {
		r, err := os.OpenFile(spare, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			<-done
			_ = r.Close()
		}
	})
	return &opened
}

// A model file that is not a regular file (a pipe, a device, a folder) is
// an error naming it, read from never; a symlink to a regular file (the
// layout of the Hugging Face cache) loads.
func TestLoadRefusesSpecialFiles(t *testing.T) {
	good := writeTinyModel(t, modelOpts{dtype: "F32"})
	linked := func() string {
		dir := t.TempDir()
		for _, f := range []string{ModelFile, TokenizerFile, ConfigFile} {
			if err := os.Symlink(filepath.Join(good, f), filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	if _, err := LoadModel2Vec(linked()); err != nil {
		t.Fatalf("symlinked model: %v", err)
	}
	for _, c := range []struct {
		name, file string
		setup      func(path string) *atomic.Bool
	}{
		{"pipe", ModelFile, func(p string) *atomic.Bool { return fifo(t, p) }},
		{"device", ConfigFile, func(p string) *atomic.Bool {
			if err := os.Symlink(os.DevNull, p); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
		{"folder", TokenizerFile, func(p string) *atomic.Bool {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
	} {
		dir := linked()
		path := filepath.Join(dir, c.file)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		opened := c.setup(path)
		_, err := LoadModel2Vec(dir)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v, want an error naming %s: not a regular file", c.name, err, path)
		}
		if opened != nil && opened.Load() {
			t.Errorf("%s: the loader opened the pipe", c.name)
		}
	}
}

// A model file larger than any real one is refused before it is read, so a
// huge (here sparse) file costs no memory.
func TestLoadRefusesHugeFiles(t *testing.T) {
	for _, c := range []struct {
		file string
		size int64
	}{
		{ConfigFile, maxConfigBytes + 1},
		{TokenizerFile, maxTokenizerBytes + 1},
		{ModelFile, maxModelBytes + 1},
	} {
		dir := writeTinyModel(t, modelOpts{dtype: "F32"})
		path := filepath.Join(dir, c.file)
		if err := os.Truncate(path, c.size); err != nil {
			t.Fatal(err)
		}
		_, err := LoadModel2Vec(dir)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("%s of %d bytes: %v, want it refused as too large", c.file, c.size, err)
		}
	}
}

// Token ids beyond any matrix (here the largest int, whose successor
// overflows) are refused at load; they once loaded and made Embed panic.
func TestLoadRefusesHugeTokenIDs(t *testing.T) {
	for name, edit := range map[string]func(map[string]any){
		"vocab": func(j map[string]any) {
			j["model"].(map[string]any)["vocab"].(map[string]int)["huge"] = math.MaxInt
		},
		"added token": func(j map[string]any) {
			j["added_tokens"] = append(j["added_tokens"].([]map[string]any),
				map[string]any{"id": math.MaxInt, "content": "<huge>", "normalized": false, "special": true})
		},
	} {
		dir := writeTinyModel(t, modelOpts{dtype: "F32"})
		j := tokenizerJSON(tinyVocab)
		edit(j)
		writeJSON(t, filepath.Join(dir, TokenizerFile), j)
		_, err := LoadModel2Vec(dir)
		if err == nil || !strings.Contains(err.Error(), TokenizerFile) || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("%s id %d: %v, want it refused", name, math.MaxInt, err)
		}
	}
}

// A matrix wider than any real model's is refused: the vectors of many
// entries would take unbounded memory.
func TestLoadRefusesHugeDim(t *testing.T) {
	dir := writeTinyModel(t, modelOpts{dtype: "F32"})
	rows, dim := len(tinyVocab), maxDim+1
	writeSafetensors(t, filepath.Join(dir, ModelFile), map[string]stTensor{
		"embeddings": {"I8", []int{rows, dim}, make([]byte, rows*dim)},
	})
	_, err := LoadModel2Vec(dir)
	if err == nil || !strings.Contains(err.Error(), ModelFile) || !strings.Contains(err.Error(), "4097") {
		t.Fatalf("dim %d: %v, want it refused", dim, err)
	}
}

// NaN or infinite numbers in the matrix or the weights are an error naming
// the row or token; they once made every vector they touched NaN, so search by
// meaning silently found nothing.
func TestLoadRefusesNonFinite(t *testing.T) {
	for _, c := range []struct {
		name, dtype string
		bad         float32
		weights     bool
		msg         string
	}{
		{"NaN F32 row", "F32", float32(math.NaN()), false, "row 7"},
		{"Inf F16 row", "F16", float32(math.Inf(1)), false, "row 7"},
		{"-Inf BF16 row", "BF16", float32(math.Inf(-1)), false, "row 7"},
		{"NaN F64 row", "F64", float32(math.NaN()), false, "row 7"},
		{"Inf weight", "F32", float32(math.Inf(1)), true, "token 7"},
	} {
		dir := writeTinyModel(t, modelOpts{dtype: c.dtype})
		rows := len(tinyVocab)
		var flat []float32
		for i := 0; i < rows; i++ {
			flat = append(flat, tinyRow(i)...)
		}
		ts := map[string]stTensor{}
		if c.weights {
			w := make([]float32, rows)
			for i := range w {
				w[i] = 1
			}
			w[7] = c.bad
			ts["weights"] = stTensor{"F32", []int{rows}, encodeFloats("F32", w)}
		} else {
			flat[7*8+3] = c.bad
		}
		if c.dtype == "F16" { // f16bits encodes normal numbers only
			flat[7*8+3] = 0
		}
		data := encodeFloats(c.dtype, flat)
		if c.dtype == "F16" {
			binary.LittleEndian.PutUint16(data[2*(7*8+3):], 0x7c00) // +Inf
		}
		ts["embeddings"] = stTensor{c.dtype, []int{rows, 8}, data}
		writeSafetensors(t, filepath.Join(dir, ModelFile), ts)
		_, err := LoadModel2Vec(dir)
		if err == nil || !strings.Contains(err.Error(), ModelFile) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want it refused naming %s", c.name, err, c.msg)
		}
	}
}

// Finite rows whose sum overflows float32 give a vector without NaN.
func TestEmbedOverflowIsNotNaN(t *testing.T) {
	dir := writeTinyModel(t, modelOpts{dtype: "F32"})
	rows := len(tinyVocab)
	flat := make([]float32, rows*8)
	for i := range flat {
		flat[i] = math.MaxFloat32
	}
	writeSafetensors(t, filepath.Join(dir, ModelFile), map[string]stTensor{
		"embeddings": {"F32", []int{rows, 8}, encodeFloats("F32", flat)},
	})
	m, err := LoadModel2Vec(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.Embed(context.Background(), []string{"dark mode theme"})
	if err != nil {
		t.Fatal(err)
	}
	var s float64
	for _, x := range v[0] {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			t.Fatalf("vector %v is not finite", v[0])
		}
		s += float64(x) * float64(x)
	}
	if math.Abs(s-1) > 1e-5 {
		t.Fatalf("vector %v has squared length %v, want 1", v[0], s)
	}
}

// A cache file that is a pipe is ignored, never opened (a search would
// wait forever for a writer), and replaced by a good file.
func TestCacheIgnoresPipe(t *testing.T) {
	e := tinyModel(t)
	dir := t.TempDir()
	opened := fifo(t, filepath.Join(dir, CacheFile))
	c := NewCache(dir)
	got, err := c.Vectors(context.Background(), e, []string{"dark mode", "push notification"})
	if err != nil || len(got) != 2 {
		t.Fatalf("vectors: %d %v", len(got), err)
	}
	if opened.Load() {
		t.Fatalf("the cache opened a pipe")
	}
	if fi, err := os.Lstat(filepath.Join(dir, CacheFile)); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("cache file not replaced: %v %v", fi, err)
	}
	if n := fill(t, c, e, "dark mode", "push notification"); n != 0 {
		t.Fatalf("embedded %d texts again, want the cache to serve them", n)
	}
}

// A tokenizer.json can ask for words of any length and, through long
// tokens, for texts cut at any length; WordPiece costs up to the cube of a
// word's length, so either made a search over long entries run for hours.
// Words longer than 200 characters are unknown, and texts are cut at 512
// tokens of at most 32 characters.
func TestTokenizerWorkIsBounded(t *testing.T) {
	dir := writeTinyModel(t, modelOpts{dtype: "F32"})
	vocab := append([]string{}, tinyVocab...)
	for i := len(vocab); i < 3*len(tinyVocab); i++ {
		vocab = append(vocab, fmt.Sprintf("%0100d", i)) // 100-character tokens: the median
	}
	j := tokenizerJSON(vocab)
	j["model"].(map[string]any)["max_input_chars_per_word"] = 1 << 40
	writeJSON(t, filepath.Join(dir, TokenizerFile), j)
	rows := len(vocab)
	var flat []float32
	for i := 0; i < rows; i++ {
		flat = append(flat, tinyRow(i%len(tinyVocab))...)
	}
	writeSafetensors(t, filepath.Join(dir, ModelFile), map[string]stTensor{
		"embeddings": {"F32", []int{rows, 8}, encodeFloats("F32", flat)},
	})
	m, err := LoadModel2Vec(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"word of 201 characters":      "a" + strings.Repeat("s", 200), // a ##s ##s ...
		"known word past 16384 runes": strings.Repeat("q ", 10000) + "cache",
	} {
		v, err := m.Embed(context.Background(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if Cosine(v[0], v[0]) != 0 {
			t.Errorf("%s: a vector, want none (the text holds nothing known within the bounds)", name)
		}
	}
	for name, text := range map[string]string{
		"word of 200 characters":    "a" + strings.Repeat("s", 199),
		"known word within the cut": strings.Repeat("q ", 8000) + "cache",
	} {
		v, err := m.Embed(context.Background(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if Cosine(v[0], v[0]) == 0 {
			t.Errorf("%s: no vector", name)
		}
	}
}
