package history

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// The snapshot format. A snapshot's tree (format 2) holds each memory file
// as a tree of chunks, named by position, whose contents concatenated are
// the file byte for byte, and a small blob naming the format:
//
//	archive/memories.md/000000   the archive's first chunk
//	conflicts.json               the conflict log (when there are conflicts)
//	format                       "memsync snapshot format 2"
//	memories.md/000000           the active file's first chunk
//	memories.md/000001           …
//	purged                       the tombstones, one entry ID per line (purge.go)
//
// Chunk boundaries are content-defined (see chunk): they fall before a
// heading line chosen by a hash of the line itself, so an append or an edit
// changes the one chunk it lands in, and a snapshot writes what changed
// (one chunk, two small trees and a commit), not the whole file; git's
// diff between two snapshots shows the chunks that changed. Plain git
// rebuilds a file: `git archive`, or
//
//	git ls-tree --name-only REF memories.md/ | while read c; do git cat-file blob REF:$c; done
//
// Format 1 (memsync before the format blob) held each file as one blob,
// memories.md and archive/memories.md; memsync reads both and writes format
// 2, so a history turns to format 2 with its first change. A memsync that
// knows only format 1 fails to read a format 2 snapshot (the blob it looks
// for is a tree) and changes nothing; a snapshot of a format newer than
// this memsync knows is refused with ErrNewerFormat.
const (
	formatVersion = 2
	formatName    = "format"
	formatPrefix  = "memsync snapshot format "
)

// ErrNewerFormat is the error of a snapshot written in a format newer than
// this memsync reads.
var ErrNewerFormat = errors.New("snapshot format newer than this memsync reads; upgrade memsync")

// Chunking: a chunk ends before a heading line ("#…") once it holds at
// least chunkMin bytes and the line's hash says so (about one heading in
// chunkOdds), and at the first line start (or byte) past chunkMax whatever
// the lines are. Memory entries run a few hundred bytes, so chunks hold
// about 16 KB.
const (
	chunkMin  = 4 << 10
	chunkMax  = 64 << 10
	chunkOdds = 32
)

// chunk splits data into chunks (at least one, empty for empty data) whose
// concatenation is data.
func chunk(data []byte) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i < len(data); {
		nl := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if nl >= 0 {
			next = i + nl + 1
		}
		// i is a line start: cut before it?
		if size := i - start; size >= chunkMin && (size >= chunkMax || cutBefore(data[i:next])) {
			out = append(out, data[start:i])
			start = i
		}
		// A line longer than chunkMax is cut inside.
		for next-start > 2*chunkMax {
			out = append(out, data[start:start+chunkMax])
			start += chunkMax
		}
		i = next
	}
	return append(out, data[start:])
}

// cutBefore tells whether a chunk may end before line: a heading line whose
// hash falls in one bucket of chunkOdds.
func cutBefore(line []byte) bool {
	if len(line) < 4 || line[0] != '#' {
		return false
	}
	h := fnv.New32a()
	_, _ = h.Write(bytes.TrimRight(line, "\r\n"))
	return h.Sum32()%chunkOdds == 0
}

// stored is how a snapshot holds one memory file: a blob (format 1) or
// chunks (format 2); neither when the file is absent.
type stored struct {
	blob   plumbing.Hash
	chunks []plumbing.Hash
	tree   plumbing.Hash // format 2: the tree of the chunks
}

func (s stored) present() bool { return !s.blob.IsZero() || !s.tree.IsZero() }

// layout is what a snapshot's tree holds.
type layout struct {
	version         int
	memory, archive stored
	conflicts       stored        // the conflict log, a blob (format 2)
	purged          stored        // the tombstones, a blob (purge.go)
	format          plumbing.Hash // the format blob (format 2)
}

// conflictsName is the conflict log's name in a snapshot's tree.
const conflictsName = "conflicts.json"

// readLayout reads a snapshot's tree: a tree holding anything else than the
// memory files and the format blob is no snapshot (ErrNotSnapshot).
func (h *History) readLayout(tree plumbing.Hash) (layout, error) {
	l := layout{version: 1}
	entries, err := readTree(h.st, tree)
	if err != nil {
		return l, err
	}
	for _, e := range entries {
		switch e.name {
		case formatName:
			data, err := readObject(h.st, plumbing.BlobObject, e.hash, 64)
			if err != nil {
				return l, err
			}
			v, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(data), formatPrefix)))
			if err != nil || !strings.HasPrefix(string(data), formatPrefix) {
				return l, fmt.Errorf("%w: its format blob says %q", ErrNotSnapshot, excerpt(data))
			}
			if v > formatVersion {
				return l, fmt.Errorf("%w: format %d (this memsync reads up to %d)", ErrNewerFormat, v, formatVersion)
			}
			l.version, l.format = v, e.hash
		case MemoryName:
			if l.memory, err = h.readStored(e); err != nil {
				return l, err
			}
		case conflictsName:
			if e.mode == "40000" {
				return l, fmt.Errorf("%w: %s is a folder", ErrNotSnapshot, conflictsName)
			}
			l.conflicts = stored{blob: e.hash}
		case purgedName:
			if e.mode == "40000" {
				return l, fmt.Errorf("%w: %s is a folder", ErrNotSnapshot, purgedName)
			}
			l.purged = stored{blob: e.hash}
		case "archive":
			if e.mode != "40000" {
				return l, fmt.Errorf("%w: archive is no folder", ErrNotSnapshot)
			}
			sub, err := readTree(h.st, e.hash)
			if err != nil {
				return l, err
			}
			for _, s := range sub {
				if s.name != MemoryName {
					return l, fmt.Errorf("%w: it holds archive/%s", ErrNotSnapshot, s.name)
				}
				if l.archive, err = h.readStored(s); err != nil {
					return l, err
				}
			}
		default:
			return l, fmt.Errorf("%w: it holds %s", ErrNotSnapshot, e.name)
		}
	}
	return l, nil
}

