package recall

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens splits text into search terms (lowercased, stemmed), used by Search and by tests.
//
// A word is a run of letters, digits and marks, with '_' and '-' allowed
// inside it. Each word yields itself and, when it is an identifier, its parts:
// "max_conns" gives max_conns, max, conns; "useFeatureFlag" gives
// usefeatureflag, use, feature, flag; "HTTPServer" gives httpserver, http,
// server. Han, Hiragana and Katakana, written without spaces, yield every
// character and every pair of neighbouring characters. Symbols such as emoji
// are one term each. Everything else separates terms. Each term is then
// lowercased and stemmed (see stemLen), so "caching" and "cached" both give
// "cach".
//
// Every term is a prefix of the lowercased text it came from, so a text that
// does not contain a term as a case-insensitive substring cannot yield it;
// Search relies on that to skip most documents without tokenizing them.
func Tokens(s string) []string {
	var out []string
	var t tokenizer
	t.run(s, func(tok []byte) { out = append(out, string(tok)) })
	return out
}

// tokenizer turns text into terms, reusing one buffer so that Search can
// tokenize documents without allocating.
type tokenizer struct {
	buf []byte
}

// run calls emit with every term of s. The slice is only valid during the call.
func (t *tokenizer) run(s string, emit func([]byte)) {
	for i := 0; i < len(s); {
		r, n := decodeRune(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			i++ // invalid UTF-8 separates terms
		case isCJK(r):
			j := i
			for j < len(s) {
				r, n := decodeRune(s[j:])
				if !isCJK(r) {
					break
				}
				next := j + n
				t.emitRaw(s[j:next], emit) // the character
				if next < len(s) {
					if r2, n2 := decodeRune(s[next:]); isCJK(r2) {
						t.emitRaw(s[j:next+n2], emit) // and the pair starting with it
					}
				}
				j = next
			}
			i = j
		case isWordRune(r):
			j := i
			for j < len(s) {
				r, n := decodeRune(s[j:])
				if !isWordRune(r) && !isConnector(r) {
					break
				}
				j += n
			}
			w := strings.TrimRight(s[i:j], "_-")
			t.word(w, emit)
			i += len(w)
		case isSymbol(r):
			// A symbol with case ("Ⓚ") matches either case, as words do.
			t.buf = utf8.AppendRune(t.buf[:0], unicode.ToLower(r))
			emit(t.buf)
			i += n
		default:
			i += n
		}
	}
}

// word emits the terms of one word (see Tokens). w starts and ends with a
// word rune.
func (t *tokenizer) word(w string, emit func([]byte)) {
	t.emitLower(w, emit)
	hasConn := strings.ContainsAny(w, "_-")
	for start, i := 0, 0; i <= len(w); i++ {
		if i < len(w) && !isConnector(rune(w[i])) {
			continue
		}
		part := w[start:i]
		start = i + 1
		if part == "" {
			continue
		}
		if hasConn {
			t.emitLower(part, emit)
		}
		if camelEnd(part) < len(part) {
			for p := part; p != ""; {
				k := camelEnd(p)
				t.emitLower(p[:k], emit)
				p = p[k:]
			}
		}
	}
}

// emitLower lowercases s rune by rune, stems it and emits it.
func (t *tokenizer) emitLower(s string, emit func([]byte)) {
	b := t.buf[:0]
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, unicode.ToLower(r))
		i += n
	}
	t.buf = b
	emit(b[:stemLen(b)])
}

// emitRaw emits s as it is (for characters without case).
func (t *tokenizer) emitRaw(s string, emit func([]byte)) {
	t.buf = append(t.buf[:0], s...)
	emit(t.buf)
}

// camelEnd returns the length of the first camel-case piece of s:
// "useFeature" -> 3 ("use"), "HTTPServer" -> 4 ("HTTP"), "v2Api" -> 2.
// It returns len(s) when s is one piece.
func camelEnd(s string) int {
	var prev rune = -1
	for i := 0; i < len(s); {
		r, n := decodeRune(s[i:])
		if prev >= 0 && unicode.IsUpper(r) {
			if unicode.IsLower(prev) || unicode.IsDigit(prev) {
				return i
			}
			if unicode.IsUpper(prev) && i+n < len(s) {
				if next, _ := decodeRune(s[i+n:]); unicode.IsLower(next) {
					return i
				}
			}
		}
		prev = r
		i += n
	}
	return len(s)
}

func decodeRune(s string) (rune, int) {
	if s[0] < utf8.RuneSelf {
		return rune(s[0]), 1
	}
	return utf8.DecodeRuneInString(s)
}

// isSymbol reports whether r is a symbol that is a term on its own, such as an emoji.
func isSymbol(r rune) bool { return r >= utf8.RuneSelf && unicode.Is(unicode.So, r) }

func isConnector(r rune) bool { return r == '_' || r == '-' }

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) && !isCJK(r)
}

// isCJK reports whether r belongs to a script written without spaces
// between words (Chinese and Japanese).
func isCJK(r rune) bool {
	return r >= 0x2E80 && (unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 0x30FC) // ー
}

// stemLen returns the length of the stem of the lowercased term w. The stem
// is always a prefix of w: the stemmer only strips endings, so that
// inflections meet on a common prefix: cache, caches, cached, caching ->
// "cach"; retry, retries, retried, retrying -> "retr"; connection,
// connections -> "connect"; stop, stopped -> "stop"; class, classes ->
// "clas"; conn, conns -> "con". It strips, in order:
//  1. a plural "-ies", "-ied", or "-s" (not "-ss");
//  2. one of "-ing", "-ed" (not "-eed"), "-ion" after t or s;
//  3. a final "-e", or a final "-y" after a consonant;
//  4. one letter of a final doubled consonant, from four letters on.
//
// A step is skipped when it would leave fewer than two bytes or no vowel.
func stemLen(w []byte) int {
	n := len(w)
	ok := func(m int) bool { return m >= 2 && hasVowel(w[:m]) }
	switch {
	case hasSuffix(w, n, "ies") && ok(n-3), hasSuffix(w, n, "ied") && ok(n-3):
		n -= 3
	case hasSuffix(w, n, "s") && !hasSuffix(w, n, "ss") && ok(n-1):
		n--
	}
	switch {
	case hasSuffix(w, n, "ing") && ok(n-3):
		n -= 3
	case hasSuffix(w, n, "ed") && !hasSuffix(w, n, "eed") && ok(n-2):
		n -= 2
	case (hasSuffix(w, n, "tion") || hasSuffix(w, n, "sion")) && ok(n-3):
		n -= 3
	}
	switch {
	case hasSuffix(w, n, "e") && ok(n-1):
		n--
	case hasSuffix(w, n, "y") && n >= 2 && isConsonant(w[n-2]) && ok(n-1):
		n--
	}
	if n >= 4 && w[n-1] == w[n-2] && isConsonant(w[n-1]) {
		n--
	}
	return n
}

func hasSuffix(w []byte, n int, suf string) bool {
	return n >= len(suf) && string(w[n-len(suf):n]) == suf
}

func hasVowel(w []byte) bool {
	for _, c := range w {
		switch c {
		case 'a', 'e', 'i', 'o', 'u', 'y':
			return true
		}
	}
	return false
}

func isConsonant(c byte) bool {
	return 'a' <= c && c <= 'z' && !strings.ContainsRune("aeiou", rune(c))
}
