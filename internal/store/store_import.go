package store

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"github.com/memsync/memsync/memfile"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
)

// ReadForeign reads memories kept by other tools, for import:
//
//   - a file with YAML front matter (the multi-agent MCP layout: one markdown file per
//     entry with key, tags, created_at, updated_at);
//   - a memories.md file in orch's or ralph's dialect;
//   - a folder of front-matter files, with its archive/ subfolder; a folder
//     holding memory/ and SESSION/memory/ (.multi-agent-mcp) is
//     read session by session; a memories.md in a folder (and its
//     archive/memories.md) is read too.
//
// Entries from the front-matter layout get IDs derived from their session and
// key, so importing the same files twice finds the same IDs.
//
// What is read is someone else's (a cloned repository's folder): no read
// follows a link out of the repository path lies in (out of path itself
// when it is in none; the error wraps ErrUnsafePath and names the link and
// where it leads), and every file is a regular file of at most
// maxForeignFile bytes (a link to /dev/zero is refused before it is read).
func ReadForeign(path string) (active, archived []memfile.Entry, err error) {
	if path, err = filepath.Abs(path); err != nil { // relative to the current folder
		return nil, nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	root := foreignRoot(path)
	if !fi.IsDir() {
		es, err := readForeignFile(path, root, "")
		return es, nil, err
	}
	return readForeignDir(root, path, "")
}

// foreignRoot is what an import of path may read: the top of the git
// worktree that holds it (the folder with .git), else path's folder.
func foreignRoot(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	start := abs
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		start = filepath.Dir(abs)
	}
	for d := start; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return start
		}
	}
}

// maxForeignFile bounds each file import reads.
const maxForeignFile = 16 << 20

func readForeignDir(root, dir, session string) (active, archived []memfile.Entry, err error) {
	if session == "" {
		if fi, err := os.Stat(filepath.Join(dir, "memory")); err == nil && fi.IsDir() {
			active, archived, err = readForeignDir(root, filepath.Join(dir, "memory"), "")
			if err != nil {
				return nil, nil, err
			}
			subs, _ := filepath.Glob(filepath.Join(dir, "*", "memory"))
			sort.Strings(subs)
			for _, sub := range subs {
				a, b, err := readForeignDir(root, sub, filepath.Base(filepath.Dir(sub)))
				if err != nil {
					return nil, nil, err
				}
				active, archived = append(active, a...), append(archived, b...)
			}
			return active, archived, nil
		}
	}
	for k, d := range []string{dir, filepath.Join(dir, "archive")} {
		names, _ := filepath.Glob(filepath.Join(d, "*.md"))
		sort.Strings(names)
		for _, name := range names {
			es, err := readForeignFile(name, root, session)
			if err != nil {
				return nil, nil, err
			}
			if k == 0 {
				active = append(active, es...)
			} else {
				archived = append(archived, es...)
			}
		}
	}
	return active, archived, nil
}

