// Package termsafe shows text from memory files, snapshots and remotes on a
// terminal as text: every character a terminal (or a bidi-aware viewer)
// would act on instead of printing is written as a visible escape.
//
// The one form: a character below U+0100 (C0 controls, DEL, C1 controls)
// and a byte that is not valid UTF-8 are written "\xHH" (ESC is "\x1b");
// the bidi embeddings, overrides and isolates (U+202A–U+202E,
// U+2066–U+2069), the marks U+200E, U+200F and U+061C, and the line and
// paragraph separators U+2028 and U+2029 are written "\uHHHH". Nothing else
// changes, so text without such characters is returned as it is.
package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Unsafe tells a character that Line escapes: a control character (C0, DEL,
// C1), a bidi control, or a Unicode line or paragraph separator.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Line is s with every unsafe character escaped, tabs and newlines too: for
// a value shown on one line (a title, a tag, a commit subject, a trailer).
func Line(s string) string { return escape(s, false) }

// Text is s with every unsafe character escaped but tabs and newlines: for
// text of several lines (an entry's content, a diff).
func Text(s string) string { return escape(s, true) }

// Clean reports whether s has nothing Text would escape.
func Clean(s string) bool { return clean(s, true) }

func clean(s string, keep bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || Unsafe(r) && !kept(r, keep) {
			return false
		}
		i += n
	}
	return true
}

func escape(s string, keep bool) string {
	if clean(s, keep) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case kept(r, keep):
			b.WriteRune(r)
		case r < 0x100 && Unsafe(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case Unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// kept tells a tab or newline that Text keeps (keep).
func kept(r rune, keep bool) bool { return keep && (r == '\n' || r == '\t') }
