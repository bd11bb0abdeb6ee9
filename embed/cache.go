package embed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/memsync/memsync/internal/fsutil"
)

// CacheFile is the name of the vector cache in the state dir.
const CacheFile = "vectors.cache"

// ErrNotSaved is wrapped by the error Vectors returns when it computed the
// vectors but could not write the cache file; the vectors are still valid.
var ErrNotSaved = errors.New("vector cache not saved")

// Cache keeps the vectors of entry texts in one file of a state dir (memsync
// uses the repository's .git/memsync/state), keyed by the embedder's Name
// (its model fingerprint) and the sha256 of each text.
//
// The file is rewritten whole through fsutil.WriteFile (temp file, fsync,
// rename) rather than appended to: a reader sees the old file or the new
// one, never a torn one, so two processes filling it at once can only lose
// each other's work (last writer wins, and the loser's vectors are computed
// again on a later search), never corrupt it; and a rewrite holds exactly
// the texts of the call, so vectors of deleted or edited entries go away
// without a compaction step. The cost, a rewrite of about 1 KB per entry
// when something is new, is small next to computing the new vectors. A
// trailing sha256 guards against damage the rename cannot: a file that
// fails it, or any other check, is ignored and rebuilt.
//
// Nothing here runs when an entry is added; the cache fills on the first
// search that asks for the new texts.
type Cache struct {
	path string
	// Mode is the permission of the file (0: 0o644); when it grants
	// nothing to group and others, folders the cache creates are 0o700 and
	// a file found with wider permission is narrowed to Mode. The vectors
	// of a private memory's entries give away much of their words.
	Mode os.FileMode
}

// NewCache returns the cache kept in dir, which is created when first written.
func NewCache(dir string) *Cache {
	return &Cache{path: filepath.Join(dir, CacheFile)}
}

func (c *Cache) mode() os.FileMode {
	if c.Mode == 0 {
		return 0o644
	}
	return c.Mode.Perm()
}

// cacheMagic starts the file; the version changes with the layout.
const cacheMagic = "memsync-vectors 1\n"

// Vectors returns the vector of each text, in order, computing with e only
// the texts the cache lacks. Call it with the texts of all entries: when it
// computes anything, it rewrites the file with exactly these texts, dropping
// the rest (embed a query with e.Embed directly, not through the cache).
// A missing, corrupt or foreign cache file is ignored. An error comes from e
// or ctx; or it wraps ErrNotSaved, with the vectors, when only the write failed.
func (c *Cache) Vectors(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	name, dim := e.Name(), e.Dim()
	have := c.load(name, dim)
	keys := make([][32]byte, len(texts))
	out := make([][]float32, len(texts))
	var missing []string
	var missIdx []int
	queued := map[[32]byte]int{}
	for i, t := range texts {
		keys[i] = sha256.Sum256([]byte(t))
		if v, ok := have[keys[i]]; ok {
			out[i] = v
			continue
		}
		if _, ok := queued[keys[i]]; !ok {
			queued[keys[i]] = len(missing)
			missing = append(missing, t)
		}
		missIdx = append(missIdx, i)
	}
	if len(missing) == 0 {
		return out, nil
	}
	vecs, err := e.Embed(ctx, missing)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(missing) {
		return nil, fmt.Errorf("embedder %s returned %d vectors for %d texts", name, len(vecs), len(missing))
	}
	for _, v := range vecs {
		if len(v) != dim {
			return nil, fmt.Errorf("embedder %s returned a vector of %d numbers, not %d", name, len(v), dim)
		}
	}
	for _, i := range missIdx {
		out[i] = vecs[queued[keys[i]]]
	}
	if err := c.save(name, dim, keys, out); err != nil {
		return out, fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	return out, nil
}

// The layout: cacheMagic, uvarint len(name), name, uint32 dim, uint32 count,
// count records of a 32-byte text hash and dim little-endian float32s, then
// the sha256 of everything before it.

// load reads the cache for the embedder name and dim; anything unreadable is
// an empty cache.
func (c *Cache) load(name string, dim int) map[[32]byte][]float32 {
	b, err := fsutil.ReadFile(c.path, maxCacheBytes)
	if err != nil || len(b) < len(cacheMagic)+sha256.Size {
		return nil
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], sum) || !bytes.HasPrefix(body, []byte(cacheMagic)) {
		return nil
	}
	r := body[len(cacheMagic):]
	n, k := binary.Uvarint(r)
	if k <= 0 || n > uint64(len(r)-k) || string(r[k:k+int(n)]) != name {
		return nil
	}
	r = r[k+int(n):]
	if len(r) < 8 || int(binary.LittleEndian.Uint32(r)) != dim {
		return nil
	}
	count := uint64(binary.LittleEndian.Uint32(r[4:]))
	r = r[8:]
	rec := uint64(32 + 4*dim)
	if count*rec != uint64(len(r)) {
		return nil
	}
	m := make(map[[32]byte][]float32, count)
	flat := make([]float32, int(count)*dim)
	for i := 0; i < int(count); i++ {
		p := r[uint64(i)*rec:]
		v := flat[i*dim : (i+1)*dim : (i+1)*dim]
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(p[32+4*j:]))
		}
		m[[32]byte(p[:32])] = v
	}
	return m
}

// save writes the vectors of the distinct keys, replacing the file.
func (c *Cache) save(name string, dim int, keys [][32]byte, vecs [][]float32) error {
	seen := make(map[[32]byte]bool, len(keys))
	b := make([]byte, 0, len(cacheMagic)+len(name)+16+len(keys)*(32+4*dim)+sha256.Size)
	b = append(b, cacheMagic...)
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	b = binary.LittleEndian.AppendUint32(b, uint32(dim))
	at := len(b)
	b = binary.LittleEndian.AppendUint32(b, 0)
	count := 0
	for i, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		count++
		b = append(b, k[:]...)
		for _, x := range vecs[i] {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
	}
	binary.LittleEndian.PutUint32(b[at:], uint32(count))
	sum := sha256.Sum256(b)
	b = append(b, sum[:]...)
	mode, dirMode := c.mode(), os.FileMode(0o755)
	if mode&0o077 == 0 {
		dirMode = 0o700
		// fsutil.WriteFile keeps an existing file's mode: narrow it first.
		if fi, err := os.Lstat(c.path); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&^mode != 0 {
			if err := os.Chmod(c.path, mode); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(c.path), dirMode); err != nil {
		return err
	}
	return fsutil.WriteFile(c.path, b, mode)
}
