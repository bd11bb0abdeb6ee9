package similar

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"sync"

	"github.com/memsync/memsync/internal/fsutil"
)

// cacheMagic starts a cache file (the format's version is in it; a change
// of what a Set holds, such as the function words, is a new version).
const cacheMagic = "memsync-similar 2\n"

// maxCacheFile bounds the cache file read.
const maxCacheFile = 64 << 20

// Cache keeps the Sets of texts by a digest of the text, in a file of the
// state dir: a process that compares a new entry with a memory of 1,000
// tokenizes only the entries it has not seen before. A damaged or missing
// file is an empty cache.
type Cache struct {
	path    string
	sets    map[uint64]Set
	used    map[uint64]bool
	changed bool
}

// OpenCache reads the cache at path.
func OpenCache(path string) *Cache {
	c := &Cache{path: path, sets: map[uint64]Set{}, used: map[uint64]bool{}}
	b, err := fsutil.ReadFile(path, maxCacheFile)
	if err != nil || len(b) < len(cacheMagic) || string(b[:len(cacheMagic)]) != cacheMagic {
		return c
	}
	b = b[len(cacheMagic):]
	all := make([]uint64, 0, len(b)/8) // one array behind every Set read
	for len(b) >= 12 {
		d := binary.LittleEndian.Uint64(b)
		nt, ns := int(binary.LittleEndian.Uint16(b[8:])), int(binary.LittleEndian.Uint16(b[10:]))
		b = b[12:]
		if len(b) < 8*(nt+ns) {
			return &Cache{path: path, sets: map[uint64]Set{}, used: map[uint64]bool{}}
		}
		at := len(all)
		for i := range nt + ns {
			all = append(all, binary.LittleEndian.Uint64(b[8*i:]))
		}
		b = b[8*(nt+ns):]
		c.sets[d] = Set{terms: all[at : at+nt : at+nt], specific: all[at+nt : at+nt+ns : at+nt+ns]}
	}
	return c
}

// digest names a text in the cache: two CRC-32s (Castagnoli and IEEE,
// both done by the CPU where it can), 64 bits.
func digest(text string) uint64 {
	b := []byte(text)
	return uint64(crc32.Checksum(b, castagnoli()))<<32 | uint64(crc32.ChecksumIEEE(b))
}

var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// Of is Of(text), from the cache when it has it.
func (c *Cache) Of(text string) Set {
	d := digest(text)
	c.used[d] = true
	if s, ok := c.sets[d]; ok {
		return s
	}
	s := Of(text)
	if len(s.terms) > 0xffff || len(s.specific) > 0xffff {
		return s // too large to keep
	}
	c.sets[d] = s
	c.changed = true
	return s
}

// Save writes the cache back, with the Sets used since it was opened
// only, if it learnt a new one.
func (c *Cache) Save(perm os.FileMode) error {
	if !c.changed {
		return nil
	}
	size := len(cacheMagic)
	for d := range c.used {
		s := c.sets[d]
		size += 12 + 8*(len(s.terms)+len(s.specific))
	}
	b := append(make([]byte, 0, size), cacheMagic...) // one allocation: the file is MBs at 30k entries
	for d := range c.used {
		s := c.sets[d]
		b = binary.LittleEndian.AppendUint64(b, d)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(s.terms)))
		b = binary.LittleEndian.AppendUint16(b, uint16(len(s.specific)))
		for _, x := range s.terms {
			b = binary.LittleEndian.AppendUint64(b, x)
		}
		for _, x := range s.specific {
			b = binary.LittleEndian.AppendUint64(b, x)
		}
	}
	if err := fsutil.WriteCache(c.path, b, perm); err != nil {
		return err
	}
	c.changed = false
	return nil
}
