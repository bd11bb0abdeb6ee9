package cite

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// sumLen is how many hex characters of a fingerprint are kept (64 bits).
const sumLen = 16

// Text is a file's content as fingerprints see it: one hash per line,
// each line without its line ending and the spaces around it (a block that
// is only re-indented is the same block).
type Text struct {
	hashes []uint64
}

// Lines splits content into lines and hashes them.
func Lines(content []byte) *Text {
	n := bytes.Count(content, []byte{'\n'})
	if len(content) > 0 && content[len(content)-1] != '\n' {
		n++
	}
	t := &Text{hashes: make([]uint64, 0, n)}
	for len(content) > 0 {
		line := content
		if i := bytes.IndexByte(content, '\n'); i >= 0 {
			line, content = content[:i], content[i+1:]
		} else {
			content = nil
		}
		t.hashes = append(t.hashes, fnv64(bytes.TrimSpace(line)))
	}
	return t
}

// Len is the number of lines.
func (t *Text) Len() int { return len(t.hashes) }

// Sum is the fingerprint of lines start to end (1-based, inclusive); of
// the whole text when start is 0. ok is false for a range past the end.
func (t *Text) Sum(start, end int) (sum string, ok bool) {
	if start == 0 {
		return t.sum(0, len(t.hashes)), true
	}
	if start < 1 || end < start || end > len(t.hashes) {
		return "", false
	}
	return t.sum(start-1, end), true
}

// sum hashes hashes[i:j].
func (t *Text) sum(i, j int) string {
	h := sha256.New()
	var b [8]byte
	for _, x := range t.hashes[i:j] {
		binary.LittleEndian.PutUint64(b[:], x)
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))[:sumLen]
}

// maxFindWork bounds the line hashes one Find hashes (a cited file and
// the memory that cites it are input from whoever wrote them).
const maxFindWork = 1 << 24

// Find looks for the n lines whose fingerprint is sum, nearest to line
// near first (a block that moved by a few lines is found at once), then
// anywhere in the text (within maxFindWork). It returns the first line of the block, 0 when
// the text holds no such block.
func (t *Text) Find(sum string, near, n int) int {
	if n < 1 {
		return 0
	}
	at, _ := t.find(sum, near, n, maxFindWork/n) // a huge block in a huge file is not searched for long
	return at
}

// find is Find hashing at most windows windows; it returns how many it hashed.
func (t *Text) find(sum string, near, n, windows int) (at, tried int) {
	if n < 1 || n > len(t.hashes) {
		return 0, 0
	}
	last := len(t.hashes) - n + 1 // the last line a block of n lines can start at
	near = min(max(near, 1), last)
	for d := 0; (near-d >= 1 || near+d <= last) && tried < windows; d++ {
		tried += 2
		if s := near - d; s >= 1 && t.sum(s-1, s-1+n) == sum {
			return s, tried
		}
		if s := near + d; d > 0 && s <= last && t.sum(s-1, s-1+n) == sum {
			return s, tried
		}
	}
	return 0, tried
}

// fnv64 is FNV-1a, 64 bits: stable across runs and versions, as a stored
// fingerprint needs.
func fnv64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
