package memfile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseSpan: in a file that parses without problems, the part from any
// entry on parses with ParseSpan into the entries Parse reads there (IDs
// derived from the text aside), each entry alone into itself, and the part
// before it into the entries before it: what a search index relies on to
// read only the entries it returns, and only what was appended after it.
func FuzzParseSpan(f *testing.F) {
	f.Add([]byte(seedExample))
	f.Add(GenerateFile(4<<10, 7))
	f.Add([]byte("## Patterns\n\n### mem-1-abcd\n> x\n<!-- tags: a | created: 2026-01-01 -->\n\n## Fixes\n\n### mem-2-abcd\n> y\n"))
	f.Add([]byte("# M\n\n## Patterns\n- Content: orch entry titled as a ralph section\n\n## B\n"))
	for _, name := range []string{"ralph-orchestrator.md", "ralph-pi-mono.md", "ralph-woocommerce.md"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, x []byte) {
		if len(x) > 1<<16 {
			return
		}
		checkSpans(t, x)
	})
}

// TestParseSpanRealFiles: ParseSpan reads every entry of the real files
// (ralph's, and a generated orch one) as Parse does.
func TestParseSpanRealFiles(t *testing.T) {
	files, _ := filepath.Glob("/work/shared/testdata/real-memories/*.md")
	local, _ := filepath.Glob("testdata/*.md")
	for _, name := range append(files, local...) {
		if strings.HasSuffix(name, "PROVENANCE.md") {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if n := checkSpans(t, data); n != len(Parse(data).Entries) {
			t.Errorf("%s: ParseSpan read %d of %d entries", name, n, len(Parse(data).Entries))
		}
	}
	if n := checkSpans(t, GenerateFile(256<<10, 3)); n < 500 {
		t.Errorf("generated file: ParseSpan read %d entries", n)
	}
}

// checkSpans checks ParseSpan on every entry of x and returns how many it read alone.
func checkSpans(t *testing.T, x []byte) (read int) {
	t.Helper()
	p := Parse(x)
	if len(p.Problems) > 0 || strings.Contains(string(x), "\r") || len(p.Entries) == 0 {
		return 0
	}
	lines := lineStarts(x)
	section := func(line int) string { // the "## " line above line, in ralph's dialect
		for l := line - 1; l >= 1; l-- {
			if s, ok := strings.CutPrefix(lineAt(x, lines, l), "## "); ok {
				return s
			}
		}
		return ""
	}
	same := func(a, b Entry) bool {
		if a.derived || b.derived {
			a.ID, b.ID = "", ""
		}
		a.ralphAt, b.ralphAt = fromRalph(a.ralphAt), fromRalph(b.ralphAt)
		return reflect.DeepEqual(a, b)
	}
	for k := range p.Entries {
		e := p.Entries[k]
		start := lines[e.Line-1]
		end := len(x)
		if k+1 < len(p.Entries) {
			end = lines[p.Entries[k+1].Line-1]
		}
		sec := ""
		if p.Dialect == Ralph {
			sec = section(e.Line)
		}
		if one, ok := ParseSpan(p.Dialect, sec, x[start:end], e.Line); ok {
			if len(one) != 1 || !same(one[0], e) {
				t.Fatalf("entry %d alone: %+v\nParse: %+v\nfile: %q", k, one, e, x)
			}
			read++
		}
		tail, ok := ParseSpan(p.Dialect, sec, x[start:], e.Line)
		if !ok {
			continue
		}
		if len(tail) != len(p.Entries)-k {
			t.Fatalf("from entry %d: %d entries, Parse %d\nfile: %q", k, len(tail), len(p.Entries)-k, x)
		}
		for i := range tail {
			if !same(tail[i], p.Entries[k+i]) {
				t.Fatalf("from entry %d, entry %d: %+v\nParse: %+v\nfile: %q", k, k+i, tail[i], p.Entries[k+i], x)
			}
		}
		if k == 0 {
			continue
		}
		// The part before: the entries before, when it parses alone without problems.
		head := Parse(x[:start])
		if len(head.Problems) == 0 && head.Dialect == p.Dialect && len(head.Entries) > 0 {
			if len(head.Entries) != k {
				t.Fatalf("before entry %d: %d entries\nfile: %q", k, len(head.Entries), x)
			}
			for i := range head.Entries {
				if !same(head.Entries[i], p.Entries[i]) {
					t.Fatalf("before entry %d, entry %d: %+v\nParse: %+v\nfile: %q", k, i, head.Entries[i], p.Entries[i], x)
				}
			}
		}
	}
	return read
}

func lineStarts(x []byte) []int {
	out := []int{0}
	for i, c := range x {
		if c == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}

func lineAt(x []byte, lines []int, l int) string {
	s := string(x[lines[l-1]:])
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// fromRalph is 1 for an entry read from ralph's dialect (ralphAt, which
// ParseSpan cannot know, aside), else 0.
func fromRalph(at int) int {
	if at != 0 {
		return 1
	}
	return 0
}
