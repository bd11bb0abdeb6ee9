package worktree

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitrepo"
)

// excludeHeader is the comment line memsync's patterns are appended under.
const excludeHeader = "# memsync"

// EnsureExclude appends any missing patterns to <CommonDir>/info/exclude
// (shared by all worktrees), creating info/ if needed. Returns the patterns it
// added. Idempotent; keeps existing content byte for byte (adds a trailing
// newline first if the file lacks one); appends under a "# memsync" comment
// line.
//
// A pattern counts as present when a line of the file equals it, ignoring
// trailing whitespace. The "# memsync" line is written only if the file does
// not have one yet. Patterns must be non-empty single lines.
func EnsureExclude(r *Repo, patterns []string) ([]string, error) {
	if r == nil || r.CommonDir == "" {
		return nil, errors.New("worktree: EnsureExclude needs a discovered repository")
	}
	for _, p := range patterns {
		if strings.TrimSpace(p) == "" || strings.ContainsAny(p, "\r\n") {
			return nil, fmt.Errorf("worktree: invalid exclude pattern %q", p)
		}
	}
	path := filepath.Join(r.CommonDir, "info", "exclude")
	old, err := fsutil.ReadFile(path, gitrepo.MaxGitFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	if len(missingPatterns(old, patterns)) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	// Appending (rather than rewriting) leaves whatever is already there
	// untouched, even if someone else edits the file meanwhile. Writers
	// that meet a memory's first write at once take turns on the file's
	// flock and read it again, so the patterns go in once.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	defer func() { _ = f.Close() }()
	if err := fsutil.LockExclusive(f); err != nil {
		return nil, fmt.Errorf("worktree: lock %s: %w", path, err)
	}
	if old, err = fsutil.ReadFile(path, gitrepo.MaxGitFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	added := missingPatterns(old, patterns)
	if len(added) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	if len(old) > 0 && old[len(old)-1] != '\n' {
		buf.WriteByte('\n')
	}
	if len(missingPatterns(old, []string{excludeHeader})) > 0 {
		buf.WriteString(excludeHeader + "\n")
	}
	for _, p := range added {
		buf.WriteString(p + "\n")
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	if err := f.Close(); err != nil { // releases the lock
		return nil, fmt.Errorf("worktree: %w", err)
	}
	return added, nil
}

// missingPatterns are the patterns no line of the exclude file old holds
// (trailing whitespace ignored), each once.
func missingPatterns(old []byte, patterns []string) []string {
	have := map[string]bool{}
	for line := range strings.Lines(string(old)) {
		have[strings.TrimRight(line, " \t\r\n")] = true
	}
	var missing []string
	for _, p := range patterns {
		key := strings.TrimRight(p, " \t")
		if have[key] {
			continue
		}
		have[key] = true
		missing = append(missing, p)
	}
	return missing
}
