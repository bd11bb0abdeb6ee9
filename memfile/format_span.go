package memfile

import "strings"

// ParseSpan parses span, a part of a memory file of dialect d that starts
// at an entry's heading or at the line ends before it, into the entries
// Parse reads there in the whole file: line is the number of span's first
// line in the file, and section, in ralph's dialect, the "## " heading of
// the section span starts in. It is for a caller that keeps where entries
// lie in a file Parse read without problems (a search index), to read one
// entry, or the entries appended after the part it knows, without parsing
// the rest.
//
// It reports false when span alone cannot tell: it holds "\r", damage or
// a duplicate ID, it reads as another dialect, or it does not start at an
// entry. An entry's ID that is derived from its text (DerivedID) is the
// one Parse gives the first entry with that text. The caller checks that
// the IDs are not also those of other entries of the file.
func ParseSpan(d Dialect, section string, span []byte, line int) ([]Entry, bool) {
	s := string(span)
	if strings.Contains(s, "\r") {
		return nil, false
	}
	body := strings.TrimLeft(s, "\n")
	line += len(s) - len(body)
	var f *File
	switch {
	case d == Orch && strings.HasPrefix(body, "## "):
		// An entry with a bullet first settles the dialect as the rest of
		// the file does (an entry titled as a ralph section alone would
		// read as ralph's); it is dropped below.
		f = parse(orchLead + body)
		if len(f.Entries) == 0 {
			return nil, false
		}
		f.Entries = f.Entries[1:]
		line -= 1 + strings.Count(orchLead, "\n")
	case d == Ralph && (strings.HasPrefix(body, "### ") || strings.HasPrefix(body, "## ")):
		f = parse("## " + section + "\n" + body)
		line -= 2
	default:
		return nil, false
	}
	if f.Dialect != d || f.CRLF || len(f.Problems) > 0 || f.Preamble != "" || len(f.sections) > 0 && d == Orch {
		return nil, false
	}
	for i := range f.Entries {
		f.Entries[i].Line += line
	}
	return f.Entries, true
}

// orchLead is the entry ParseSpan puts before an orch span.
const orchLead = "## \n- Content: span\n"
