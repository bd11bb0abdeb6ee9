package memfile

import (
	"strings"
)

// Torn tells whether the last entry of a memory file is torn: cut off by an
// append that stopped part-way (a full disk, an I/O error, a crash) in a
// version of memsync or another tool that did not cut it back. It returns
// the byte offset where the torn entry starts (the file cut there holds
// every whole entry and ends with a newline) and its line.
//
// Every writer ends an entry with a newline, so only a file that does not
// end with one can be torn, and then only when its last line is the
// unfinished end of an entry:
//
//   - the last line is "#", "##" or "###": a heading cut before its text;
//   - orch's dialect (entries "## Title" with "- Key: value" bullets): the
//     last entry holds an "- ID:" bullet, or no "- Content:" bullet.
//     memsync writes every entry whole, the newline included, so one of
//     its entries (an ID bullet) without a final newline was cut; an entry
//     without its content was cut before it.
//   - ralph's dialect (entries "### mem-…" with "> " lines, closed by a
//     "<!-- tags: … | created: … -->" line): the last entry has no whole
//     closing comment line.
//
// A file a person saved without a final newline is not torn: its last orch
// entry has its content and no ID bullet (orch writes none), its last ralph
// entry ends with its comment. A memsync entry (with its ID) saved so by
// hand is called torn: add the final newline to say it is whole.
func Torn(data []byte) (at, line int, torn bool) {
	s := view(data)
	if s == "" || strings.HasSuffix(s, "\n") {
		return 0, 0, false
	}
	lastNL := strings.LastIndexByte(s, '\n')
	last := strings.TrimSuffix(s[lastNL+1:], "\r")
	ralph := sniffDialect(data[:min(len(data), SniffBytes)]) == Ralph
	entry, section := lastLineWith(s, "### "), lastLineWith(s, "## ")
	switch {
	case last == "#" || last == "##" || last == "###":
		at = lastNL + 1
	case entry >= 0 && entry > section && (ralph || strings.HasPrefix(s[entry:], "### mem-")):
		if hasClosingComment(s[entry:]) {
			return 0, 0, false
		}
		at = entry
	case section >= 0 && !ralph:
		id, content := false, false
		for _, l := range strings.Split(s[section:], "\n") {
			key, _, ok := cutBullet(strings.TrimSuffix(l, "\r"))
			id = id || ok && key == keyID
			content = content || ok && key == keyContent
		}
		if content && !id {
			return 0, 0, false
		}
		at = section
	default:
		return 0, 0, false
	}
	return at, 1 + strings.Count(s[:at], "\n"), true
}

// lastLineWith is the offset of the last line of s that starts with
// prefix, -1 when there is none.
func lastLineWith(s, prefix string) int {
	if i := strings.LastIndex(s, "\n"+prefix); i >= 0 {
		return i + 1
	}
	if strings.HasPrefix(s, prefix) {
		return 0
	}
	return -1
}

// hasClosingComment tells whether a ralph entry (its heading line first)
// holds its whole "<!-- … -->" line.
func hasClosingComment(entry string) bool {
	_, rest, _ := strings.Cut(entry, "\n")
	for _, l := range strings.Split(rest, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if strings.HasPrefix(l, "<!--") && strings.HasSuffix(l, "-->") {
			return true
		}
	}
	return false
}
