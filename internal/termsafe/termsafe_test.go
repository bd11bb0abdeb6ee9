package termsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestForms(t *testing.T) {
	for _, c := range []struct{ in, line, text string }{
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`, `\x1b]0;pwned\x07title`},
		{"a\tb\nc\r\n", `a\x09b\x0ac\x0d\x0a`, "a\tb\nc\\x0d\n"},
		{"del\x7f c1\u009b[2J", `del\x7f c1\x9b[2J`, `del\x7f c1\x9b[2J`},
		{"bad \xff\x9b utf8", `bad \xff\x9b utf8`, `bad \xff\x9b utf8`},
		{"evil\u202egnp.exe \u2066x\u2069 \u200f", `evil\u202egnp.exe \u2066x\u2069 \u200f`, `evil\u202egnp.exe \u2066x\u2069 \u200f`},
		{"line\u2028sep\u2029para", `line\u2028sep\u2029para`, `line\u2028sep\u2029para`},
	} {
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
	}
}

// checkSafe fails when out holds anything a terminal would act on.
func checkSafe(t *testing.T, in, out string, keep bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%q -> %q: not valid UTF-8", in, out)
	}
	for _, r := range out {
		if Unsafe(r) && !kept(r, keep) {
			t.Fatalf("%q -> %q: holds %U", in, out, r)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "ok", "\x1b[31mred\x1b[0m", "\u202e", "\xff\xfe", "a\nb\tc\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkSafe(t, s, Line(s), false)
		checkSafe(t, s, Text(s), true)
		if Clean(s) != (Text(s) == s) {
			t.Fatalf("Clean(%q) = %v but Text changes it to %q", s, Clean(s), Text(s))
		}
		if strings.Count(Text(s), "\n") != strings.Count(s, "\n") {
			t.Fatalf("Text(%q) changed the line count", s)
		}
	})
}
