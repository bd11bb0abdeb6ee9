package recall

import (
	"bytes"
	"encoding/binary"
	"sort"
	"unicode"
	"unicode/utf8"
)

// docText is the text of a doc prepared for case-insensitive search of
// query terms: its fields lowercased rune by rune (as Tokens lowercases),
// one after the other, with '\n' between them. '\n' separates terms, so a
// term found in low lies within one field. The buffers are reused from doc
// to doc, so preparing and searching do not allocate.
type docText struct {
	low   []byte
	spans []span
	orig  []int // see span.orig
}

// span is one field's part of docText.low.
type span struct {
	field      int
	s          string // the field's text
	start, end int    // where its lowercase form is in low
	ascii      bool   // s is ASCII, so low[start:end] has the same offsets
	orig       int    // if not ascii, docText.orig[orig+i] is the offset in s of the rune that low[start+i] comes from
}

func (d *docText) reset() {
	d.low, d.spans, d.orig = d.low[:0], d.spans[:0], d.orig[:0]
}

// add appends the field f with text s.
func (d *docText) add(f int, s string) {
	if s == "" {
		return
	}
	if len(d.low) > 0 {
		d.low = append(d.low, '\n')
	}
	sp := span{field: f, s: s, start: len(d.low), ascii: true}
	var ok bool
	if d.low, ok = appendLowerASCII(d.low, s); !ok {
		sp.ascii, sp.orig = false, len(d.orig)
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				d.low = append(d.low, s[i]) // invalid bytes separate terms; keep them as they are
			} else {
				d.low = utf8.AppendRune(d.low, unicode.ToLower(r))
			}
			for len(d.orig)-sp.orig < len(d.low)-sp.start {
				d.orig = append(d.orig, i)
			}
			i += n
		}
	}
	sp.end = len(d.low)
	d.spans = append(d.spans, sp)
}

// find returns the first match of needle in low at or after from: the span
// it is in and its offset in the span's text. It returns p = -1 when there
// is none.
func (d *docText) find(needle *needle, from int) (sp *span, p int) {
	j := needle.index(d.low[from:])
	if j < 0 {
		return nil, -1
	}
	j += from
	for k := range d.spans {
		if sp = &d.spans[k]; j < sp.end {
			break
		}
	}
	if sp.ascii {
		return sp, j - sp.start
	}
	return sp, d.orig[sp.orig+j-sp.start]
}

// lowOffset returns the offset in low of offset p in the span's text.
func (d *docText) lowOffset(sp *span, p int) int {
	if sp.ascii {
		return sp.start + p
	}
	return sp.start + sort.SearchInts(d.orig[sp.orig:sp.orig+sp.end-sp.start], p)
}

// appendLowerASCII appends s lowercased to dst, eight bytes at a time, if s
// is ASCII. If it is not, it returns dst unchanged and false.
func appendLowerASCII(dst []byte, s string) ([]byte, bool) {
	n := len(dst)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if x&0x8080808080808080 != 0 {
			return dst[:n], false
		}
		// Per byte: the high bit of x+0x3f is set from 'A' on, that of
		// x+0x25 from 'Z'+1 on; no byte carries into the next.
		upper := (x + 0x3f3f3f3f3f3f3f3f) &^ (x + 0x2525252525252525) & 0x8080808080808080
		dst = binary.LittleEndian.AppendUint64(dst, x|upper>>2)
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return dst[:n], false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, true
}

// chunkAt returns the bounds of the chunk of s around offset p: the run of
// runes between separators (see isSeparator). Tokens never spans chunks and
// tokenizes each chunk the same alone as within s, so the terms of s that
// contain offset p are the terms of s[start:end].
func chunkAt(s string, p int) (start, end int) {
	start, end = p, p
	for start > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:start])
		if isSeparator(r, n) {
			break
		}
		start -= n
	}
	for end < len(s) {
		r, n := decodeRune(s[end:])
		if isSeparator(r, n) {
			break
		}
		end += n
	}
	return start, end
}

// midWord reports whether offset p of s is inside a word where no term
// starts: a lowercase ASCII letter or digit after an ASCII letter or digit
// ("con" in "falcon", "13" in "413"). Terms start at the start of a word,
// after '_' or '-', at an upper-case letter (camel case), or at a CJK
// character or symbol.
func midWord(s string, p int) bool {
	return p > 0 && isAlnumASCII(s[p-1]) && ('a' <= s[p] && s[p] <= 'z' || '0' <= s[p] && s[p] <= '9')
}

func isAlnumASCII(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isSeparator reports whether the rune r, n bytes long, is one that Tokens
// skips outside words: not part of a word, CJK run or symbol.
func isSeparator(r rune, n int) bool {
	if r == utf8.RuneError && n == 1 {
		return true
	}
	return !isWordRune(r) && !isConnector(r) && !isCJK(r) && !isSymbol(r)
}

// containsFold reports whether needle (lowercase) occurs in s lowercased
// rune by rune, as Search looks for it. For tests.
func containsFold(s, needle string) bool {
	if needle == "" {
		return true
	}
	var d docText
	d.add(0, s)
	_, p := d.find(newNeedle(needle), 0)
	return p >= 0
}

// needle is a query term (lowercase, without '\n') to look for in docText.
// Where bytes.Index would look for its first byte, often a common letter,
// index looks for its rarest byte by English letter frequency: fewer false
// starts, and so fewer calls, on text that is mostly English.
type needle struct {
	b    []byte
	rare int // the offset in b of its rarest byte
}

func newNeedle(term string) *needle {
	n := &needle{b: []byte(term)}
	for i := range n.b {
		if commonness[n.b[i]] < commonness[n.b[n.rare]] {
			n.rare = i
		}
	}
	return n
}

// commonness ranks bytes by how often they occur in English text: the
// letters from least to most frequent, then the space; every other byte
// ranks below them all.
var commonness = func() (c [256]uint8) {
	for i, l := range "zqjxkvbpygfwmucldrhsnioate " {
		c[l] = uint8(i + 1)
	}
	return c
}()

// index returns the offset of the first match of n in s, or -1.
func (n *needle) index(s []byte) int {
	if len(n.b) == 0 {
		return 0
	}
	c := n.b[n.rare]
	for i := n.rare; i < len(s); i++ {
		j := bytes.IndexByte(s[i:], c)
		if j < 0 {
			return -1
		}
		i += j
		start := i - n.rare
		if start+len(n.b) > len(s) {
			return -1
		}
		if bytes.Equal(s[start:start+len(n.b)], n.b) {
			return start
		}
	}
	return -1
}
