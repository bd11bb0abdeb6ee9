package memfile

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode"
	"unicode/utf8"
)

// ContentHash is the key dedup compares: the content with whitespace runs
// folded to one space and letters folded to lower case, hashed.
//
// It is the hash of strings.ToLower(strings.Join(strings.Fields(content),
// " ")), computed in one pass: whitespace is unicode.IsSpace, a letter is
// lowered with unicode.ToLower, and a byte that is not UTF-8 hashes as
// U+FFFD, as strings.ToLower writes it. The hashes are kept in the state
// dir, so this must never change.
func ContentHash(content string) string {
	var stack [512]byte
	folded := stack[:0]
	if len(content) > len(stack) {
		folded = make([]byte, 0, len(content)+len(content)/8)
	}
	space := false
	for _, r := range content {
		if r < utf8.RuneSelf {
			c := byte(r)
			if c == ' ' || c-'\t' <= '\r'-'\t' { // \t \n \v \f \r and space
				space = len(folded) > 0
				continue
			}
			if space {
				folded, space = append(folded, ' '), false
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			folded = append(folded, c)
			continue
		}
		if unicode.IsSpace(r) {
			space = len(folded) > 0
			continue
		}
		if space {
			folded, space = append(folded, ' '), false
		}
		// Invalid UTF-8 decodes as U+FFFD, which lowers to itself.
		folded = utf8.AppendRune(folded, unicode.ToLower(r))
	}
	sum := sha256.Sum256(folded)
	return hex.EncodeToString(sum[:8])
}

// Visible tells whether an entry is in the view of a session: without a
// session every entry is; with one, the session's entries and those saved
// without a session. The duplicate rule (Dups) follows it.
func Visible(e *Entry, session string) bool {
	got := e.Field("Session")
	return session == "" || got == "" || got == session
}

// Dups holds the duplicate rule, the one every path that adds entries
// follows (Store.Add, Store.Import, the fold of a worktree's copy and the
// merge of two clones' memories): two entries say one fact when their
// content is the same as ContentHash compares it (whitespace and case
// folded) and each is in the other's session view (Visible: an entry saved
// without a session is in every view; two sessions' entries are apart).
// IDs play no part. The zero Dups is empty and ready to use.
type Dups struct {
	byHash map[string][]*Entry
}

// Add makes e one of the entries Find looks through; e must not change
// while d is in use.
func (d *Dups) Add(e *Entry) {
	if d.byHash == nil {
		d.byHash = map[string][]*Entry{}
	}
	h := ContentHash(e.Content)
	d.byHash[h] = append(d.byHash[h], e)
}

// Find returns the first entry added to d that says the same fact as e, or
// nil.
func (d *Dups) Find(e *Entry) *Entry {
	session := e.Field("Session")
	for _, c := range d.byHash[ContentHash(e.Content)] {
		if Visible(c, session) {
			return c
		}
	}
	return nil
}
