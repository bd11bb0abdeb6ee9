package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// The JSON editor changes one member or array element of a config file's
// text and leaves every other byte as it was: other keys, their order, the
// file's indentation and, in JSONC files (VS Code's, Gemini CLI's), its
// comments. An edit that adds a member and the edit that removes it give
// back the bytes that were there before.

// jnode is one JSON value's place in the text.
type jnode struct {
	start, end int     // the value's bytes
	kind       byte    // '{', '[' or 0 (a scalar)
	items      []jitem // an object's members or an array's elements
}

// jitem is an object member (key set) or an array element.
type jitem struct {
	start int // the key's opening quote, or the element's first byte
	key   string
	val   *jnode
}

// jparser reads JSON, and JSONC (comments, trailing commas) when jsonc.
type jparser struct {
	s     []byte
	i     int
	jsonc bool
}

// parseJSON reads the text of a config file; its top level must be an object.
func parseJSON(s []byte, jsonc bool) (*jnode, error) {
	p := &jparser{s: s, jsonc: jsonc}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.i == len(s) {
		return nil, fmt.Errorf("empty file")
	}
	if s[p.i] != '{' {
		return nil, p.errorf("the top level is not an object")
	}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.i != len(s) {
		return nil, p.errorf("text after the top-level object")
	}
	return n, nil
}

func (p *jparser) errorf(format string, a ...any) error {
	line := 1 + bytes.Count(p.s[:min(p.i, len(p.s))], []byte("\n"))
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, a...))
}

// space skips whitespace and, in JSONC, comments.
func (p *jparser) space() error {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		case c == '/' && p.i+1 < len(p.s) && (p.s[p.i+1] == '/' || p.s[p.i+1] == '*'):
			if !p.jsonc {
				return p.errorf("a comment, which this file's format does not allow")
			}
			if p.s[p.i+1] == '/' {
				for p.i < len(p.s) && p.s[p.i] != '\n' {
					p.i++
				}
				continue
			}
			end := bytes.Index(p.s[p.i+2:], []byte("*/"))
			if end < 0 {
				return p.errorf("a comment that does not end")
			}
			p.i += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

const maxDepth = 200

func (p *jparser) value(depth int) (*jnode, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested too deep")
	}
	if p.i >= len(p.s) {
		return nil, p.errorf("unexpected end of file")
	}
	n := &jnode{start: p.i}
	switch c := p.s[p.i]; c {
	case '{', '[':
		n.kind = c
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		p.i++
		for {
			if err := p.space(); err != nil {
				return nil, err
			}
			if p.i < len(p.s) && p.s[p.i] == closer {
				p.i++
				break
			}
			if len(n.items) > 0 {
				if p.i >= len(p.s) || p.s[p.i] != ',' {
					return nil, p.errorf("expected ',' or %q", closer)
				}
				p.i++
				if err := p.space(); err != nil {
					return nil, err
				}
				if p.i < len(p.s) && p.s[p.i] == closer {
					if !p.jsonc {
						return nil, p.errorf("a comma before %q", closer)
					}
					p.i++
					break
				}
			}
			it := jitem{start: p.i}
			if c == '{' {
				if p.i >= len(p.s) || p.s[p.i] != '"' {
					return nil, p.errorf("expected a key in quotes")
				}
				k, err := p.str()
				if err != nil {
					return nil, err
				}
				it.key = k
				if err := p.space(); err != nil {
					return nil, err
				}
				if p.i >= len(p.s) || p.s[p.i] != ':' {
					return nil, p.errorf("expected ':' after key %q", k)
				}
				p.i++
				if err := p.space(); err != nil {
					return nil, err
				}
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			it.val = v
			n.items = append(n.items, it)
		}
	case '"':
		if _, err := p.str(); err != nil {
			return nil, err
		}
	default:
		j := p.i
		for j < len(p.s) && strings.IndexByte("+-0123456789.eEtruefalsn", p.s[j]) >= 0 {
			j++
		}
		var v any
		if j == p.i || json.Unmarshal(p.s[p.i:j], &v) != nil {
			return nil, p.errorf("not a JSON value")
		}
		p.i = j
	}
	n.end = p.i
	return n, nil
}

// str reads a string at p.i and returns its value.
func (p *jparser) str() (string, error) {
	start := p.i
	p.i++
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '\\':
			p.i += 2
			continue
		case '\n':
			return "", p.errorf("a line break inside a string")
		case '"':
			p.i++
			var v string
			if err := json.Unmarshal(p.s[start:p.i], &v); err != nil {
				return "", p.errorf("a bad string")
			}
			return v, nil
		}
		p.i++
	}
	return "", p.errorf("a string that does not end")
}

