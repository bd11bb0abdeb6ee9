package history

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/memsync/memsync/memfile"
)

// BenchmarkTake10MB: one snapshot of a 10 MB memory after one appended
// entry, in the process (go test -cpuprofile shows where its time goes).
func BenchmarkTake10MB(b *testing.B) {
	h, _ := testRepo(b)
	if err := os.MkdirAll(h.Store.Home, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(h.Store.Path(), memfile.GenerateFile(10<<20, 1), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := h.Take(ctx, "", Provenance{}); err != nil {
		b.Fatal(err)
	}
	f, err := os.OpenFile(h.Store.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	b.ResetTimer()
	for i := range b.N {
		if _, err := fmt.Fprintf(f, "\n## Fix: change %d\n- Tags: bench\n- Date: 2026-11-22\n- Content: learned %d\n", i, i); err != nil {
			b.Fatal(err)
		}
		res, err := h.Take(ctx, "", Provenance{})
		if err != nil || !res.Created {
			b.Fatal(res, err)
		}
	}
}

// editFile applies one random edit to data: an append, an insertion, a
// deletion, a byte changed, damage or another dialect's line put in, or
// the whole file rewritten as another writer would.
func editFile(r *rand.Rand, data []byte, i int) []byte {
	lineStart := func() int {
		at := r.IntN(len(data) + 1)
		return bytes.LastIndexByte(data[:at], '\n') + 1
	}
	insert := func(s string) []byte {
		at := lineStart()
		return append(data[:at:at], append([]byte(s), data[at:]...)...)
	}
	switch r.IntN(10) {
	case 0, 1:
		return append(data, fmt.Sprintf("\n## Fix: change %d\n- Tags: t\n- Content: learned %d\n", i, i)...)
	case 2:
		return insert(fmt.Sprintf("## Note: inserted %d\n- Content: x\n\n", i))
	case 3:
		at := lineStart()
		end := min(len(data), at+r.IntN(3000))
		return append(data[:at:at], data[end:]...)
	case 4:
		if len(data) > 0 {
			data = bytes.Clone(data)
			data[r.IntN(len(data))] = "#x\n -"[r.IntN(5)]
		}
		return data
	case 5:
		return insert([]string{"<<<<<<< ours\n", "=======\n", ">>>>>>> theirs\n", "bad \x00 byte\n", "bad \xff utf-8\n",
			"crlf\r\n", "### mem-1 [decision]\n", "- a bullet\n"}[r.IntN(8)])
	case 6:
		return insert(strings.Repeat("long line without end ", 8000)) // past 2 × chunkMax
	case 7:
		return memfile.GenerateFile(64<<10+r.IntN(256<<10), uint64(i))
	default:
		return bytes.Clone(data) // unchanged
	}
}

// The chunks cut knowing the parent's (chunkCached) are chunkFile's, byte
// for byte and hash for hash, whatever the edit.
func TestChunkCachedIsChunkFile(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := memfile.GenerateFile(512<<10, 4)
	prev := &fileCache{chunks: chunkCached(data, nil).sums}
	for i := range 400 {
		next := editFile(r, data, i)
		got, want := chunkCached(next, prev), chunkFile(next)
		if len(got.objs) != len(want.objs) {
			t.Fatalf("edit %d: %d chunks, want %d", i, len(got.objs), len(want.objs))
		}
		for k, o := range got.objs {
			if o.hash != want.objs[k].hash || !bytes.Equal(o.data, want.objs[k].data) || got.sums[k] != sumOf(o.data, o.hash) {
				t.Fatalf("edit %d: chunk %d differs", i, k)
			}
		}
		data, prev = next, &fileCache{chunks: got.sums}
	}
}

// A snapshot's tree with the chunk cache is the tree without it, byte for
// byte, over random edits, a file rewritten by another writer, and caches
// that are corrupt, stale or gone; its record of the change and its damage
// report are those of the whole files.
func TestSnapshotCacheKeepsTheTree(t *testing.T) {
	h, _ := testRepo(t)
	h.AcceptRemoval = true // random deletions are no mass removal to refuse here
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	data := memfile.GenerateFile(256<<10, 3)
	write(t, h.Store.Path(), string(data))
	take(t, h, "")
	cache := h.cachePath(MemoryName)
	var stale []byte
	for i := range 120 {
		data = editFile(r, data, i)
		if err := os.WriteFile(h.Store.Path(), data, 0o644); err != nil {
			t.Fatal(err)
		}
		old, err := h.head()
		if err != nil {
			t.Fatal(err)
		}
		switch c, _ := os.ReadFile(cache); r.IntN(8) {
		case 0: // corrupt
			if len(c) > 0 {
				c[r.IntN(len(c))] ^= byte(1 + r.IntN(255))
				write(t, cache, string(c))
			}
		case 1: // cut short
			write(t, cache, string(c[:r.IntN(len(c)+1)]))
		case 2: // gone
			_ = os.Remove(cache)
		case 3: // an older snapshot's
			if stale != nil {
				write(t, cache, string(stale))
			}
			stale = c
		}
		res, err := h.Take(ctx, "", Provenance{})
		if err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
		head, err := h.head()
		if err != nil {
			t.Fatal(err)
		}
		c, err := readCommit(h.st, head)
		if err != nil {
			t.Fatal(err)
		}
		if want := addFiles(&batch{}, Files{Memory: data}, nil); c.tree != want {
			t.Fatalf("edit %d: the snapshot's tree is %s, without the cache %s", i, c.tree, want)
		}
		if !res.Created {
			continue
		}
		if want := memfile.Damage(data); !reflect.DeepEqual(res.Problems, want) {
			t.Fatalf("edit %d: damage %v, want %v", i, res.Problems, want)
		}
		parent, err := h.Files(old.String())
		if err != nil {
			t.Fatal(err)
		}
		rec, _ := recordOf(parent.Memory, data, true)
		rec.deliberate = true
		if !strings.HasSuffix(c.message, rec.trailers()) {
			t.Fatalf("edit %d: the record\n%s\nwant\n%s", i, c.message, rec.trailers())
		}
	}
}

// A cache file reads back as written; one cut short, with a byte changed,
// a count that does not match its entries or a chunk no cut makes is no
// cache, and reading it allocates nothing its size does not bound.
func TestChunkCacheFile(t *testing.T) {
	c := &fileCache{clean: true, chunks: chunkCached(memfile.GenerateFile(256<<10, 9), nil).sums}
	data := c.encode()
	if got := decodeCache(data); got == nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("read back %+v", got)
	}
	for i := range len(data) - 1 {
		if decodeCache(data[:i]) != nil {
			t.Fatalf("a cache cut to %d bytes is read", i)
		}
		flipped := bytes.Clone(data)
		flipped[i] ^= 0x20
		if decodeCache(flipped) != nil {
			t.Fatalf("a cache with byte %d changed is read", i)
		}
	}
	resum := func(b []byte) []byte { // b with a valid checksum
		b = b[:len(b)-4]
		return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoliTable()))
	}
	huge := bytes.Clone(data)
	binary.BigEndian.PutUint32(huge[len(cacheHeader)+1:], 1<<31) // the count
	if decodeCache(resum(huge)) != nil {
		t.Fatal("a count larger than the entries is read")
	}
	big := bytes.Clone(data)
	binary.BigEndian.PutUint32(big[len(cacheHeader)+5:], 1<<31) // the first chunk's size
	if decodeCache(resum(big)) != nil {
		t.Fatal("a chunk of 2 GB is read")
	}
}

