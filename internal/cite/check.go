package cite

import (
	"context"
	"crypto/sha1" //nolint:gosec // git's blob IDs are SHA-1: the cache key, not a security check
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
)

// MaxFile bounds a cited file that is read (a larger one is stale: "too
// large to check").
const MaxFile = 16 << 20

// State is what Check found of a citation.
type State string

// The states of a citation.
const (
	Fresh   State = "fresh"   // the cited lines (file) are where the citation says, unchanged
	Moved   State = "moved"   // the lines are unchanged, at other line numbers
	Renamed State = "renamed" // the file was renamed (git's rename detection); the lines are unchanged there
	Stale   State = "stale"   // the lines changed, or the file is gone
)

// Result is what Check found of one citation.
type Result struct {
	Citation Citation
	State    State
	// Now is where the cited lines are now (Moved, Renamed); the citation
	// itself otherwise.
	Now    Citation
	Reason string // why it is stale, or where it moved ("moved to lines 14-16")
}

// Checker checks citations against one work tree. It is not safe for
// concurrent use.
type Checker struct {
	Top   string // the work tree's top
	Index *Index // the worktree's git index (nil: every file is read)
	Cache *Cache // findings by blob ID (nil: none kept)
	// Renames, if set, gives the renames git sees from commit to the work
	// tree (old path -> new path); GitRenames is the real one. It is
	// called only for a cited path that is gone, once per commit.
	Renames func(commit string) (map[string]string, error)

	renames map[string]map[string]string
	texts   map[string]*fileText // files read, by path: each is read once per check
	kept    int                  // lines the texts hold
	work    int64                // bytes hashed so far (reading and searching)
}

// fileText is a file Check read.
type fileText struct {
	size int64
	mod  time.Time
	text *Text
	blob string
}

// Bounds of one Checker's work: a memory is input from whoever wrote it,
// and one entry can cite a large file thousands of times.
const (
	// maxWork bounds the bytes a Checker hashes (about 2 s of work); past
	// it a citation that needs a file read is not checked (stale, with
	// the reason) and moved lines are not searched for.
	maxWork = 1 << 30
	// maxKept bounds the lines of the files a Checker keeps read.
	maxKept = 1 << 23
)

// windowCost is what hashing a window of n lines counts as, in bytes: its
// line hashes and the hasher's own cost, about that of 128 bytes.
func windowCost(n int) int64 { return int64(n)*8 + 128 }

// Check finds where c's lines are now.
func (k *Checker) Check(c Citation) Result {
	r := Result{Citation: c, State: Fresh, Now: c}
	since := ""
	if c.Commit != "" {
		since = " since " + c.ShortCommit()
	}
	if err := CheckPath(c.Path); err != nil {
		r.State, r.Reason = Stale, err.Error()
		return r
	}
	f := k.find(c, c.Path)
	if f.err == nil && f.gone {
		renamed := k.renamed(c)
		if renamed == "" {
			r.State, r.Reason = Stale, fmt.Sprintf("%s was deleted%s", c.Path, since)
			return r
		}
		f = k.find(c, renamed)
		r.Now.Path = renamed
		if f.err == nil && f.at > 0 {
			r.State, r.Reason = Renamed, "renamed to "+renamed
			k.place(&r, f.at)
			return r
		}
		if f.err == nil && !f.gone {
			r.State, r.Reason = Stale, fmt.Sprintf("%s was renamed to %s and changed%s", c.Path, renamed, since)
			return r
		}
	}
	switch {
	case f.err != nil:
		r.State, r.Reason = Stale, f.err.Error()
	case f.gone:
		r.State, r.Reason = Stale, fmt.Sprintf("%s was deleted%s", c.Path, since)
	case f.at == 0 && c.Lines() && c.End > f.lines:
		r.State, r.Reason = Stale, fmt.Sprintf("%s is past the end of the file (%d lines)%s", c.Where(), f.lines, since)
	case f.at == 0 && f.cut:
		r.State, r.Reason = Stale, fmt.Sprintf("%s changed%s (not looked for elsewhere in the file: this check hashed %d MiB already)", c.Where(), since, k.work>>20)
	case f.at == 0:
		r.State, r.Reason = Stale, fmt.Sprintf("%s changed%s", c.Where(), since)
	case f.at != c.Start && c.Lines():
		r.State = Moved
		k.place(&r, f.at)
		r.Reason = "moved to " + strings.TrimPrefix(r.Now.Where(), r.Now.Path+" ")
	}
	return r
}

// place sets where the lines are now: from line at.
func (k *Checker) place(r *Result, at int) {
	if r.Citation.Lines() {
		r.Now.Start, r.Now.End = at, at+r.Citation.End-r.Citation.Start
	}
}

// found is what find saw at one path.
type found struct {
	gone  bool  // no such file
	at    int   // first line of the cited block there (1 for a whole file that matches), 0: not there
	lines int   // lines in the file
	err   error // the file could not be checked (not a regular file, too large, a link out)
	cut   bool  // the lines were not searched for everywhere: the Checker's work ran out
}