// lookup is the member key of object n, or nil.
func (n *jnode) lookup(key string) *jnode {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i := len(n.items) - 1; i >= 0; i-- { // the last of repeated keys wins, as in JavaScript
		if n.items[i].key == key {
			return n.items[i].val
		}
	}
	return nil
}

// decode is the value of node n, or nil when it is not plain JSON (a
// comment or trailing comma inside).
func decode(s []byte, n *jnode) any {
	var v any
	if json.Unmarshal(s[n.start:n.end], &v) != nil {
		return nil
	}
	return v
}

// sameJSON tells whether the text of n holds the value v.
func sameJSON(s []byte, n *jnode, v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var want any
	_ = json.Unmarshal(b, &want)
	got := decode(s, n)
	return got != nil && reflect.DeepEqual(got, want)
}

// obj is a JSON object that keeps its keys in order when marshalled.
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(m.k)
		if err != nil {
			return nil, err
		}
		v, err := marshal(m.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escapes (a path with & stays readable).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// render is v as JSON whose lines after the first start with prefix,
// indented by unit ("" renders it on one line).
func render(v any, prefix, unit string) string {
	b, err := marshal(v)
	if err != nil {
		panic(err) // memsync's own values always marshal
	}
	if unit == "" {
		return spaced(b)
	}
	var out bytes.Buffer
	_ = json.Indent(&out, b, prefix, unit)
	return out.String()
}

// spaced is compact JSON with a space after each ':' and ',', for a file
// written on one line.
func spaced(b []byte) string {
	var out strings.Builder
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		out.WriteByte(c)
		switch {
		case in && c == '\\':
			i++
			out.WriteByte(b[i])
		case c == '"':
			in = !in
		case !in && (c == ':' || c == ','):
			out.WriteByte(' ')
		}
	}
	return out.String()
}

// lineStart is the offset of the start of the line holding offset i.
func lineStart(s []byte, i int) int { return bytes.LastIndexByte(s[:i], '\n') + 1 }

// indentAt is the whitespace that starts the line holding offset i.
func indentAt(s []byte, i int) string {
	ls := lineStart(s, i)
	j := ls
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	return string(s[ls:j])
}

// ownLine: only whitespace stands before offset i on its line.
func ownLine(s []byte, i int) bool {
	return strings.TrimLeft(string(s[lineStart(s, i):i]), " \t") == ""
}

// indentUnit is the file's indentation step: the first member's indent
// in the top-level object, else two spaces.
func indentUnit(s []byte, root *jnode) string {
	if len(root.items) > 0 && ownLine(s, root.items[0].start) {
		if u := indentAt(s, root.items[0].start); u != "" {
			return strings.TrimPrefix(u, indentAt(s, root.start))
		}
	}
	return "  "
}

// afterValue is the offset just past n's value and the comment that may
// follow it on its line, before that line's end (where a new item goes
// so the comment stays with its value).
func afterValue(s []byte, end int) int {
	j := end
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j+1 < len(s) && s[j] == '/' && s[j+1] == '/' {
		for j < len(s) && s[j] != '\n' {
			j++
		}
		return j
	}
	return end
}

// insertItem adds an item (a member "key": v, or an array element when
// key is nil) at the end of container n.
func insertItem(s []byte, root, n *jnode, key *string, v any) []byte {
	unit := indentUnit(s, root)
	head := func(indent string) string {
		u := unit
		if indent == "" {
			u = "" // one line
		}
		if key == nil {
			return render(v, indent, u)
		}
		k, _ := marshal(*key)
		return string(k) + ": " + render(v, indent, u)
	}
	if len(n.items) == 0 {
		inner := indentAt(s, n.start) + unit
		if n.end-n.start > 2 { // what is inside (spaces, a comment) stays after the item
			return splice(s, n.start+1, n.start+1, "\n"+inner+head(inner))
		}
		text := "\n" + inner + head(inner) + "\n" + indentAt(s, n.start)
		return splice(s, n.start+1, n.end-1, text)
	}
	last := n.items[len(n.items)-1]
	if !ownLine(s, last.start) { // a one-line container stays one line
		return splice(s, last.val.end, last.val.end, ", "+head(""))
	}
	indent := indentAt(s, last.start)
	// a trailing comma (JSONC) stays after the new last item
	p := &jparser{s: s, i: last.val.end, jsonc: true}
	_ = p.space()
	if p.i < len(s) && s[p.i] == ',' {
		at := afterValue(s, p.i+1)
		return splice(s, at, at, "\n"+indent+head(indent)+",")
	}
	at := afterValue(s, last.val.end)
	out := splice(s, at, at, "\n"+indent+head(indent))
	return splice(out, last.val.end, last.val.end, ",")
}

