package memfile

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"
)

// shape is what Parse needs to know of a file before it reads its
// entries, gathered by scan in one pass over its lines: whether its line
// ends need work, whether it may be damaged, which dialect it is in (the
// facts isRalph and isMixed decide by), and where its "## " lines are.
type shape struct {
	lineEnds bool // a line ends in "\r" (lineEnds has work to do)
	damaged  bool // a line holds a NUL byte or invalid UTF-8, or is a conflict marker

	mem       int  // offset of the first "### mem-" line, -1
	bullet    int  // offset of the first "- " line under a "## " heading that is not one of ralph's sections (orchBullet), -1
	firstHead int  // offset of the first "## " line, -1
	headRalph bool // the first "## " line is one of ralph's sections
	// orchHead: a "## " line that is not one of ralph's sections;
	// orchIDBullet: a "- Content:" or "- ID:" bullet under one (the lines
	// up to the next "## " line, "### " lines aside); ralphEntry: a "### "
	// line ralph reads as an entry (hasRalphEntry).
	orchHead, orchIDBullet, ralphEntry bool

	heads     []int // offsets of the "## " lines
	headLines []int // their line numbers
}

// scan reads s line by line, once.
func scan(s string) *shape {
	sc := &shape{mem: -1, bullet: -1, firstHead: -1}
	sc.heads = make([]int, 0, strings.Count(s, "\n## ")+1)
	sc.headLines = make([]int, 0, cap(sc.heads))
	inEntry, underOrch := false, false
	line := 0
	for at := 0; at < len(s); {
		line++
		end := strings.IndexByte(s[at:], '\n')
		next := at + end + 1
		if end < 0 {
			end, next = len(s)-at, len(s)
		}
		l := s[at : at+end]
		if !plainText(l) {
			if strings.HasSuffix(l, "\r") {
				sc.lineEnds = true
			}
			if strings.IndexByte(l, 0) >= 0 || !utf8.ValidString(l) {
				sc.damaged = true
			}
		}
		if len(l) >= 7 && isConflictMarker(l) {
			sc.damaged = true
		}
		if len(l) >= 2 && l[0] == '#' && l[1] == '#' {
			switch {
			case strings.HasPrefix(l, "## "):
				if sc.firstHead < 0 {
					sc.firstHead, sc.headRalph = at, ralphType(l[3:]) != ""
				}
				isOrch := ralphType(l[3:]) == ""
				inEntry, underOrch = isOrch, isOrch
				sc.orchHead = sc.orchHead || isOrch
				sc.heads = append(sc.heads, at)
				sc.headLines = append(sc.headLines, line)
			case strings.HasPrefix(l, "### "):
				if sc.mem < 0 && strings.HasPrefix(l, "### mem-") {
					sc.mem = at
				}
				if id := l[4:]; !sc.ralphEntry && len(id) >= 10 && ralphIDPrefix(id) != "" {
					sc.ralphEntry = true
				}
			}
		} else if len(l) >= 2 && l[0] == '-' && l[1] == ' ' {
			if inEntry && sc.bullet < 0 {
				sc.bullet = at
			}
			if underOrch && !sc.orchIDBullet {
				if k, _, ok := cutBullet(l); ok && (k == keyContent || k == keyID) {
					sc.orchIDBullet = true
				}
			}
		}
		at = next
	}
	return sc
}

// plainText reports whether l holds only bytes that need no second look:
// no NUL, no "\r", nothing outside ASCII. It reads 8 bytes at a time.
func plainText(l string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(l); i += 8 {
		x := binary.LittleEndian.Uint64([]byte(l[i : i+8]))
		cr := x ^ (ones * '\r')
		// A byte of x is 0 or "\r", or has its high bit set.
		if (x-ones)&^x&highs != 0 || (cr-ones)&^cr&highs != 0 || x&highs != 0 {
			return false
		}
	}
	for ; i < len(l); i++ {
		if c := l[i]; c == 0 || c == '\r' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// ralph is isRalph(s) for the shape s.
func (sc *shape) ralph() bool {
	switch {
	case sc.mem >= 0 && (sc.bullet < 0 || sc.mem < sc.bullet):
		return true
	case sc.mem >= 0 || sc.bullet >= 0:
		return false
	}
	return sc.firstHead >= 0 && sc.headRalph
}

// mixed is isMixed(s) for the shape s, which reads as ralph's (ralph).
func (sc *shape) mixed(ralph bool) bool {
	if sc.mem < 0 {
		return false
	}
	if !ralph {
		return sc.orchHead && sc.ralphEntry
	}
	return sc.orchIDBullet && sc.ralphEntry
}
