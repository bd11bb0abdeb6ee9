package memfile

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func sessionEntry(id, content, session string) Entry {
	e := Entry{ID: id, Title: id, Content: content}
	if session != "" {
		e.SetField("Session", session)
	}
	return e
}

// The duplicate rule: the same content with whitespace and case folded, in
// each other's session view; IDs play no part.
func TestDupsRule(t *testing.T) {
	stored := []Entry{
		sessionEntry("a", "Run  the linter\nfirst", "s1"),
		sessionEntry("b", "keep logs short", ""),
	}
	var d Dups
	for i := range stored {
		d.Add(&stored[i])
	}
	for _, c := range []struct {
		e    Entry
		want string
	}{
		{sessionEntry("x", "run the LINTER first", "s1"), "a"},
		{sessionEntry("x", "run the linter first", ""), "a"},
		{sessionEntry("x", "run the linter first", "s2"), ""},
		{sessionEntry("x", "run the linter", "s1"), ""},
		{sessionEntry("x", " Keep logs short ", "s2"), "b"},
		{sessionEntry("b", "other text", ""), ""},
	} {
		got := ""
		if f := d.Find(&c.e); f != nil {
			got = f.ID
		}
		if got != c.want {
			t.Errorf("Find(%q, session %q) = %q, want %q", c.e.Content, c.e.Field("Session"), got, c.want)
		}
	}
	var empty Dups
	if f := empty.Find(&stored[0]); f != nil {
		t.Fatalf("the zero Dups found %s", f.ID)
	}
}

// contentHashReference is ContentHash as its doc comment defines it.
func contentHashReference(content string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.Join(strings.Fields(content), " "))))
	return hex.EncodeToString(sum[:8])
}

// FuzzContentHash: the one-pass ContentHash is the definition's hash for
// any bytes (the hashes are kept in the state dir, so they must not move).
func FuzzContentHash(f *testing.F) {
	for _, s := range []string{"", " ", "Hello  World\n", "\t\v\f\rA\u0085B\u00a0C\u2028D", "ÀÉÎ İ ǅ Σ", "bad \xff\xfe utf8 \xe2\x82", "\ufffd real", strings.Repeat("Ab ", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ContentHash(s), contentHashReference(s); got != want {
			t.Fatalf("ContentHash(%q) = %s, the definition gives %s", s, got, want)
		}
	})
}

// FuzzNormalizesTo: normalizesTo(t, want) is NormalizeType(t) == want,
// for want the normal form of t, of a near string, and of t itself.
func FuzzNormalizesTo(f *testing.F) {
	for _, s := range [][2]string{{"Architecture Decision", "architecture decision"}, {"  fix_-bug ", "fix bug"}, {"Ünïcode\u00a0Type", "ünïcode type"}, {"bad\xff", "bad\ufffd"}, {"", ""}, {"a", "a "}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, s, other string) {
		for _, want := range []string{NormalizeType(s), other, s, NormalizeType(other)} {
			if got, exp := normalizesTo(s, want), NormalizeType(s) == want; got != exp {
				t.Fatalf("normalizesTo(%q, %q) = %v, NormalizeType gives %q", s, want, got, NormalizeType(s))
			}
		}
	})
}