func readForeignFile(path, root, session string) ([]memfile.Entry, error) {
	data, err := fsutil.ReadWithin(path, root, maxForeignFile)
	if oe := new(fsutil.OutsideError); errors.As(err, &oe) {
		return nil, &PathError{Path: path, Target: oe.Target, Link: path,
			Why: "leads outside " + root + ", to " + oe.Target + " (import reads only what lies inside the folder it is given)"}
	}
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(data, []byte("---\n")) || bytes.HasPrefix(data, []byte("---\r\n")) {
		e, err := memfile.ParseFrontMatter(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if e.Extra[0].Value == "" { // no key: the file name is the key
			e.Extra[0].Value = strings.TrimSuffix(filepath.Base(path), ".md")
		}
		e.ID = importID(session, e.Extra[0].Value)
		if session != "" {
			e.Extra = append(e.Extra, memfile.Field{Key: "Session", Value: session})
		}
		return []memfile.Entry{e}, nil
	}
	f := memfile.Parse(data)
	for _, p := range f.Problems {
		if !memfile.IsDialectProblem(p) { // a file of both dialects is read entry by entry
			return nil, fmt.Errorf("%s:%d: %s", path, p.Line, p.Msg)
		}
	}
	out := make([]memfile.Entry, 0, len(f.Entries))
	for _, e := range f.Entries {
		n := memfile.Entry{ID: e.ID, Type: e.Type, Title: e.Title, Tags: e.Tags, Date: e.Date, Content: e.Content}
		if n.Title == "" {
			n.Title = memfile.TitleFrom(e.Content)
		}
		for _, x := range e.Extra {
			if x.Key != memfile.StrayKey && x.Key != "" {
				n.Extra = append(n.Extra, x)
			}
		}
		if session != "" {
			n.Extra = append(n.Extra, memfile.Field{Key: "Session", Value: session})
		}
		out = append(out, n)
	}
	return out, nil
}

// importID is the stable ID of an entry of the front-matter layout.
func importID(session, key string) string {
	sum := sha256.Sum256([]byte("seed001\x00" + session + "\x00" + key))
	return memfile.EncodeID(sum[:])
}

// Import adds foreign entries to the active file and the archive, skipping
// any whose ID either file already holds (as an ID or as a Source-ID) and
// any that an entry of either file, or one imported before it, says already
// (Dups, the rule Add follows: the same content in the entry's session
// view; an entry without a session matches every session's entry), so a
// second import of the same source adds nothing. It returns what it added.
// Into a ralph file, entries get ralph's IDs and keep their own as their
// Source-ID (see Entry.ToRalph).
func (s *Store) Import(active, archived []memfile.Entry) (added []memfile.Entry, skipped int, err error) {
	for i := range active {
		if err := s.Validate(&active[i]); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", active[i].Title, err)
		}
	}
	for i := range archived {
		if err := s.Validate(&archived[i]); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", archived[i].Title, err)
		}
	}
	err = s.WithLock(func() error {
		if err := s.CheckWritable(s.Path(), s.ArchivePath()); err != nil {
			return err // both files must be writable before either changes
		}
		ids, err := s.Gone() // deleted or purged here: never brought back
		if err != nil {
			return err
		}
		var dups memfile.Dups
		for _, p := range []string{s.Path(), s.ArchivePath()} {
			f, err := s.load(p, false)
			if err != nil {
				return err
			}
			for i := range f.Entries {
				ids[f.Entries[i].ID] = true
				dups.Add(&f.Entries[i])
				if id := f.Entries[i].Field(memfile.SourceIDField); id != "" {
					ids[id] = true
				}
			}
		}
		fresh := func(in []memfile.Entry) []memfile.Entry {
			var out []memfile.Entry
			for i := range in {
				if ids[in[i].ID] || dups.Find(&in[i]) != nil {
					skipped++
					continue
				}
				ids[in[i].ID] = true
				dups.Add(&in[i])
				out = append(out, in[i])
			}
			return out
		}
		newActive, newArchived := fresh(active), fresh(archived)
		if len(newArchived) > 0 {
			if _, _, err := s.archiveLocked(newArchived); err != nil {
				return err
			}
		}
		if len(newActive) > 0 {
			if err := s.rewriteLocked(func(f *memfile.File) error {
				if f.Dialect == memfile.Ralph { // ralph's IDs; the source ID is kept as a tag
					for i := range newActive {
						if err := memfile.RalphRefuses(&newActive[i]); err != nil {
							return fmt.Errorf("%s: %w", newActive[i].ID, err)
						}
					}
					data := f.Render()
					for i := range newActive {
						id := memfile.UniqueRalphID(data, s.now())
						data = append(data, "\n### "+id+"\n"...)
						newActive[i].ToRalph(id)
					}
				}
				f.Entries = append(f.Entries, newActive...)
				return nil
			}); err != nil {
				return err
			}
		}
		added = append(append(added, newActive...), newArchived...)
		if len(added) > 0 && s.StateDir != "" {
			s.invalidateIndex()
		}
		return nil
	})
	return added, skipped, err
}
