// Package searchidx keeps the search index of a memory file in its state
// dir: for every entry, where it lies in the file, its ID, type and tags,
// and the lengths of its fields; for every term, the entries that hold it
// and how often in each field (recall.Terms). A search reads the index and
// then only the entries it returns, and ranks exactly as recall.Search
// ranks the whole file (recall.SearchIndexed).
//
// The index is a cache, never memory: it is not in snapshots, deleting it
// is safe, and it is trusted only when it matches the file. It records the
// length of the file it was built from and a CRC-32 of those bytes; a
// search reads the file (as every search does) and uses the index only when
// the file starts with exactly those bytes. Bytes after them are entries
// appended since (by memsync or by another tool): they are parsed and
// counted on the spot (memfile.ParseSpan), and the index is built again
// once they are many. Anything else (a rewrite, a hand edit anywhere in
// the file, a torn or foreign index file, one that does not decode within
// its bounds, or one whose own CRC-32 does not match) and the index is
// ignored: the search reads the whole file, and the index is built anew.
// A file with damage, "\r" line ends or both dialects gets no index.
//
// The file (little-endian) is a fixed header, then the tables a search
// reads whole (sections, entries, terms), the postings, read term by term,
// and the entries' IDs, types and tags, read only by a filter, by an
// entry read alone and when entries were appended. Each part has its own
// CRC-32, checked when it is read; every count and offset is checked
// against the file's bounds before use.
package searchidx

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/inject"
	"github.com/memsync/memsync/internal/recall"
	"github.com/memsync/memsync/memfile"
)

// FileName is the index's name in the state dir.
const FileName = "search.idx"

// magic starts an index file; the version is in it.
const magic = "memsync search index 7\n"

// rebuildTail is how many appended entries a search counts on the spot
// before the index is built again (Index.Stale).
const rebuildTail = 256