// removeItem takes item i out of container n, with its comma and, where
// it had a line of its own, that line.
func removeItem(s []byte, n *jnode, i int) []byte {
	it := n.items[i]
	end := it.val.end
	p := &jparser{s: s, i: end, jsonc: true}
	_ = p.space()
	trailing := p.i < len(s) && s[p.i] == ','
	if len(n.items) == 1 {
		inside := string(s[n.start+1 : it.start])
		if strings.TrimSpace(inside) == "" {
			stop := end
			if trailing {
				stop = p.i + 1
			}
			// the layout insertItem gives an empty container: {} again
			if after := string(s[stop : n.end-1]); strings.TrimSpace(after) == "" && strings.Contains(after, "\n") {
				return splice(s, n.start+1, n.end-1, "")
			}
		}
	}
	if i < len(n.items)-1 { // up to the next item
		next := n.items[i+1].start
		start := it.start
		if ownLine(s, start) && ownLine(s, next) && trailing {
			// from its line to the end of the line of its comma: a comment
			// line above the next item stays with that item
			start = lineStart(s, start)
			if eol := strings.IndexByte(string(s[p.i:next]), '\n'); eol >= 0 {
				next = p.i + eol + 1
			}
		}
		return splice(s, start, next, "")
	}
	// the last item: its comma goes with the one before it
	stop := end
	if trailing {
		stop = p.i + 1
	}
	start := it.start
	switch {
	case ownLine(s, start):
		start = lineStart(s, start) - 1
	case i > 0: // on one line: from the comma after the item before; a trailing comma stays
		q := &jparser{s: s, i: n.items[i-1].val.end, jsonc: true}
		_ = q.space()
		return splice(s, q.i, end, "")
	}
	out := splice(s, start, stop, "")
	if i > 0 && !trailing {
		prev := n.items[i-1].val.end
		q := &jparser{s: out, i: prev, jsonc: true}
		_ = q.space()
		if q.i < len(out) && out[q.i] == ',' {
			out = splice(out, q.i, q.i+1, "")
		}
	}
	return out
}

func splice(s []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(s)-(to-from)+len(text))
	out = append(out, s[:from]...)
	out = append(out, text...)
	return append(out, s[to:]...)
}

// setJSON makes the member at path hold v, creating the objects on the way;
// an equal value already there leaves s as it is.
func setJSON(s []byte, jsonc bool, path []string, v any) ([]byte, error) {
	root, err := parseJSON(s, jsonc)
	if err != nil {
		return nil, err
	}
	n := root
	for i, k := range path {
		next := n.lookup(k)
		if next == nil {
			var val = v
			for j := len(path) - 1; j > i; j-- {
				val = obj{{path[j], val}}
			}
			return insertItem(s, root, n, &k, val), nil
		}
		if i == len(path)-1 {
			if sameJSON(s, next, v) {
				return s, nil
			}
			unit := indentUnit(s, root)
			if !ownLine(s, next.start) && next.kind != 0 && !strings.Contains(string(s[next.start:next.end]), "\n") {
				unit = ""
			}
			return splice(s, next.start, next.end, render(v, indentAt(s, next.start), unit)), nil
		}
		if next.kind != '{' {
			return nil, fmt.Errorf("%s is not an object", strings.Join(path[:i+1], "."))
		}
		n = next
	}
	return s, nil
}

// deleteJSON removes the member at path, and then up to prune objects
// above it that it leaves empty; s stays as it is when there is none.
func deleteJSON(s []byte, jsonc bool, path []string, prune int) ([]byte, error) {
	root, err := parseJSON(s, jsonc)
	if err != nil {
		return nil, err
	}
	for len(path) > 0 {
		n := root
		for _, k := range path[:len(path)-1] {
			if n = n.lookup(k); n == nil || n.kind != '{' {
				return s, nil
			}
		}
		idx := -1
		for i, it := range n.items {
			if it.key == path[len(path)-1] {
				idx = i
			}
		}
		if idx < 0 {
			return s, nil
		}
		s = removeItem(s, n, idx)
		if len(n.items) > 1 || len(path) == 1 || prune == 0 {
			return s, nil
		}
		prune--
		if root, err = parseJSON(s, jsonc); err != nil {
			return nil, err
		}
		path = path[:len(path)-1]
	}
	return s, nil
}
