package cite

import (
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
)

// ErrOutside is wrapped by the error of a citation of a path outside the
// repository's work tree (or inside its git dir).
var ErrOutside = errors.New("not a file of this repository")

// Maker makes new citations in one work tree.
type Maker struct {
	Top    string // the work tree's top
	Dir    string // the folder a relative PATH is relative to ("" is Top)
	Commit string // the commit HEAD is at, recorded in each citation
	// Index is the worktree's git index: automatic citations name tracked
	// files only (nil: Auto cites nothing).
	Index *Index

	checker Checker // reads files as Check does (inside Top only, bounded)
}

// FromSpec makes the citation a person wrote: PATH[:LINE[-LINE]], PATH
// relative to Dir or absolute, a regular file of the work tree (tracked or
// not) whose lines reach the range.
func (mk *Maker) FromSpec(spec string) (Citation, error) {
	p, start, end, err := ParseSpec(spec)
	if err != nil {
		return Citation{}, err
	}
	rel, err := mk.rel(p)
	if err != nil {
		return Citation{}, err
	}
	return mk.make(rel, start, end, spec)
}

// rel is p relative to the top, slash-separated; an error for a path that
// is not inside the work tree.
func (mk *Maker) rel(p string) (string, error) {
	abs := p
	if !filepath.IsAbs(p) {
		dir := mk.Dir
		if dir == "" {
			dir = mk.Top
		}
		abs = filepath.Join(dir, p)
	}
	rel, ok := within(mk.Top, abs)
	if !ok { // the same place spelled through a link (/tmp -> /private/tmp)
		top, err1 := filepath.EvalSymlinks(mk.Top)
		dir, err2 := filepath.EvalSymlinks(filepath.Dir(abs))
		if err1 == nil && err2 == nil {
			rel, ok = within(top, filepath.Join(dir, filepath.Base(abs)))
		}
	}
	if !ok {
		return "", fmt.Errorf("cite %s: %w (outside %s)", p, ErrOutside, mk.Top)
	}
	return rel, nil // make refuses the git dir
}

// within is abs relative to top, slash-separated, when it lies inside.
func within(top, abs string) (string, bool) {
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// make fingerprints lines start to end (0: the file) of rel, a path
// inside the top and outside the git dir (CheckPath: Reanchor's path comes
// from the memory file).
func (mk *Maker) make(rel string, start, end int, spec string) (Citation, error) {
	if err := CheckPath(rel); err != nil {
		return Citation{}, fmt.Errorf("cite %s: %w: %w", spec, ErrOutside, err)
	}
	mk.checker.Top = mk.Top
	full := filepath.Join(mk.Top, filepath.FromSlash(rel))
	fi, err := os.Stat(full)
	if err != nil {
		return Citation{}, fmt.Errorf("%w %s: %w", ErrSpec, spec, err)
	}
	if !fi.Mode().IsRegular() {
		return Citation{}, fmt.Errorf("%w %s: not a regular file", ErrSpec, spec)
	}
	b, err := mk.checker.read(full)
	if errors.As(err, new(*fsutil.OutsideError)) {
		return Citation{}, fmt.Errorf("cite %s: %w: %w", spec, ErrOutside, err)
	}
	if err != nil {
		return Citation{}, fmt.Errorf("%w %s: %w", ErrSpec, spec, err)
	}
	t := Lines(b)
	sum, ok := t.Sum(start, end)
	if !ok {
		return Citation{}, fmt.Errorf("%w %s: the file has %d lines", ErrSpec, spec, t.Len())
	}
	return Citation{Path: rel, Start: start, End: end, Commit: mk.Commit, Sum: sum}, nil
}

// maxAuto bounds the citations Auto makes for one content.
const maxAuto = 8

// Auto makes citations of the tracked files content names: a path from the
// top ("backend/db/pool.go"), or a file name that only one tracked file
// has ("pool.go"), each optionally with lines ("pool.go:42",
// "pool.go:40-44"; lines past the file's end cite the file). Paths are
// found as words of the content, without the quotes, brackets and
// punctuation around them. At most maxAuto; none without an Index.
func (mk *Maker) Auto(content string) []Citation {
	if mk.Index == nil || mk.Index.Len() == 0 {
		return nil
	}
	var out []Citation
	seen := map[string]bool{}
	for w := range words(content) {
		if len(out) == maxAuto {
			break
		}
		p, start, end, err := ParseSpec(w)
		if err != nil {
			continue
		}
		if !mk.Index.Tracked(p) {
			if strings.Contains(p, "/") {
				continue
			}
			cands := mk.Index.ByBase(p)
			if len(cands) != 1 {
				continue
			}
			p = cands[0]
		}
		c, err := mk.make(p, start, end, w)
		if err != nil && start > 0 {
			c, err = mk.make(p, 0, 0, w)
		}
		if err == nil && !seen[c.Spec()] {
			seen[c.Spec()] = true
			out = append(out, c)
		}
	}
	return out
}

// words are the words of content that may name a file: without the
// quotes, brackets and punctuation around them, holding a '.'.
func words(content string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for w := range strings.FieldsFuncSeq(content, func(r rune) bool {
			return r == ' ' || r == '\t' || r == '\n' || r == '\r' || strings.ContainsRune("`\"'()[]{}<>,;", r)
		}) {
			w = strings.TrimPrefix(strings.TrimRight(w, ".:!?"), "./")
			if strings.Contains(w, ".") && len(w) <= 4096 && !yield(w) {
				return
			}
		}
	}
}

// Mentions tells whether content has a word that may name a file (Auto
// has something to look up): a cheap test before the index is read.
func Mentions(content string) bool {
	for range words(content) {
		return true
	}
	return false
}

// Reanchor is the citation of what r found, for a person who re-checked
// it: where the lines moved (Moved, Renamed), else the lines now at the
// citation's place (the whole file when they are past its end), with
// Maker's commit. ok is false when the file is gone or cannot be read.
func (mk *Maker) Reanchor(r Result) (c Citation, ok bool) {
	now := r.Now
	c, err := mk.make(now.Path, now.Start, now.End, now.Spec())
	if err != nil && now.Lines() {
		c, err = mk.make(now.Path, 0, 0, now.Path)
	}
	return c, err == nil
}