// checksum is the CRC-32 (IEEE) of b: its table is built with the package
// and the sums use the processor's carry-less multiply, where CRC-32's
// tables cost every command that reads the index 0.1 to 0.2 ms to build.
func checksum(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// The header's fields, each a little-endian uint64, after magic.
const (
	hCRC        = iota // of the rest of the header and of the tables
	hCovered           // bytes of the memory file indexed
	hFileCRC           // their CRC-32
	hDialect           // memfile.Dialect
	hLines             // lines the indexed bytes start (for the line numbers of appended entries)
	hDocs              // entries
	hTerms             // distinct terms
	hSections          // offset of the sections (uvarint-prefixed "## " headings, ralph's dialect)
	hDocTable          // offset of the entries: docWords uint32 each
	hDict              // offset of the terms: dictWords uint32 each, and one more (the ends)
	hTermText          // offset of the terms' bytes, sorted
	hPostings          // offset of the postings: per term, per entry, uvarints: doc delta, counts
	hMeta              // offset of the metadata: (docs+1) uint32 offsets, then per entry ID, type, tags
	hMetaCRC           // CRC-32 of the metadata
	hEnd               // size of the file
	hLensTotal         // the entries' field lengths added up: 4 words
	headerWords = hLensTotal + 4
)

const (
	headerSize = len(magic) + 8*headerWords
	docWords   = 12 // start, end, line, section+1, the four lens, the two halves of the key (spanKey), of the ID's (idKey)
	dictWords  = 4  // text offset, postings offset, postings count, postings CRC
)

// maxEntry bounds the bytes of one entry an index may name: an entry read
// alone is read into memory.
const maxEntry = 64 << 20

// Build returns the index of data, a memory file's bytes, or false for a
// file that gets none (see the package doc).
func Build(data []byte) ([]byte, bool) { return BuildFrom(nil, data) }

// spanKey identifies what an entry's terms depend on: the bytes of its
// span and, in ralph's dialect, its section.
func spanKey(section string, span []byte) uint64 {
	h := sha256.New()
	_, _ = h.Write([]byte(section))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(span)
	var sum [sha256.Size]byte
	return binary.LittleEndian.Uint64(h.Sum(sum[:0]))
}

// idKey is an entry's ID as a number, kept in the entry table: appended
// entries are checked against the indexed IDs without reading them.
// Both keys are the first 64 bits of a SHA-256, which needs no table
// built at start (CRC-64's cost each command about 0.05 ms).
func idKey(id string) uint64 {
	sum := sha256.Sum256([]byte(id))
	return binary.LittleEndian.Uint64(sum[:])
}

// BuildFrom is Build that takes the terms of the entries old also holds
// (the same bytes in the same section) from old rather than counting them
// again: after a rewrite (a delete, an archive, an edit), only the entries
// that changed are read again. It gives the bytes Build gives.
func BuildFrom(old *Index, data []byte) ([]byte, bool) {
	if bytes.IndexByte(data, '\r') >= 0 || len(data) >= 1<<31 {
		return nil, false
	}
	f := memfile.Parse(data)
	if len(f.Problems) > 0 || f.CRLF {
		return nil, false
	}
	lines := []int{0} // where each line starts
	var sections []string
	var sectionAt []int // per line, the section it is in (ralph's dialect), -1 for none
	cur := -1
	for i := 0; i < len(data); {
		l := data[i:]
		if j := bytes.IndexByte(l, '\n'); j >= 0 {
			l = l[:j]
		}
		if f.Dialect == memfile.Ralph && bytes.HasPrefix(l, []byte("## ")) {
			sections = append(sections, string(l[3:]))
			cur = len(sections) - 1
		}
		sectionAt = append(sectionAt, cur)
		if i += len(l) + 1; i <= len(data) {
			lines = append(lines, i)
		}
	}
	sectionAt = append(sectionAt, cur)

	h := make([]uint64, headerWords)
	h[hCovered], h[hFileCRC], h[hDialect] = uint64(len(data)), uint64(checksum(data)), uint64(f.Dialect)
	h[hLines], h[hDocs] = uint64(len(lines)), uint64(len(f.Entries))
	b := make([]byte, headerSize, headerSize+len(data))
	h[hSections] = uint64(len(b))
	b = binary.AppendUvarint(b, uint64(len(sections)))
	for _, s := range sections {
		b = appendString(b, s)
	}
	h[hDocTable] = uint64(len(b))
	var counter recall.Counter
	var postings [][]recall.Posting // by term number
	var oldKeys map[uint64]int      // old's entries by key
	// An entry of old -> the entry that takes its terms (-1: none; one at
	// most: two entries of the same bytes have one ID, and no index).
	var takenBy []int32
	reusing := false
	if old != nil {
		takenBy = make([]int32, old.docCount())
		for i := range takenBy {
			takenBy[i] = -1
		}
		oldKeys = make(map[uint64]int, old.docCount())
		for i := range old.docCount() {
			oldKeys[uint64(old.word(i, 8))|uint64(old.word(i, 9))<<32] = i
		}
	}
	var meta []byte
	metaAt := make([]uint32, 0, len(f.Entries)+1)
	for k := range f.Entries {
		e := &f.Entries[k]
		start, end := lines[e.Line-1], len(data)
		if k+1 < len(f.Entries) {
			end = lines[f.Entries[k+1].Line-1]
		}
		d := inject.Doc(e)
		for _, v := range []int{start, end, e.Line, sectionAt[e.Line-1] + 1} {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
		for f, l := range recall.Lens(&d) {
			b = binary.LittleEndian.AppendUint32(b, l)
			h[hLensTotal+f] += uint64(l)
		}
		section := ""
		if s := sectionAt[e.Line-1]; s >= 0 {
			section = sections[s]
		}
		key, id := spanKey(section, data[start:end]), idKey(e.ID)
		for _, v := range []uint64{key, id} {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
			b = binary.LittleEndian.AppendUint32(b, uint32(v>>32))
		}
		if o, ok := oldKeys[key]; ok && takenBy[o] < 0 {
			reusing = true
			takenBy[o] = int32(k)
		} else {
			counter.Doc(&d, func(id int, c recall.Counts) {
				for id >= len(postings) {
					postings = append(postings, nil)
				}
				postings[id] = append(postings[id], recall.Posting{Doc: k, Counts: c})
			})
		}
		metaAt = append(metaAt, uint32(len(meta)))
		for _, v := range []string{e.ID, e.Type, e.Title, e.Date} {
			meta = appendString(meta, v)
		}
		meta = binary.AppendUvarint(meta, uint64(len(e.Tags)))
		for _, t := range e.Tags {
			meta = appendString(meta, t)
		}
		for _, k := range metaFields {
			meta = appendString(meta, e.Field(k))
		}
	}
	metaAt = append(metaAt, uint32(len(meta)))
	if reusing {
		// The terms of the entries taken from old: its postings, renumbered,
		// after the postings counted above (counted[id] of them).
		counted := make([]int, len(postings))
		for id, ps := range postings {
			counted[id] = len(ps)
		}
		ok := old.eachPostings(func(term []byte, ps []recall.Posting) {
			id := -1
			for _, p := range ps {
				k := takenBy[p.Doc]
				if k < 0 {
					continue
				}
				if id < 0 {
					id = counter.ID(string(term))
					for id >= len(postings) {
						postings = append(postings, nil)
					}
				}
				postings[id] = append(postings[id], recall.Posting{Doc: int(k), Counts: p.Counts})
			}
		})
		if !ok {
			return BuildFrom(nil, data) // old's postings do not check out: count them all
		}
		var buf []recall.Posting
		for id, ps := range postings {
			n := 0
			if id < len(counted) {
				n = counted[id]
			}
			buf = mergeRuns(ps, n, buf)
		}
	}
	terms := make([]int, len(postings)) // term numbers, by term
	for id := range terms {
		terms[id] = id
	}
	slices.SortFunc(terms, func(a, b int) int { return strings.Compare(counter.Terms[a], counter.Terms[b]) })
	h[hTerms] = uint64(len(terms))
	var text, post, p []byte
	dict := make([]uint32, 0, dictWords*(len(terms)+1))
	for _, id := range terms {
		t := counter.Terms[id]
		p = p[:0]
		prev := 0
		for _, ps := range postings[id] {
			p = binary.AppendUvarint(p, uint64(ps.Doc-prev))
			prev = ps.Doc
			for _, c := range ps.Counts {
				p = binary.AppendUvarint(p, uint64(c))
			}
		}
		dict = append(dict, uint32(len(text)), uint32(len(post)), uint32(len(postings[id])), checksum(p))
		text = append(text, t...)
		post = append(post, p...)
	}
	dict = append(dict, uint32(len(text)), uint32(len(post)), 0, 0)
	if len(post) >= 1<<32 || len(meta) >= 1<<32 {
		return nil, false
	}
	h[hDict] = uint64(len(b))
	for _, v := range dict {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	h[hTermText] = uint64(len(b))
	b = append(b, text...)
	h[hPostings] = uint64(len(b))
	b = append(b, post...)
	h[hMeta] = uint64(len(b))
	for _, v := range metaAt {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	b = append(b, meta...)
	h[hMetaCRC] = uint64(checksum(b[h[hMeta]:]))
	h[hEnd] = uint64(len(b))
	copy(b, magic)
	for i, v := range h {
		binary.LittleEndian.PutUint64(b[len(magic)+8*i:], v)
	}
	binary.LittleEndian.PutUint64(b[len(magic):], uint64(tablesCRC(b, h)))
	return b, true
}

// mergeRuns puts ps in the order of its entries: ps[:n] are in order
// already (counted entry by entry), ps[n:] (taken from the old index) are
// in order too unless entries moved, and no entry is in both. buf is
// scratch space, returned for the next call.
func mergeRuns(ps []recall.Posting, n int, buf []recall.Posting) []recall.Posting {
	byDoc := func(a, b recall.Posting) int { return a.Doc - b.Doc }
	a, b := ps[:n], ps[n:]
	if !slices.IsSortedFunc(b, byDoc) {
		slices.SortFunc(b, byDoc)
	}
	if len(a) == 0 || len(b) == 0 || a[len(a)-1].Doc < b[0].Doc {
		return buf
	}
	buf = append(buf[:0], a...)
	i, j, k := 0, 0, 0
	for i < len(buf) && j < len(b) {
		if buf[i].Doc < b[j].Doc {
			ps[k] = buf[i]
			i++
		} else {
			ps[k] = b[j] // b[j] is at or after ps[k]: never overwritten before it is read
			j++
		}
		k++
	}
	copy(ps[k:], buf[i:])
	return buf
}

// tablesCRC is the CRC-32 of the header (after its own field) and the
// tables, what a search reads whole.
func tablesCRC(b []byte, h []uint64) uint32 {
	c := checksum(b[len(magic)+8 : headerSize])
	return crc32.Update(c, crc32.IEEETable, b[h[hSections]:h[hPostings]])
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// ErrInvalid is what Open returns for an index it does not trust.
var ErrInvalid = errors.New("search index invalid")

// Index is the index of a memory file, with the entries appended after the
// part it covers.
type Index struct {
	src      io.ReaderAt // the index file, for postings and metadata
	file     io.ReaderAt // the memory file, for the entries
	h        []uint64
	dialect  memfile.Dialect
	lines    int
	sections []string
	docs     []byte // the entry table
	dict     []byte
	text     []byte
	meta     []byte // read at the first use; metaErr: it did not check out
	metaErr  error
	// The entries appended after the indexed part, and their terms.
	tail     []memfile.Entry
	tailDocs []recall.Doc
	tailPost map[string][]recall.Posting
}

// maxIndex bounds the size of an index file read for a memory file of n
// bytes: far above what Build writes for it (less than n), so that a
// hostile or foreign file is never read into memory whole.
func maxIndex(n int64) int64 { return 8*n + 16<<20 }

// openBase opens the index file at path, of at most limit bytes, and
// checks its header and tables; the index is not yet matched to a memory
// file (attach).
func openBase(path string, limit int64) (*Index, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|fsutil.NoFollow, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		uid, ok := fsutil.Owner(fi)
		if !fi.Mode().IsRegular() || ok && uid != os.Getuid() || fi.Size() > limit {
			err = ErrInvalid // not this user's, or too large: never trusted
		}
	}
	var ix *Index
	if err == nil {
		ix, err = readBase(f, fi.Size())
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return ix, nil
}

// Close closes the index file.
func (ix *Index) Close() error {
	if c, ok := ix.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Decode is the index raw (Build's) of the memory file data, with the
// entries appended after the part it covers.
func Decode(raw, data []byte) (*Index, error) {
	ix, err := readBase(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return nil, err
	}
	if !ix.covers(data) {
		return nil, ErrInvalid
	}
	return ix, ix.attach(bytes.NewReader(data), data[ix.h[hCovered]:])
}

// covers reports whether data starts with the bytes the index covers.
func (ix *Index) covers(data []byte) bool {
	return ix.h[hCovered] <= uint64(len(data)) && uint64(checksum(data[:ix.h[hCovered]])) == ix.h[hFileCRC]
}

// readBase checks the header of an index of size bytes and reads its tables.
func readBase(src io.ReaderAt, size int64) (*Index, error) {
	head := make([]byte, headerSize)
	if _, err := src.ReadAt(head, 0); err != nil || string(head[:len(magic)]) != magic {
		return nil, ErrInvalid
	}
	h := make([]uint64, headerWords)
	for i := range h {
		h[i] = binary.LittleEndian.Uint64(head[len(magic)+8*i:])
	}
	// Every offset in order within the file, every count within what its
	// table can hold, before anything is allocated by them.
	ok := h[hEnd] == uint64(size) && h[hCovered] < 1<<31 && h[hDocs] <= uint64(size) && h[hTerms] <= uint64(size) && h[hDialect] <= uint64(memfile.Ralph) &&
		h[hLines] >= 1 && h[hLines] <= h[hCovered]+1 && uint64(headerSize) == h[hSections]
	order := []int{hSections, hDocTable, hDict, hTermText, hPostings, hMeta, hEnd}
	for k := 1; k < len(order); k++ {
		ok = ok && h[order[k-1]] <= h[order[k]]
	}
	ok = ok && h[hDict]-h[hDocTable] == 4*docWords*h[hDocs] && h[hTermText]-h[hDict] == 4*dictWords*(h[hTerms]+1) &&
		h[hEnd]-h[hMeta] >= 4*(h[hDocs]+1)
	if !ok {
		return nil, ErrInvalid
	}
	tables := make([]byte, h[hPostings]-h[hSections])
	if _, err := src.ReadAt(tables, int64(h[hSections])); err != nil {
		return nil, ErrInvalid
	}
	if c := crc32.Update(checksum(head[len(magic)+8:]), crc32.IEEETable, tables); uint64(c) != h[hCRC] {
		return nil, ErrInvalid
	}
	off := func(k int) uint64 { return h[k] - h[hSections] }
	ix := &Index{src: src, h: h, dialect: memfile.Dialect(h[hDialect]), lines: int(h[hLines]),
		docs: tables[off(hDocTable):off(hDict)], dict: tables[off(hDict):off(hTermText)], text: tables[off(hTermText):]}
	r := reader{b: tables[:off(hDocTable)]}
	for range r.int(len(r.b)) {
		ix.sections = append(ix.sections, r.string())
	}
	if r.err || len(r.b) != 0 || !ix.checkTables() {
		return nil, ErrInvalid
	}
	return ix, nil
}

// attach makes file, a memory file that starts with the bytes the index
// covers and goes on with tail, the one the index reads its entries from;
// ErrInvalid when tail is not entries the index can add (see appendTail).
func (ix *Index) attach(file io.ReaderAt, tail []byte) error {
	ix.file = file
	if len(tail) == 0 {
		return nil
	}
	if ix.docCount() == 0 {
		return ErrInvalid // the dialect is not settled yet
	}
	section := ""
	if n := len(ix.sections); n > 0 {
		section = ix.sections[n-1]
	}
	first := ix.lines
	if c := int64(ix.h[hCovered]); c > 0 {
		last := make([]byte, 1)
		if _, err := file.ReadAt(last, c-1); err != nil {
			return ErrInvalid
		}
		if last[0] != '\n' {
			first-- // the tail starts on the last line of the indexed part
		}
	}
	es, ok := memfile.ParseSpan(ix.dialect, section, tail, first)
	if !ok || !ix.appendTail(es) {
		return ErrInvalid
	}
	return nil
}

// checkTables checks the entry table and the dictionary against the
// bounds of the file: entries in file order within the indexed part, on
// increasing lines, in a known section; terms and postings in order.
func (ix *Index) checkTables() bool {
	at, line := 0, 0
	for i := range ix.docCount() {
		start, end, l, sec := ix.word(i, 0), ix.word(i, 1), ix.word(i, 2), ix.word(i, 3)
		if start < at || end <= start || end > int(ix.h[hCovered]) || l <= line || l > ix.lines || sec > len(ix.sections) || end-start > maxEntry {
			return false
		}
		at, line = end, l
	}
	nt := int(ix.h[hTerms])
	postings := int(ix.h[hMeta] - ix.h[hPostings])
	for t := range nt + 1 {
		text, post := ix.dictWord(t, 0), ix.dictWord(t, 1)
		if t > 0 && (text <= ix.dictWord(t-1, 0) || post <= ix.dictWord(t-1, 1) || ix.dictWord(t-1, 2) > ix.docCount()) {
			return false
		}
		if t == nt && (text != len(ix.text) || post != postings) {
			return false
		}
	}
	return true
}

func (ix *Index) docCount() int { return int(ix.h[hDocs]) }

// word is the k-th word of entry i in the entry table.
func (ix *Index) word(i, k int) int {
	return int(binary.LittleEndian.Uint32(ix.docs[4*(docWords*i+k):]))
}

// dictWord is the k-th word of term t in the dictionary.
func (ix *Index) dictWord(t, k int) int {
	return int(binary.LittleEndian.Uint32(ix.dict[4*(dictWords*t+k):]))
}

// term is the text of term t.
func (ix *Index) term(t int) []byte { return ix.text[ix.dictWord(t, 0):ix.dictWord(t+1, 0)] }

// appendTail takes the entries appended after the indexed part, and
// reports false when one repeats an ID (Parse of the whole file would
// report it) or has an ID derived from its text (which depends on the
// whole file).
func (ix *Index) appendTail(es []memfile.Entry) bool {
	// The few appended IDs in a set, the indexed ones checked against it.
	ids := make(map[string]bool, len(es))
	for k := range es {
		if ids[es[k].ID] || es[k].DerivedID() {
			return false
		}
		ids[es[k].ID] = true
	}
	if len(es) > 0 {
		keys := make(map[uint64]bool, len(es))
		for k := range es {
			keys[idKey(es[k].ID)] = true
		}
		for i := range ix.docCount() {
			if keys[uint64(ix.word(i, 10))|uint64(ix.word(i, 11))<<32] {
				return false // that ID, or one of the same key: the whole file decides
			}
		}
	}
	ix.tailPost = map[string][]recall.Posting{}
	for k := range es {
		e := &es[k]
		d := inject.Doc(e)
		ix.tailDocs = append(ix.tailDocs, d)
		recall.Terms(&d, func(t string, c recall.Counts) {
			ix.tailPost[t] = append(ix.tailPost[t], recall.Posting{Doc: ix.docCount() + k, Counts: c})
		})
	}
	ix.tail = es
	return true
}

// Stale reports whether the index should be built again: many entries
// were appended after the part it covers.
func (ix *Index) Stale() bool { return len(ix.tail) > rebuildTail }

// Len is the number of entries: the indexed ones, then the appended ones.
func (ix *Index) Len() int { return ix.docCount() + len(ix.tail) }

// metaFields are the fields of an entry the index keeps beside its ID,
// type, title, date and tags: those inject's filters read (a session's
// view, a superseded entry, a stale citation).
var metaFields = [...]string{"Session" /* memfile.Visible */, memfile.SupersededByField, memfile.CitesField}

// meta is what the index keeps of an entry besides its terms.
type meta struct {
	id, typ, title, date string
	tags                 []string
	fields               [len(metaFields)]string // their values
}

// metaOf is entry i's metadata, read from the index (read and checked at
// the first call); false when it does not check out.
func (ix *Index) metaOf(i int) (m meta, ok bool) {
	m, _, ok = ix.metaInto(i, nil)
	return m, ok
}

// metaInto is metaOf with the tags appended to buf (and sliced from it),
// which it returns.
func (ix *Index) metaInto(i int, buf []string) (m meta, _ []string, ok bool) {
	r, ok := ix.metaRecord(i)
	if !ok {
		return meta{}, buf, false
	}
	// The strings share the metadata's bytes, which never change.
	m.id, m.typ, m.title, m.date = r.view(), r.view(), r.view(), r.view()
	if n := r.int(len(r.b)); n > 0 {
		at := len(buf)
		for range n {
			buf = append(buf, r.view())
		}
		m.tags = buf[at:len(buf):len(buf)]
	}
	for k := range m.fields {
		m.fields[k] = r.view()
	}
	return m, buf, !r.err
}

// metaRecord is a reader of entry i's metadata record (read and checked
// at the first call); false when it does not check out.
func (ix *Index) metaRecord(i int) (reader, bool) {
	if ix.meta == nil && ix.metaErr == nil {
		ix.meta = make([]byte, ix.h[hEnd]-ix.h[hMeta])
		if _, err := ix.src.ReadAt(ix.meta, int64(ix.h[hMeta])); err != nil || uint64(checksum(ix.meta)) != ix.h[hMetaCRC] {
			ix.meta, ix.metaErr = nil, ErrInvalid
		}
	}
	if ix.metaErr != nil {
		return reader{}, false
	}
	n := ix.docCount()
	at := func(k int) int { return int(binary.LittleEndian.Uint32(ix.meta[4*k:])) }
	blob := ix.meta[4*(n+1):]
	lo, hi := at(i), at(i+1)
	if lo > hi || hi > len(blob) {
		return reader{}, false
	}
	return reader{b: blob[lo:hi]}, true
}

// Meta is entry i's type and tags (recall.Indexed); an entry whose
// metadata does not check out has none.
func (ix *Index) Meta(i int) recall.Doc {
	if i >= ix.docCount() {
		return ix.tailDocs[i-ix.docCount()]
	}
	m, _ := ix.metaOf(i)
	return recall.Doc{Type: m.typ, Tags: m.tags}
}

// LensTotal are the lengths of the fields of all the entries added up
// (recall.Totaled).
func (ix *Index) LensTotal() (t [4]uint64) {
	for f := range t {
		t[f] = ix.h[hLensTotal+f]
	}
	for k := range ix.tailDocs {
		for f, l := range recall.Lens(&ix.tailDocs[k]) {
			t[f] += uint64(l)
		}
	}
	return t
}

// Lens are the lengths of entry i's fields (recall.Indexed).
func (ix *Index) Lens(i int) recall.Counts {
	if i >= ix.docCount() {
		return recall.Lens(&ix.tailDocs[i-ix.docCount()])
	}
	var l recall.Counts
	for f := range l {
		l[f] = uint32(ix.word(i, 4+f))
	}
	return l
}

// Postings are the entries that hold term (recall.Indexed); none when
// the term's postings do not check out.
func (ix *Index) Postings(term string) []recall.Posting {
	nt := int(ix.h[hTerms])
	t := sort.Search(nt, func(t int) bool { return string(ix.term(t)) >= term })
	out := ix.tailPost[term]
	if t == nt || string(ix.term(t)) != term {
		return out
	}
	lo, hi, n := ix.dictWord(t, 1), ix.dictWord(t+1, 1), ix.dictWord(t, 2)
	p := make([]byte, hi-lo)
	if _, err := ix.src.ReadAt(p, int64(ix.h[hPostings])+int64(lo)); err != nil || checksum(p) != uint32(ix.dictWord(t, 3)) {
		return out
	}
	base, ok := ix.decodePostings(make([]recall.Posting, 0, n+len(out)), p, n)
	if !ok {
		return out
	}
	return append(base, out...)
}

// decodePostings appends to out the n postings encoded in p (doc deltas
// and counts, uvarints); false when they run past p or past the entries.
func (ix *Index) decodePostings(out []recall.Posting, p []byte, n int) ([]recall.Posting, bool) {
	r := reader{b: p}
	prev := 0
	for range n {
		ps := recall.Posting{Doc: prev + r.int(ix.docCount()-1-prev)}
		for f := range ps.Counts {
			ps.Counts[f] = uint32(r.int(1<<32 - 1))
		}
		if r.err {
			return out, false
		}
		out = append(out, ps)
		prev = ps.Doc
	}
	return out, true
}

// eachPostings calls fn with every term of the index and its postings, in
// term order; false when the postings do not check out.
func (ix *Index) eachPostings(fn func(term []byte, ps []recall.Posting)) bool {
	all := make([]byte, ix.h[hMeta]-ix.h[hPostings])
	if _, err := ix.src.ReadAt(all, int64(ix.h[hPostings])); err != nil {
		return false
	}
	var ps []recall.Posting
	for t := range int(ix.h[hTerms]) {
		p := all[ix.dictWord(t, 1):ix.dictWord(t+1, 1)]
		if checksum(p) != uint32(ix.dictWord(t, 3)) {
			return false
		}
		var ok bool
		if ps, ok = ix.decodePostings(ps[:0], p, ix.dictWord(t, 2)); !ok {
			return false
		}
		fn(ix.term(t), ps)
	}
	return true
}

// Doc is entry i as recall ranks it (recall.Indexed); the zero Doc for an
// entry that cannot be read alone.
func (ix *Index) Doc(i int) recall.Doc {
	if e, ok := ix.Entry(i); ok {
		return inject.Doc(e)
	}
	return recall.Doc{}
}

// Entry reads entry i from the memory file, alone; false when it cannot be
// read alone (the caller then reads the whole file).
func (ix *Index) Entry(i int) (*memfile.Entry, bool) {
	if i >= ix.docCount() {
		return &ix.tail[i-ix.docCount()], true
	}
	section := ""
	if s := ix.word(i, 3); s > 0 {
		section = ix.sections[s-1]
	}
	span := make([]byte, ix.word(i, 1)-ix.word(i, 0))
	if _, err := ix.file.ReadAt(span, int64(ix.word(i, 0))); err != nil {
		return nil, false
	}
	es, ok := memfile.ParseSpan(ix.dialect, section, span, ix.word(i, 2))
	if !ok || len(es) != 1 {
		return nil, false
	}
	if es[0].DerivedID() {
		// A derived ID counts the identical entries before it: the
		// index has the one Parse gave.
		m, ok := ix.metaOf(i)
		if !ok {
			return nil, false
		}
		es[0].ID = m.id
	}
	return &es[0], true
}

// reader decodes the variable-length parts of an index file; err records
// the first read out of bounds.
type reader struct {
	b   []byte
	err bool
}

// int reads a uvarint of at most limit.
func (r *reader) int(limit int) int {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > uint64(max(limit, 0)) {
		r.err, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

// view reads a string that shares r's bytes.
func (r *reader) view() string {
	n := r.int(len(r.b))
	s := unsafe.String(unsafe.SliceData(r.b), n)
	r.b = r.b[n:]
	return s
}

func (r *reader) string() string {
	n := r.int(len(r.b))
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// Save writes the index raw (Build's) into dir, the state dir, with the
// one atomic write (not synced: a cache, checked when read); perm and
// dirPerm are the modes of new files and folders.
func Save(dir string, raw []byte, perm, dirPerm os.FileMode) error {
	if err := fsutil.MkdirAll(dir, dirPerm); err != nil {
		return err
	}
	return fsutil.WriteCache(filepath.Join(dir, FileName), raw, perm)
}

// Entries are the index's entries as inject chooses from them: the
// filters and the ranking read the index, and only the entries chosen are
// read from the memory file.
func (ix *Index) Entries() inject.Source { return &entries{ix: ix} }

// entries is an Index as an inject.Source.
type entries struct {
	ix    *Index
	light memfile.Entry // Meta's entry: an indexed entry without its content, made again at each call
	tags  []string      // its tags' backing array, reused
	bad   bool          // the metadata did not check out
}

func (s *entries) Len() int { return s.ix.Len() }

func (s *entries) Meta(i int) *memfile.Entry {
	ix := s.ix
	if i >= ix.docCount() {
		return &ix.tail[i-ix.docCount()]
	}
	m, tags, ok := ix.metaInto(i, s.tags[:0])
	s.tags = tags
	s.bad = s.bad || !ok
	s.light = memfile.Entry{ID: m.id, Type: m.typ, Title: m.title, Date: m.date, Tags: m.tags, Line: ix.word(i, 2)}
	for f, v := range m.fields {
		if v != "" {
			s.light.SetField(metaFields[f], v)
		}
	}
	return &s.light
}

func (s *entries) ContentLen(i int) int { return int(s.ix.Lens(i)[3]) }

func (s *entries) Entry(i int) (*memfile.Entry, bool) {
	if s.bad {
		return nil, false
	}
	return s.ix.Entry(i)
}

func (s *entries) Rank(cands []int, query string, opts recall.Options) ([]recall.Hit, bool) {
	if s.bad {
		return nil, false
	}
	if len(cands) == 0 {
		return nil, true
	}
	if len(cands) == s.ix.Len() && cands[0] == 0 && cands[len(cands)-1] == len(cands)-1 {
		// Every entry (cands ascends): ranked as a search of all, whose
		// hits' places in cands are their entries.
		return recall.SearchIndexed(s.ix, nil, query, opts)
	}
	hits, ok := recall.SearchIndexed(s.ix, cands, query, opts)
	for k := range hits {
		p, found := slices.BinarySearch(cands, hits[k].Index)
		if !found {
			return nil, false
		}
		hits[k].Index = p
	}
	return hits, ok
}
