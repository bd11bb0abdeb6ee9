package history

import "github.com/memsync/memsync/internal/textdiff"

// TextDiff is the line diff of two texts that log, diff and conflicts show
// (textdiff.Lines).
func TextDiff(before, after string) string { return textdiff.Lines(before, after) }
