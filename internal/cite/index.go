package cite

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/memsync/memsync/internal/fsutil"
)

// maxIndex bounds the git index read (a hostile or huge one is not read).
const maxIndex = 256 << 20

// Index is what check and automatic citation need of a worktree's git
// index: its tracked paths, each with the blob ID and the size and time of
// change git recorded, so a file git saw unchanged is known by its blob ID
// without being read.
type Index struct {
	entries []indexEntry // sorted by path, as git keeps them
	mtime   time.Time    // of the index file: a file changed in the same tick is not trusted
}

type indexEntry struct {
	path  string
	blob  [20]byte
	size  uint32
	mtime int64 // unix nanoseconds
}

var errIndex = errors.New("git index: not a version 2, 3 or 4 index")

// ReadIndex reads the index file at path (a worktree's <git dir>/index).
// A missing index is an empty one.
func ReadIndex(path string) (*Index, error) {
	ix := &Index{}
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return ix, nil
	}
	if err != nil {
		return nil, err
	}
	ix.mtime = fi.ModTime()
	b, err := fsutil.ReadFile(path, maxIndex)
	if err != nil {
		return nil, err
	}
	if err := ix.parse(b); err != nil {
		return nil, err
	}
	return ix, nil
}

// parse reads the entries of an index (git's index-format.txt); the
// extensions and the checksum after them are not needed.
func (ix *Index) parse(b []byte) error {
	if len(b) < 12 || string(b[:4]) != "DIRC" {
		return errIndex
	}
	version := binary.BigEndian.Uint32(b[4:])
	if version < 2 || version > 4 {
		return errIndex
	}
	n := binary.BigEndian.Uint32(b[8:])
	p := b[12:]
	names := string(b) // one copy: the paths of version 2 and 3 are slices of it
	var prev []byte
	ix.entries = make([]indexEntry, 0, min(n, uint32(len(b)/62)))
	for i := uint32(0); i < n; i++ {
		const fixed = 62 // stat data, blob ID and flags
		if len(p) < fixed {
			return errIndex
		}
		var e indexEntry
		e.mtime = int64(binary.BigEndian.Uint32(p[8:]))*1e9 + int64(binary.BigEndian.Uint32(p[12:]))
		mode := binary.BigEndian.Uint32(p[24:])
		e.size = binary.BigEndian.Uint32(p[36:])
		copy(e.blob[:], p[40:60])
		flags := binary.BigEndian.Uint16(p[60:])
		q := p[fixed:]
		if flags&0x4000 != 0 && version >= 3 { // extended flags
			if len(q) < 2 {
				return errIndex
			}
			q = q[2:]
		}
		var name []byte
		var path string
		if version == 4 {
			strip, k := varint(q)
			if k == 0 || strip > uint64(len(prev)) {
				return errIndex
			}
			q = q[k:]
			end := bytes.IndexByte(q, 0)
			if end < 0 {
				return errIndex
			}
			keep := len(prev) - int(strip)
			name = make([]byte, 0, keep+end)
			name = append(append(name, prev[:keep]...), q[:end]...)
			path = string(name)
			p = q[end+1:]
		} else {
			end := bytes.IndexByte(q, 0)
			if end < 0 {
				return errIndex
			}
			name = q[:end]
			at := len(b) - len(q) // where the name starts in b
			path = names[at : at+end]
			size := len(p) - len(q) + end // the entry up to its name's end
			pad := 8 - size%8             // 1 to 8 NULs
			if size+pad > len(p) {
				return errIndex
			}
			p = p[size+pad:]
		}
		prev = name
		stage := (flags >> 12) & 3
		if stage > 1 || mode&0o170000 == 0o040000 { // a conflict's other sides; a sparse index's folder
			continue
		}
		e.path = path
		ix.entries = append(ix.entries, e)
	}
	return nil
}

// varint reads the offset encoding of index version 4.
func varint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v := uint64(c & 127)
	k := 1
	for c&128 != 0 {
		if k >= len(b) || k > 9 {
			return 0, 0
		}
		c = b[k]
		k++
		v = ((v + 1) << 7) | uint64(c&127)
	}
	return v, k
}

// Tracked tells whether path (slash-separated, relative to the top) is in
// the index.
func (ix *Index) Tracked(path string) bool {
	_, ok := ix.find(path)
	return ok
}

// find is the entry of path (binary search: git keeps the index sorted).
func (ix *Index) find(path string) (indexEntry, bool) {
	i, ok := slices.BinarySearchFunc(ix.entries, path, func(e indexEntry, p string) int { return strings.Compare(e.path, p) })
	if !ok {
		return indexEntry{}, false
	}
	return ix.entries[i], true
}

// Len is the number of tracked paths.
func (ix *Index) Len() int { return len(ix.entries) }

// ByBase returns the tracked paths whose last element is base.
func (ix *Index) ByBase(base string) []string {
	var out []string
	for i := range ix.entries {
		p := ix.entries[i].path
		if strings.HasSuffix(p, base) && (len(p) == len(base) || p[len(p)-len(base)-1] == '/') {
			out = append(out, p)
		}
	}
	return out
}

// Blob is the blob ID of path as the index records it, when the file fi
// describes is what git saw: same size, same time of change, changed
// before the index was written (else git itself would look again).
func (ix *Index) Blob(path string, fi os.FileInfo) (string, bool) {
	e, ok := ix.find(path)
	if !ok || int64(e.size) != fi.Size()&0xffffffff || e.mtime != fi.ModTime().UnixNano() || !fi.ModTime().Before(ix.mtime) {
		return "", false
	}
	return hex.EncodeToString(e.blob[:]), true
}