// excerpt is a short, printable form of a few bytes for an error.
func excerpt(b []byte) string {
	if len(b) > 40 {
		b = b[:40]
	}
	return oneLine(string(b), 40)
}

// readStored reads how a tree entry holds a memory file: a blob, or a tree
// of chunk blobs.
func (h *History) readStored(e treeEntry) (stored, error) {
	if e.mode != "40000" {
		return stored{blob: e.hash}, nil
	}
	entries, err := readTree(h.st, e.hash)
	if err != nil {
		return stored{}, err
	}
	s := stored{tree: e.hash, chunks: make([]plumbing.Hash, 0, len(entries))}
	for _, c := range entries {
		if c.mode == "40000" {
			return stored{}, fmt.Errorf("%w: chunk %s is a folder", ErrNotSnapshot, c.name)
		}
		s.chunks = append(s.chunks, c.hash)
	}
	return s, nil
}

// read returns the file s holds, at most limit bytes (else a *TooBigError,
// with nothing read past the objects' headers); known are chunks whose
// bytes the caller has (the live file's), read from there, and it gets
// the chunks read.
func (h *History) read(s stored, limit int64, known map[plumbing.Hash][]byte) ([]byte, error) {
	if !s.present() {
		return nil, nil
	}
	if s.tree.IsZero() {
		return readObject(h.st, plumbing.BlobObject, s.blob, limit)
	}
	var total int64
	for _, c := range s.chunks {
		if b, ok := known[c]; ok {
			total += int64(len(b))
			continue
		}
		size, err := h.size(c)
		if err != nil {
			return nil, fmt.Errorf("read blob %s: %w", c, err)
		}
		total += size
	}
	if total > limit {
		return nil, &TooBigError{Path: "chunks of " + s.tree.String(), Size: total, Limit: limit}
	}
	out := make([]byte, 0, total)
	for _, c := range s.chunks {
		b, ok := known[c]
		if !ok {
			var err error
			b, err = readObject(h.st, plumbing.BlobObject, c, limit-int64(len(out)))
			if vanished(err) {
				// A repack by another process moved it (see size).
				h.st.Reindex()
				b, err = readObject(h.st, plumbing.BlobObject, c, limit-int64(len(out)))
			}
			if err != nil {
				return nil, err
			}
			if known != nil {
				known[c] = b
			}
		}
		out = append(out, b...)
	}
	return out, nil
}

// vanished tells whether err is an object or pack that was not where the
// object store listed it: a repack by another process, or a missing object.
func vanished(err error) bool {
	return errors.Is(err, plumbing.ErrObjectNotFound) || errors.Is(err, dotgit.ErrPackfileNotFound) || errors.Is(err, os.ErrNotExist)
}

// chunked is a live file cut into chunks: their objects and bytes by hash,
// and (chunkCached) each chunk's length and checksums, the next cache.
type chunked struct {
	objs   []*object
	byHash map[plumbing.Hash][]byte
	sums   []chunkSum
}

func chunkFile(data []byte) chunked {
	parts := chunk(data)
	c := chunked{objs: make([]*object, len(parts)), byHash: make(map[plumbing.Hash][]byte, len(parts))}
	for i, p := range parts {
		c.objs[i] = newObject(plumbing.BlobObject, p)
		c.byHash[c.objs[i].hash] = p
	}
	return c
}

// chunkCached is chunkFile for a live file whose parent snapshot's chunks
// prev knows (nil: nothing known), with the chunks' sums: the leading
// chunks reusable keeps are neither cut nor hashed again, and a chunk cut
// anew that has the length and checksums of one of prev's has its hash.
// Its chunks and their hashes are chunkFile's (chunkcache.go says why the
// checksums are enough).
func chunkCached(data []byte, prev *fileCache) chunked {
	c := chunked{byHash: map[plumbing.Hash][]byte{}}
	add := func(o *object, s chunkSum) {
		c.objs = append(c.objs, o)
		c.sums = append(c.sums, s)
		c.byHash[o.hash] = o.data
	}
	from := 0 // where chunking resumes
	type key struct {
		size             int
		castagnoli, ieee uint32
	}
	var have map[key]plumbing.Hash
	if prev != nil {
		n := reusable(data, prev.chunks)
		for _, s := range prev.chunks[:n] {
			add(&object{typ: plumbing.BlobObject, hash: s.hash, data: data[from : from+s.size]}, s)
			from += s.size
		}
		have = make(map[key]plumbing.Hash, len(prev.chunks)-n)
		for _, s := range prev.chunks[n:] {
			have[key{s.size, s.castagnoli, s.ieee}] = s.hash
		}
	}
	for _, p := range chunk(data[from:]) {
		s := sumOf(p, plumbing.ZeroHash)
		o := &object{typ: plumbing.BlobObject, data: p}
		if x, ok := have[key{s.size, s.castagnoli, s.ieee}]; ok {
			o.hash = x
		} else {
			o.hash = plumbing.ComputeHash(plumbing.BlobObject, p)
		}
		s.hash = o.hash
		add(o, s)
	}
	return c
}