// find looks for c's lines in the file at p (relative to the top).
func (k *Checker) find(c Citation, p string) found {
	full := filepath.Join(k.Top, filepath.FromSlash(p))
	fi, err := os.Stat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return found{gone: true}
	case err != nil:
		return found{err: err}
	case !fi.Mode().IsRegular():
		return found{err: fmt.Errorf("%s is not a regular file", p)}
	}
	blob := ""
	if k.Index != nil {
		blob, _ = k.Index.Blob(p, fi)
	}
	key := cacheKey{start: c.Start, end: c.End, sum: c.Sum}
	if blob != "" {
		key.blob = blob
		if v, ok := k.Cache.get(key); ok {
			return found{at: v.at, lines: v.lines}
		}
	}
	ft, err := k.text(full, p, fi, blob == "")
	if err != nil {
		return found{err: err}
	}
	t := ft.text
	f := found{lines: t.Len()}
	if !c.Lines() {
		if s, _ := t.Sum(0, 0); s == c.Sum {
			f.at = 1
		}
	} else if s, ok := t.Sum(c.Start, c.End); ok && s == c.Sum {
		f.at = c.Start
	} else {
		n := c.End - c.Start + 1
		windows := int(min(int64(maxFindWork/n), max(maxWork-k.work, 0)/windowCost(n)))
		var tried int
		f.at, tried = t.find(c.Sum, c.Start, n, windows)
		k.work += int64(tried) * windowCost(n)
		f.cut = f.at == 0 && tried >= windows && windows < maxFindWork/n
	}
	if f.cut {
		return f // not a finding to keep: a check with work left may find the lines
	}
	if blob == "" {
		blob = ft.blob
	}
	key.blob = blob
	k.Cache.put(key, cacheVal{at: f.at, lines: f.lines})
	return f
}

// text is the file at full (p relative to the top) as read by this
// Checker: read and hashed once while it keeps its size and time; with
// its blob ID when blob is set.
func (k *Checker) text(full, p string, fi os.FileInfo, blob bool) (*fileText, error) {
	if ft := k.texts[p]; ft != nil && ft.size == fi.Size() && ft.mod.Equal(fi.ModTime()) && (ft.blob != "" || !blob) {
		return ft, nil
	}
	if k.work >= maxWork {
		return nil, fmt.Errorf("%s was not checked: this check read %d MiB of cited files already", p, k.work>>20)
	}
	b, err := k.read(full)
	if err != nil {
		return nil, err
	}
	k.work += int64(len(b))
	ft := &fileText{size: fi.Size(), mod: fi.ModTime(), text: Lines(b)}
	if blob {
		ft.blob = BlobID(b)
	}
	if k.kept+ft.text.Len() <= maxKept {
		if k.texts == nil {
			k.texts = map[string]*fileText{}
		}
		k.texts[p] = ft
		k.kept += ft.text.Len()
	}
	return ft, nil
}

// read reads a cited file, never through a link that leads out of the top
// (fsutil.ReadWithin), at most MaxFile bytes.
func (k *Checker) read(full string) ([]byte, error) {
	b, err := fsutil.ReadWithin(full, k.Top, MaxFile)
	if tl := (*fsutil.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, fmt.Errorf("%s is too large to check (%d bytes)", filepath.Base(full), tl.Size)
	}
	return b, err
}

// renamed is the path git says c's file was renamed to since c's commit;
// "" when it was not (or there is no commit to ask about).
func (k *Checker) renamed(c Citation) string {
	if c.Commit == "" || k.Renames == nil {
		return ""
	}
	if k.renames == nil {
		k.renames = map[string]map[string]string{}
	}
	m, ok := k.renames[c.Commit]
	if !ok {
		m, _ = k.Renames(c.Commit) // an unknown commit (not fetched here) finds no rename
		k.renames[c.Commit] = m
	}
	return m[c.Path]
}

// GitRenames returns a Renames function that asks git, in top, which
// files were renamed between a commit and the work tree (git diff -M).
func GitRenames(ctx context.Context, top string) func(commit string) (map[string]string, error) {
	return func(commit string) (map[string]string, error) {
		out, err := gitcmd.OutputContext(ctx, top, "diff", "--no-ext-diff", "-M", "--name-status", "-z", commit, "--")
		if err != nil {
			return nil, err
		}
		return parseRenames(out), nil
	}
}

// parseRenames reads git diff --name-status -z: "R<score>\0old\0new\0" for
// a rename, "<status>\0path\0" otherwise (C, a copy, has two paths too).
func parseRenames(out string) map[string]string {
	m := map[string]string{}
	f := strings.Split(out, "\x00")
	for i := 0; i < len(f); i++ {
		st := f[i]
		if st == "" {
			continue
		}
		switch st[0] {
		case 'R', 'C':
			if i+2 < len(f) {
				if st[0] == 'R' {
					m[f[i+1]] = f[i+2]
				}
				i += 2
			}
		default:
			i++
		}
	}
	return m
}

// CheckPath refuses a cited path that is not a clean path inside the top
// (absolute, "..") or that lies in a git dir (a ".git" component in any
// place and any case, as git refuses to track: the repository's own, a
// submodule's .git file, a nested repository): a citation read from a
// memory file is input from whoever wrote it.
func CheckPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("%q is not a path inside the repository", p)
	}
	for part := range strings.SplitSeq(p, "/") {
		if strings.EqualFold(part, ".git") {
			return fmt.Errorf("%q is inside a git dir", p)
		}
	}
	return nil
}

// BlobID is git's object ID of a blob holding b (SHA-1).
func BlobID(b []byte) string {
	h := sha1.New() //nolint:gosec // git's object ID
	h.Write([]byte("blob " + strconv.Itoa(len(b)) + "\x00"))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
