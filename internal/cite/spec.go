// Package cite ties memory entries to the code they are about. A citation
// names a file of the work tree, optionally a range of its lines, the
// commit HEAD was at when it was made, and a fingerprint of the cited lines
// (of the whole file when no lines are given). Check follows cited lines
// that only moved (lines inserted or removed above them, a file renamed with
// git) and reports the others as stale, with the reason; it reads only the
// cited files and caches its findings by blob ID.
//
// The package does the parsing (a person's PATH[:LINE[-LINE]], the stored
// "- Cites:" bullet), the fingerprints, the search for moved lines, the
// git index reader and the cache; the root package decides when to cite
// and check.
package cite

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrSpec is wrapped by every error of ParseSpec and Parse.
var ErrSpec = errors.New("bad citation")

// Citation is one cited place.
type Citation struct {
	Path   string // slash-separated, relative to the work tree's top
	Start  int    // first cited line, 1-based; 0 cites the whole file
	End    int    // last cited line (Start when one line is cited)
	Commit string // the commit HEAD was at when the citation was made ("" unknown)
	Sum    string // fingerprint of the cited lines (Sum)
}

// Lines tells whether the citation names lines rather than the whole file.
func (c Citation) Lines() bool { return c.Start > 0 }

// Where is the citation as a person reads it: "db/pool.go lines 10-12",
// "db/pool.go line 4", "db/pool.go".
func (c Citation) Where() string { return c.format("%s line %d", "%s lines %d-%d") }

// Spec is the citation as a person writes it: PATH[:LINE[-LINE]].
func (c Citation) Spec() string { return c.format("%s:%d", "%s:%d-%d") }

// format is the path alone, or with the line (one) or the range (many).
func (c Citation) format(one, many string) string {
	switch {
	case !c.Lines():
		return c.Path
	case c.Start == c.End:
		return fmt.Sprintf(one, c.Path, c.Start)
	}
	return fmt.Sprintf(many, c.Path, c.Start, c.End)
}

// ShortCommit is the commit's first 7 characters.
func (c Citation) ShortCommit() string {
	if len(c.Commit) > 7 {
		return c.Commit[:7]
	}
	return c.Commit
}

// maxLine bounds a line number a citation may name.
const maxLine = 1 << 24

// ParseSpec reads a citation as a person writes it, PATH[:LINE[-LINE]]:
// the path as given (not yet resolved against any folder) and the lines (0,
// 0 for none). A path that itself ends in ":N" is written with a trailing
// ":" ("odd:3:" is the file "odd:3").
func ParseSpec(spec string) (path string, start, end int, err error) {
	if strings.ContainsAny(spec, "\x00\n\r") {
		return "", 0, 0, fmt.Errorf("%w %q: a path is one line of text", ErrSpec, spec)
	}
	path = spec
	if p, ok := strings.CutSuffix(spec, ":"); ok {
		path = p
	} else if i := strings.LastIndexByte(spec, ':'); i >= 0 && lineSpec(spec[i+1:]) {
		path = spec[:i]
		if start, end, err = parseLines(spec[i+1:]); err != nil {
			return "", 0, 0, fmt.Errorf("%w %q: %w", ErrSpec, spec, err)
		}
	}
	if path == "" {
		return "", 0, 0, fmt.Errorf("%w %q: no path", ErrSpec, spec)
	}
	return path, start, end, nil
}

// lineSpec tells whether s looks like LINE or LINE-LINE (digits and one dash).
func lineSpec(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

func parseLines(s string) (start, end int, err error) {
	a, b, dash := strings.Cut(s, "-")
	if start, err = lineNumber(a); err != nil {
		return 0, 0, err
	}
	end = start
	if dash {
		if end, err = lineNumber(b); err != nil {
			return 0, 0, err
		}
	}
	if end < start {
		return 0, 0, fmt.Errorf("the range %d-%d ends before it starts", start, end)
	}
	return start, end, nil
}

func lineNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxLine || s[0] == '+' {
		return 0, fmt.Errorf("%q is not a line number (1 or more)", s)
	}
	return n, nil
}

// Format is the value of the bullet an entry keeps its citations in
// (memfile.CitesField), all on one line (Parse reads it back):
// "backend/db/pool.go:10-12 @<commit> #<fingerprint>; README.md #<fingerprint>".
func Format(cs []Citation) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		s := escape(c.Path)
		if c.Lines() {
			s += fmt.Sprintf(":%d-%d", c.Start, c.End)
		}
		if c.Commit != "" {
			s += " @" + c.Commit
		}
		parts[i] = s + " #" + c.Sum
	}
	return strings.Join(parts, "; ")
}

// Parse reads a bullet's value (Format). A citation it cannot read is an
// error; the others are returned all the same.
func Parse(v string) ([]Citation, error) {
	var out []Citation
	var errs []error
	for part := range strings.SplitSeq(v, ";") {
		part = strings.Trim(part, " ")
		if part == "" {
			continue
		}
		c, err := parseOne(part)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

// Unread is a citation of a bullet's value that Parse cannot read.
type Unread struct {
	Text string // the citation as written
	Err  error  // why it cannot be read (wraps ErrSpec)
}

// Unreadable are the citations of a bullet's value (Format) that Parse
// leaves out: what a hand or another tool wrote wrong.
func Unreadable(v string) []Unread {
	var out []Unread
	for part := range strings.SplitSeq(v, ";") {
		if part = strings.Trim(part, " "); part != "" {
			if _, err := parseOne(part); err != nil {
				out = append(out, Unread{Text: part, Err: err})
			}
		}
	}
	return out
}

func parseOne(s string) (Citation, error) {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' }) // a path escapes ASCII spaces only
	var c Citation
	head := f[0]
	if i := strings.LastIndexByte(head, ':'); i >= 0 {
		var err error
		if c.Start, c.End, err = parseLines(head[i+1:]); err != nil {
			return Citation{}, fmt.Errorf("%w %q: %w", ErrSpec, s, err)
		}
		head = head[:i]
	}
	c.Path = unescape(head)
	for _, t := range f[1:] {
		switch {
		case strings.HasPrefix(t, "@") && hexText(t[1:]):
			c.Commit = t[1:]
		case strings.HasPrefix(t, "#") && hexText(t[1:]):
			c.Sum = t[1:]
		default:
			return Citation{}, fmt.Errorf("%w %q: %q is neither @COMMIT nor #FINGERPRINT", ErrSpec, s, t)
		}
	}
	if c.Path == "" || c.Sum == "" {
		return Citation{}, fmt.Errorf("%w %q: a citation needs a path and a #fingerprint", ErrSpec, s)
	}
	return c, nil
}

func hexText(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// escape writes a path so that it is one token of the bullet: '%', the
// separators (space, ';', ':', '@', '#') and control bytes as %XX.
func escape(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c <= ' ' || c == 0x7f || strings.IndexByte("%;:@#,|", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func unescape(p string) string {
	if !strings.Contains(p, "%") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '%' && i+2 < len(p) {
			if n, err := strconv.ParseUint(p[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