// reusable is how many leading chunks of prev (the chunks of a parent
// snapshot's file) the chunking of data keeps as they are, which are not
// cut again: chunk decides a cut before a line from that line's bytes and
// the length of the chunk so far, and a cut at a line start cuts before
// the line there, so where data has the bytes of prev's first k chunks at
// the same offsets, its chunking makes every cut the parent's made up to
// the start of chunk k-1 if that start is a line start and chunk k-1 holds
// a line end (the line the cut looked at); chunking data from there on is
// chunk of the rest. It is the largest such k-1 (0: cut it all).
func reusable(data []byte, prev []chunkSum) int {
	off, k := 0, 0
	for k < len(prev) && off+prev[k].size <= len(data) && prev[k].matches(data[off:off+prev[k].size]) {
		off += prev[k].size
		k++
	}
	end := off
	for i := k - 1; i > 0; i-- {
		start := end - prev[i].size
		if data[start-1] == '\n' && bytes.IndexByte(data[start:end], '\n') >= 0 {
			return i
		}
		end = start
	}
	return 0
}

// sameAs tells whether the file c is the one s holds.
func (c chunked) sameAs(s stored) bool {
	if s.tree.IsZero() || len(s.chunks) != len(c.objs) {
		return false
	}
	for i, o := range c.objs {
		if o.hash != s.chunks[i] {
			return false
		}
	}
	return true
}

// addFile adds to b the chunks of c that are not among have (objects the
// repository has) and the tree of them, and returns the tree's hash.
func addFile(b *batch, c chunked, have map[plumbing.Hash]bool) plumbing.Hash {
	entries := make([]treeEntry, len(c.objs))
	for i, o := range c.objs {
		if !have[o.hash] {
			b.add(o)
		}
		entries[i] = treeEntry{"100644", fmt.Sprintf("%06d", i), o.hash}
	}
	return b.add(newObject(plumbing.TreeObject, encodeTree(entries)))
}

// formatBlob is the content of the format blob this memsync writes.
func formatBlob() []byte { return []byte(formatPrefix + strconv.Itoa(formatVersion) + "\n") }

// addLayout adds to b a format 2 snapshot tree holding memory and archive
// (nil: absent), the conflict log and the tombstones (nil: none) and
// returns its hash; have are objects the repository has, which are not
// added again.
func addLayout(b *batch, memory, archive *chunked, conflicts, purged []byte, have map[plumbing.Hash]bool) plumbing.Hash {
	var root []treeEntry // in git's order: "archive/" < "conflicts.json" < "format" < "memories.md/" < "purged"
	if archive != nil {
		sub := b.add(newObject(plumbing.TreeObject, encodeTree([]treeEntry{{"40000", MemoryName, addFile(b, *archive, have)}})))
		root = append(root, treeEntry{"40000", "archive", sub})
	}
	if conflicts != nil {
		c := newObject(plumbing.BlobObject, conflicts)
		if !have[c.hash] {
			b.add(c)
		}
		root = append(root, treeEntry{"100644", conflictsName, c.hash})
	}
	f := newObject(plumbing.BlobObject, formatBlob())
	if !have[f.hash] {
		b.add(f)
	}
	root = append(root, treeEntry{"100644", formatName, f.hash})
	if memory != nil {
		root = append(root, treeEntry{"40000", MemoryName, addFile(b, *memory, have)})
	}
	if purged != nil {
		t := newObject(plumbing.BlobObject, purged)
		if !have[t.hash] {
			b.add(t)
		}
		root = append(root, treeEntry{"100644", purgedName, t.hash})
	}
	return b.add(newObject(plumbing.TreeObject, encodeTree(root)))
}

// haveOf is the set of blobs a snapshot's layout names: they are in the
// repository (the ref reaches them), so a new snapshot need not write them.
func haveOf(ls ...layout) map[plumbing.Hash]bool {
	have := map[plumbing.Hash]bool{}
	for _, l := range ls {
		for _, x := range []plumbing.Hash{l.format, l.conflicts.blob, l.purged.blob} {
			if !x.IsZero() {
				have[x] = true
			}
		}
		for _, s := range []stored{l.memory, l.archive} {
			for _, c := range s.chunks {
				have[c] = true
			}
		}
	}
	return have
}
