package history

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/internal/fsutil"
)

// A snapshot of a large memory would hash every chunk of the live file to
// find the few that changed. The chunk cache spares that: for each memory
// file, <git common dir>/memsync/state/chunks.memory (chunks.archive) lists
// the chunks of the newest snapshot's file, each with its length, its
// CRC-32C, its CRC-32 (IEEE) and its blob hash, and what memsync found in
// the whole file (damage, orch's plain dialect). The next snapshot checks
// the live file's bytes against those checksums (both hardware-accelerated:
// about 1.5 ms for 10 MB, where SHA-1 with collision detection takes 8) and
// takes the hash of every chunk whose bytes match, hashing only the others.
//
// A cache is used only when its chunk hashes are, in order, those of the
// parent snapshot's tree: one that a sync, a rollback or another memsync
// left behind is ignored, and the snapshot rebuilds it from the live file;
// a missing, short or corrupt one (its own CRC-32C fails) only costs time.
//
// Why two 32-bit checksums and the length are enough: they only tell
// whether a chunk of the live file holds the bytes of one of the parent's
// chunks of the same length (the one at the same offset, or for a chunk
// cut anew any of them). A change that keeps the length (an editor, a
// script, another writer; never crafted against these checksums) passes
// one CRC-32 with probability 2^-32 and two of different polynomials with
// about 2^-64, per chunk compared: far less than the odds of an undetected
// disk error. A CRC also catches every change confined to 32 consecutive
// bits, so a typo never slips through. Someone crafting a collision gains
// nothing they could not do otherwise: the snapshot then keeps the
// parent's bytes for that chunk, so nothing of the live file enters the
// history unscanned (secrets, the record of change), and `memsync diff`,
// which compares the files themselves, shows the difference.

// chunkSum is one chunk as the cache knows it.
type chunkSum struct {
	size       int
	castagnoli uint32 // CRC-32C
	ieee       uint32 // CRC-32 (IEEE)
	hash       plumbing.Hash
}

var castagnoliTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// sumOf is the chunkSum of data, whose blob hash is hash.
func sumOf(data []byte, hash plumbing.Hash) chunkSum {
	return chunkSum{len(data), crc32.Checksum(data, castagnoliTable()), crc32.ChecksumIEEE(data), hash}
}

// matches tells whether data has s's length and checksums.
func (s chunkSum) matches(data []byte) bool {
	return len(data) == s.size && crc32.Checksum(data, castagnoliTable()) == s.castagnoli && crc32.ChecksumIEEE(data) == s.ieee
}

// fileCache is the cache of one memory file: its chunks in order and what
// memsync found in the whole file.
type fileCache struct {
	chunks []chunkSum
	clean  bool // memfile.Damage finds nothing in the file
	plain  bool // memfile.PlainOrch(file)
}

// of is the cache when it describes s (the parent snapshot's file), else
// nil.
func (c *fileCache) of(s stored) *fileCache {
	if c == nil || s.tree.IsZero() || len(c.chunks) != len(s.chunks) {
		return nil
	}
	for i, x := range c.chunks {
		if x.hash != s.chunks[i] {
			return nil
		}
	}
	return c
}

// The cache file: a header line, a flags byte, the chunk count (uint32),
// each chunk as size, CRC-32C, CRC-32 (uint32 each, big-endian) and hash,
// then the CRC-32C of all that.
const (
	cacheHeader    = "memsync chunk cache 1\n"
	cacheEntrySize = 12 + len(plumbing.ZeroHash)
	cacheFlagClean = 1
	cacheFlagPlain = 2
	// maxCacheFile bounds the read: 64 K chunks cover the largest file
	// memsync reads (2 × the cap, chunks of at least chunkMin bytes).
	maxCacheFile = len(cacheHeader) + 5 + (64<<10)*cacheEntrySize + 4
)

// cachePath is where the chunk cache of the file name (MemoryName,
// ArchiveName) is kept.
func (h *History) cachePath(name string) string {
	key := "memory"
	if name == ArchiveName {
		key = "archive"
	}
	return filepath.Join(h.Repo.CommonDir, "memsync", "state", "chunks."+key)
}

// loadCache reads the chunk cache of file name; nil when there is none or
// it is damaged.
func (h *History) loadCache(name string) *fileCache {
	data, err := fsutil.ReadFile(h.cachePath(name), int64(maxCacheFile))
	if err != nil {
		return nil
	}
	return decodeCache(data)
}

// decodeCache decodes a cache file; nil when it is not one.
func decodeCache(data []byte) *fileCache {
	body, ok := bytes.CutPrefix(data, []byte(cacheHeader))
	if !ok || len(body) < 5+4 {
		return nil
	}
	sum := binary.BigEndian.Uint32(body[len(body)-4:])
	body = body[:len(body)-4]
	if crc32.Checksum(data[:len(data)-4], castagnoliTable()) != sum {
		return nil
	}
	flags, n := body[0], binary.BigEndian.Uint32(body[1:5])
	body = body[5:]
	if uint64(len(body)) != uint64(n)*uint64(cacheEntrySize) {
		return nil
	}
	c := &fileCache{clean: flags&cacheFlagClean != 0, plain: flags&cacheFlagPlain != 0, chunks: make([]chunkSum, n)}
	for i := range c.chunks {
		e := body[i*cacheEntrySize:]
		x := &c.chunks[i]
		size := binary.BigEndian.Uint32(e)
		if size > 4*chunkMax { // chunk cuts none larger than 2 × chunkMax
			return nil
		}
		x.size = int(size)
		x.castagnoli, x.ieee = binary.BigEndian.Uint32(e[4:]), binary.BigEndian.Uint32(e[8:])
		copy(x.hash[:], e[12:cacheEntrySize])
	}
	return c
}

// encode is the content of c's cache file.
func (c *fileCache) encode() []byte {
	b := make([]byte, 0, len(cacheHeader)+5+len(c.chunks)*cacheEntrySize+4)
	b = append(b, cacheHeader...)
	var flags byte
	if c.clean {
		flags |= cacheFlagClean
	}
	if c.plain {
		flags |= cacheFlagPlain
	}
	b = append(b, flags)
	b = binary.BigEndian.AppendUint32(b, uint32(len(c.chunks)))
	for _, x := range c.chunks {
		b = binary.BigEndian.AppendUint32(b, uint32(x.size))
		b = binary.BigEndian.AppendUint32(b, x.castagnoli)
		b = binary.BigEndian.AppendUint32(b, x.ieee)
		b = append(b, x.hash[:]...)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoliTable()))
}

// saveCache writes the chunk cache of file name; nil c removes it (the
// file is absent). A cache that cannot be written only costs the next
// snapshot time, so errors are dropped.
func (h *History) saveCache(name string, c *fileCache) {
	path := h.cachePath(name)
	if c == nil {
		_ = os.Remove(path)
		return
	}
	if err := fsutil.MkdirAll(filepath.Dir(path), h.Repo.Shared.Dir(0o777)); err != nil {
		return
	}
	_ = fsutil.WriteCache(path, c.encode(), h.Repo.Shared.File(0o666))
}
