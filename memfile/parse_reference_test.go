package memfile

import (
	"runtime"
	"strings"
	"sync"

	"github.com/memsync/memsync/internal/hugepage"
)

// The parse as it was before it became one pass over the bytes (scan): the
// reference that the one-pass parse is checked against (FuzzParseOnePass).

func parseReference(s string) *File {
	s, crlf := lineEnds(s)
	f := &File{Problems: scanDamage(s), CRLF: crlf}
	if isMixed(s) {
		parseMixed(f, splitLines(s), isRalph(s))
		f.ConvertDialect() // its entries as a rewrite writes them (the Problems stay)
	} else if isRalph(s) {
		f.Dialect = Ralph
		parseRalph(f, splitLines(s))
	} else {
		parseOrchReference(f, s)
	}
	for i := range f.Entries {
		// Ralph's dialect has no title line: the title is the content's
		// first line, as ralph shows it (a "title:" tag holds another).
		if e := &f.Entries[i]; e.ralphAt != 0 && e.Title == "" {
			e.Title = TitleFrom(e.Content)
		}
	}
	f.checkDuplicateIDs()
	return f
}

// parseOrchReference reads the orch format (the reference).
func parseOrchReference(f *File, s string) {
	start := lineIndex(s, "## ")
	if start < 0 {
		start = len(s)
	}
	f.Preamble = s[:start]
	if f.Preamble != "" && !strings.HasSuffix(f.Preamble, "\n") {
		f.Preamble += "\n"
	}
	starts := make([]int, 0, strings.Count(s[start:], "\n## ")+1)
	for pos := start; pos < len(s); {
		starts = append(starts, pos)
		next := strings.Index(s[pos:], "\n## ")
		if next < 0 {
			break
		}
		pos += next + 1
	}
	block := func(k int) string {
		if k+1 < len(starts) {
			return s[starts[k]:starts[k+1]]
		}
		return s[starts[k]:]
	}
	f.Entries = hugepage.Make[Entry](len(starts))
	// Entries parse independently: a large file is parsed in chunks on all
	// cores (a 10 MB memory is read on every search).
	parse := func(lo, hi int) {
		if lo >= hi {
			return
		}
		line := 1 + strings.Count(s[:starts[lo]], "\n")
		types := map[string]string{}
		var orderBuf [8]string
		for k := lo; k < hi; k++ {
			b := block(k)
			f.Entries[k] = parseOrchEntry(b, line, orderBuf[:0], types)
			line += strings.Count(b, "\n")
		}
	}
	chunks := min(runtime.GOMAXPROCS(0), len(starts)/parallelMin+1)
	var wg sync.WaitGroup
	for c := range chunks {
		wg.Go(func() { parse(len(starts)*c/chunks, len(starts)*(c+1)/chunks) })
	}
	wg.Wait()
	// IDs derived from the text count identical entries in file order.
	occurrences := map[string]int{}
	for k := range f.Entries {
		if e := &f.Entries[k]; e.ID == "" {
			text := strings.TrimRight(block(k), "\n")
			e.ID = deriveID(text, occurrences[text])
			e.derived = true
			occurrences[text]++
		}
	}
}
