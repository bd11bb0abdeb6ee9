package memsync

import (
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Entries, the largest JSON a command prints (list, search, show, add), are
// written by appending their JSON to a buffer that is written out as it
// fills: the very bytes json.Encoder with SetIndent("", "  ") writes,
// without its reflection, its second buffer and its re-indenting pass.
// TestEntryJSONSameBytes holds the two to the same bytes, so the shape
// stays the one Entry's field tags give.

// WriteEntriesJSON writes entries as a JSON array followed by a newline,
// the bytes a json.Encoder with SetIndent("", "  ") writes.
func WriteEntriesJSON(w io.Writer, entries []Entry) error {
	if entries == nil {
		_, err := io.WriteString(w, "null\n")
		return err
	}
	if len(entries) == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	b := make([]byte, 0, 32<<10)
	b = append(b, '[')
	for i := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonNewline(b, 1)
		b = appendEntryJSON(b, &entries[i], 1)
		if len(b) >= 24<<10 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	b = append(b, "\n]\n"...)
	_, err := w.Write(b)
	return err
}

// WriteJSON writes e followed by a newline, the bytes a json.Encoder with
// SetIndent("", "  ") writes.
func (e *Entry) WriteJSON(w io.Writer) error {
	b := appendEntryJSON(nil, e, 0)
	_, err := w.Write(append(b, '\n'))
	return err
}

// jsonObject appends the members of one JSON object at an indent depth.
type jsonObject struct {
	b     []byte
	depth int
	n     int // members so far
}

func openObject(b []byte, depth int) *jsonObject {
	return &jsonObject{b: append(b, '{'), depth: depth}
}

// key starts the member named k.
func (o *jsonObject) key(k string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = jsonNewline(o.b, o.depth+1)
	o.b = appendJSONString(o.b, k)
	o.b = append(o.b, ':', ' ')
}

func (o *jsonObject) str(k, v string) { o.key(k); o.b = appendJSONString(o.b, v) }

// strOmit is str for a field tagged omitempty.
func (o *jsonObject) strOmit(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

func (o *jsonObject) intOmit(k string, v int) {
	if v != 0 {
		o.key(k)
		o.b = strconv.AppendInt(o.b, int64(v), 10)
	}
}

// strings appends a []string member: null for nil, as encoding/json.
func (o *jsonObject) strings(k string, v []string) {
	o.key(k)
	if v == nil {
		o.b = append(o.b, "null"...)
		return
	}
	if len(v) == 0 {
		o.b = append(o.b, '[', ']')
		return
	}
	o.b = append(o.b, '[')
	for i, s := range v {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = jsonNewline(o.b, o.depth+2)
		o.b = appendJSONString(o.b, s)
	}
	o.b = jsonNewline(o.b, o.depth+1)
	o.b = append(o.b, ']')
}

// close ends the object and returns its bytes.
func (o *jsonObject) close() []byte {
	if o.n > 0 {
		o.b = jsonNewline(o.b, o.depth)
	}
	return append(o.b, '}')
}

// appendEntryJSON appends e as encoding/json writes Entry, indented
// for depth.
func appendEntryJSON(b []byte, e *Entry, depth int) []byte {
	o := openObject(b, depth)
	o.intOmit("number", e.Number)
	o.str("id", e.ID)
	o.str("title", e.Title)
	o.str("type", e.Type)
	o.strings("tags", e.Tags)
	o.str("date", e.Date)
	o.str("content", e.Content)
	if len(e.Fields) > 0 {
		o.key("fields")
		f := openObject(o.b, depth+1)
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			f.str(k, e.Fields[k])
		}
		o.b = f.close()
	}
	if p := e.Provenance; p != nil {
		o.key("provenance")
		f := openObject(o.b, depth+1)
		f.strOmit("author", p.Author)
		f.strOmit("branch", p.Branch)
		f.strOmit("worktree", p.Worktree)
		f.strOmit("commit", p.Commit)
		f.strOmit("agent", p.Agent)
		f.strOmit("session", p.Session)
		f.strOmit("edited_at", p.EditedAt)
		f.strOmit("edited_by", p.EditedBy)
		o.b = f.close()
	}
	if len(e.Citations) > 0 {
		o.key("citations")
		o.b = append(o.b, '[')
		for i, c := range e.Citations {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = jsonNewline(o.b, depth+2)
			f := openObject(o.b, depth+2)
			f.str("path", c.Path)
			f.intOmit("start", c.Start)
			f.intOmit("end", c.End)
			f.strOmit("commit", c.Commit)
			f.str("fingerprint", c.Fingerprint)
			o.b = f.close()
		}
		o.b = jsonNewline(o.b, depth+1)
		o.b = append(o.b, ']')
	}
	o.key("stale")
	o.b = strconv.AppendBool(o.b, e.Stale)
	o.strOmit("stale_reason", e.StaleReason)
	o.strOmit("supersedes", e.Supersedes)
	o.strOmit("superseded_by", e.SupersededBy)
	if e.Score != nil {
		o.key("score")
		o.b = appendJSONFloat(o.b, *e.Score)
	}
	o.strOmit("layer", e.Layer)
	if len(e.Similar) > 0 {
		o.strings("similar", e.Similar)
	}
	o.strOmit("duplicate", e.Duplicate)
	return o.close()
}

// jsonNewline starts a line indented for depth.
func jsonNewline(b []byte, depth int) []byte {
	b = append(b, '\n')
	for range depth {
		b = append(b, ' ', ' ')
	}
	return b
}

// appendJSONFloat appends f as encoding/json writes a float64 (a score is
// never NaN or infinite; they would be null).
func appendJSONFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 as e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const jsonHex = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes strings: with
// <, > and & escaped for HTML, invalid UTF-8 as U+FFFD, U+2028 and U+2029
// escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', jsonHex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