// A secret written by hand into an entry in the middle of a large archive
// is found, and named, where the archive changed; the archive's tree is
// the tree without the cache, over random edits of it.
func TestArchiveScannedWhereItChanged(t *testing.T) {
	h, _ := testRepo(t)
	h.AcceptRemoval = true
	ctx := context.Background()
	write(t, h.Store.Path(), memfile.Header+"\n"+entry(idA, "A", "first"))
	archive := memfile.GenerateFile(256<<10, 11)
	write(t, h.Store.ArchivePath(), string(archive))
	take(t, h, "")
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 40 {
		if i%2 == 0 {
			archive = append(archive, fmt.Sprintf("\n## Fix: archived %d\n- Tags: t\n- Content: old %d\n", i, i)...)
		} else {
			archive = editFile(r, archive, i)
		}
		write(t, h.Store.ArchivePath(), string(archive))
		take(t, h, "")
		head, _ := h.head()
		c, err := readCommit(h.st, head)
		if err != nil {
			t.Fatal(err)
		}
		mem, _ := os.ReadFile(h.Store.Path())
		if want := addFiles(&batch{}, Files{Memory: mem, Archive: archive}, nil); c.tree != want {
			t.Fatalf("edit %d: the snapshot's tree is %s, without the cache %s", i, c.tree, want)
		}
	}
	archive = memfile.GenerateFile(256<<10, 11)
	write(t, h.Store.ArchivePath(), string(archive))
	take(t, h, "")
	f := memfile.Parse(archive)
	e := f.Entries[len(f.Entries)/2]
	line := "- Content: " + strings.SplitN(e.Content, "\n", 2)[0]
	at := bytes.Index(archive, []byte(line))
	if at < 0 {
		t.Fatalf("no %q in the archive", line)
	}
	key := []byte("AKIA")
	for range 16 {
		key = append(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[r.IntN(32)])
	}
	hand := append(bytes.Clone(archive[:at+len(line)]), append([]byte(" aws_access_key_id = "+string(key)), archive[at+len(line):]...)...)
	write(t, h.Store.ArchivePath(), string(hand))
	_, err := h.Take(ctx, "", Provenance{})
	var se *SecretError
	if !errors.As(err, &se) || se.File != ArchiveName || se.ID != e.ID {
		t.Fatalf("a secret in archived entry %s: %v", e.ID, err)
	}
}
