package memfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every cut inside an entry memsync appends, in either dialect, is torn at
// the entry's start, unless it falls on a line end (the file then ends with
// a newline) or leaves a ralph entry whole but for its final newline.
func TestTornEveryCut(t *testing.T) {
	for _, c := range []struct {
		name, base string
		d          Dialect
	}{
		{"orch", "# Memories\n\n## Pattern: first\n- Tags: a\n- Date: 2026-01-02\n- ID: aaaaaaaaaaaa\n- Content: one\n", Orch},
		{"ralph", "# Memories\n\n## Patterns\n\n### mem-1767225600-a1b2\n> one\n<!-- tags: a | created: 2026-01-02 -->\n", Ralph},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := Entry{ID: "bbbbbbbbbbbb", Type: "pattern", Title: "second", Tags: []string{"x", "y"}, Date: "2026-01-03",
				Content: "two lines\n  ## indented\nand: more"}
			if c.d == Ralph {
				e.ToRalph("mem-1767225601-c3d4")
			}
			entry := "\n" + RenderEntry(&e, c.d)
			full := c.base + entry
			if f := Parse([]byte(full)); len(f.Entries) != 2 || len(f.Problems) > 0 {
				t.Fatalf("the whole file parses as %d entries, problems %v", len(f.Entries), f.Problems)
			}
			start := len(c.base) + 1 // the heading
			for cut := len(c.base); cut <= len(full); cut++ {
				at, line, torn := Torn([]byte(full[:cut]))
				whole := cut > 0 && full[cut-1] == '\n' || cut == len(full)-1 && c.d == Ralph
				if whole {
					if torn {
						t.Errorf("cut at %d (%q): torn at %d, want whole", cut, full[max(0, cut-20):cut], at)
					}
					continue
				}
				if !torn || at != start || line != strings.Count(full[:start], "\n")+1 {
					t.Errorf("cut at %d (%q): torn=%v at %d line %d, want torn at %d", cut, full[max(0, cut-20):cut], torn, at, line, start)
				}
				if f := Parse([]byte(full[:at])); torn && len(f.Entries) != 1 {
					t.Errorf("cut back to %d, the file holds %d entries", at, len(f.Entries))
				}
			}
		})
	}
}

// Files a person or another tool wrote without a final newline are not torn.
func TestTornNotHandWritten(t *testing.T) {
	for name, s := range map[string]string{
		"empty":                   "",
		"header only":             "# Memories",
		"orch entry":              "# Memories\n\n## Pattern: Error Handling\n- Tags: pattern\n- Date: 2026-01-26\n- Content: Always use try-catch blocks",
		"orch multi-line content": "## a\n- Content: one\n  two\n  three",
		"orch bullet after":       "## a\n- Content: one\n- Source: a person",
		"orch crlf":               "# Memories\r\n\r\n## a\r\n- Tags: x\r\n- Content: one",
		"ralph entry":             "# Memories\n\n## Patterns\n\n### mem-1767225600-a1b2\n> one\n<!-- tags: a | created: 2026-01-02 -->",
		"ralph section after":     "# Memories\n\n## Patterns\n\n### mem-1767225600-a1b2\n> one\n<!-- tags: a | created: 2026-01-02 -->\n\n## Fixes",
		"ralph crlf":              "# Memories\r\n\r\n## Patterns\r\n\r\n### mem-1767225600-a1b2\r\n> one\r\n<!-- tags: a | created: 2026-01-02 -->",
		"whole with newline":      "## a\n- ID: aaaaaaaaaaaa\n",
	} {
		if at, _, torn := Torn([]byte(s)); torn {
			t.Errorf("%s: called torn at %d", name, at)
		}
	}
	// Real files of ralph's, without their final newline.
	files, _ := filepath.Glob(filepath.Join("testdata", "*.md"))
	for _, p := range files {
		if strings.HasSuffix(p, "PROVENANCE.md") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{string(b), strings.TrimRight(string(b), "\n")} {
			if at, _, torn := Torn([]byte(s)); torn {
				t.Errorf("%s: called torn at %d", p, at)
			}
		}
	}
}

// Torn files that are no cut of an append: a memsync entry (an ID) saved
// without its final newline, an entry without its content, a cut heading.
func TestTornShapes(t *testing.T) {
	for name, c := range map[string]struct {
		s  string
		at int
	}{
		"memsync entry without newline":  {"## a\n- Content: x\n\n## b\n- ID: bbbbbbbbbbbb\n- Content: y", 19},
		"no content yet":                 {"## a\n- Content: x\n\n## b\n- Tags: t", 19},
		"cut heading":                    {"## a\n- Content: x\n\n##", 19},
		"ralph cut comment":              {"## Patterns\n\n### mem-1-a\n> x\n<!-- tags: a | created: 2026", 13},
		"ralph appended to an orch file": {"## a\n- Content: x\n\n## Context\n\n### mem-1-a\n> x", 31},
	} {
		at, _, torn := Torn([]byte(c.s))
		if !torn || at != c.at {
			t.Errorf("%s: torn=%v at %d, want torn at %d", name, torn, at, c.at)
		}
	}
}
