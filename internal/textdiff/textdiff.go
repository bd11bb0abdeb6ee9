// Package textdiff is memsync's one line diff, computed by go-diff: what
// log, diff, conflicts and worktree doctor show.
package textdiff

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// contextLines of unchanged text are shown around each change by Lines.
const contextLines = 3

// Lines is a line diff of two texts computed by go-diff: changed lines
// prefixed "-" and "+", up to three unchanged lines around them prefixed
// " ", and "@@ line N @@" before each group (N is the line in before). It is ""
// when the texts are equal.
func Lines(before, after string) string {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(before, after)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)

	type line struct {
		op   diffmatchpatch.Operation
		text string
		num  int // line number in before (for deletions and context), or the next line of before
	}
	var all []line
	na := 1
	for _, d := range diffs {
		for _, l := range splitKeep(d.Text) {
			all = append(all, line{d.Type, l, na})
			if d.Type != diffmatchpatch.DiffInsert {
				na++
			}
		}
	}
	show := make([]bool, len(all))
	for i, l := range all {
		if l.op == diffmatchpatch.DiffEqual {
			continue
		}
		for j := max(0, i-contextLines); j <= min(len(all)-1, i+contextLines); j++ {
			show[j] = true
		}
	}
	var b strings.Builder
	for i, l := range all {
		if !show[i] {
			continue
		}
		if i == 0 || !show[i-1] {
			fmt.Fprintf(&b, "@@ line %d @@\n", l.num)
		}
		prefix := " "
		switch l.op {
		case diffmatchpatch.DiffDelete:
			prefix = "-"
		case diffmatchpatch.DiffInsert:
			prefix = "+"
		}
		b.WriteString(prefix + l.text + "\n")
	}
	return b.String()
}

// splitKeep splits text into lines without their newlines; a last line
// without one is kept.
func splitKeep(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
