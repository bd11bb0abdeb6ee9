package store

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/memsync/memsync/memfile"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/hugepage"
)

// sniffBytes is how much of the head of a file Append reads to know its dialect.
const sniffBytes = memfile.SniffBytes

// Append adds an entry with one O_APPEND write and an fsync, under the
// writers' lock; its cost does not depend on the file's size. In a ralph
// file the entry gets a "mem-<unix>-<hex4>" ID no entry of the file has
// (the file is read, not parsed, to check it) and goes to its section: an
// append where that is the file's last section, else one atomic rewrite. A
// file holding both dialects is rewritten in one (see Parse). At the size
// cap the oldest entries move to the archive first, with a warning.
func (s *Store) Append(e memfile.Entry) (memfile.Entry, error) {
	if err := s.Validate(&e); err != nil {
		return e, err
	}
	err := s.WithLock(func() error {
		var err error
		e, _, err = s.appendLocked(e)
		return err
	})
	return e, err
}

// appendLocked is Append's work under the writers' lock. rewrote reports
// that the file was rewritten (ralph dialect, size cap) instead of appended to.
func (s *Store) appendLocked(e memfile.Entry) (_ memfile.Entry, rewrote bool, err error) {
	target, err := s.Resolve(s.Path())
	if err != nil {
		return e, false, err
	}
	if err := s.CheckWritable(s.Path()); err != nil {
		return e, false, err
	}
	f, err := fsutil.OpenAppend(target, s.fileMode())
	if err != nil {
		return e, false, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return e, false, err
	}
	size := fi.Size()
	head := make([]byte, min(size, sniffBytes))
	if _, err := f.ReadAt(head, 0); err != nil && err != io.EOF {
		return e, false, err
	}
	dialect := memfile.SniffDialect(head)
	rewrite := size+int64(len(memfile.RenderEntry(&e, dialect)))+2 > s.maxBytes()
	if dialect == memfile.Ralph {
		if err := memfile.RalphRefuses(&e); err != nil {
			return e, false, err
		}
		// The whole file is read (not parsed): the new ID must be one no
		// entry has (ralph's delete removes every entry with an ID), and the
		// entry is appended only where the file's last section is its own.
		data := make([]byte, size)
		if _, err := f.ReadAt(data, 0); err != nil && err != io.EOF {
			return e, false, err
		}
		e.ID = ""
		e.ToRalph(memfile.UniqueRalphID(data, s.now()))
		last, pure := memfile.RalphLastSection(data)
		rewrite = rewrite || !pure || last != memfile.RalphSection(e.Type)
	} else if size > int64(len(head)) {
		// A ralph block at the end of an orch file (ralph adds a "##
		// Context" section where the file has none): the file is mixed,
		// and a rewrite writes it in one dialect.
		tail := make([]byte, min(size, sniffBytes))
		if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil && err != io.EOF {
			return e, false, err
		}
		rewrite = rewrite || bytes.Contains(tail, []byte("\n### mem-"))
	} else {
		rewrite = rewrite || bytes.Contains(head, []byte("\n### mem-"))
	}
	if rewrite {
		return e, true, s.rewriteLocked(func(f *memfile.File) error {
			if f.Dialect == memfile.Ralph {
				if memfile.ValidRalphID(e.ID) {
					taken := make(map[string]bool, len(f.Entries))
					for i := range f.Entries {
						taken[f.Entries[i].ID] = true
					}
					for taken[e.ID] {
						e.ID = memfile.NewRalphID(s.now())
					}
				} else { // an orch head, but mostly ralph's entries
					if err := memfile.RalphRefuses(&e); err != nil {
						return err
					}
					e.ID = ""
					e.ToRalph(memfile.UniqueRalphID(f.Render(), s.now()))
				}
			}
			f.Entries = append(f.Entries, e) // last in its section, as an append puts it
			return s.enforceCapLocked(f, e.ID)
		})
	}
	rec := memfile.RenderEntry(&e, dialect)
	crlf := firstLineCRLF(head)
	prefix, err := separator(f, size, crlf)
	if err != nil {
		return e, false, err
	}
	text := prefix + rec
	if crlf { // the file's own line ends, as a rewrite would write them
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	if err := fsutil.Append(f, []byte(text)); err != nil {
		return e, false, err
	}
	if s.Appended != nil {
		if after, err := f.Stat(); err == nil {
			s.Appended(f, fi, after)
		}
	}
	return e, false, nil
}

// separator is what goes before an appended entry so that it starts a new
// block: the header for an empty file, else enough newlines for one blank
// line (written "\n"; crlf: the file's line ends are "\r\n").
func separator(f *os.File, size int64, crlf bool) (string, error) {
	if size == 0 {
		return memfile.Header + "\n", nil
	}
	n := int64(2)
	if crlf {
		n = 4
	}
	tail := make([]byte, min(size, n))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
		return "", err
	}
	if crlf {
		tail = bytes.ReplaceAll(tail, []byte("\r\n"), []byte("\n"))
		tail = tail[max(0, len(tail)-2):]
		size = int64(len(tail))
	}
	switch {
	case string(tail) == "\n\n" || (size == 1 && tail[0] == '\n'):
		return "", nil
	case tail[len(tail)-1] == '\n':
		return "\n", nil
	}
	return "\n\n", nil
}

// firstLineCRLF tells whether a file's first line ends with "\r\n" (the
// line-ending style a rewrite keeps).
func firstLineCRLF(head []byte) bool {
	i := bytes.IndexByte(head, '\n')
	return i > 0 && head[i-1] == '\r'
}

// Update loads the active file under the writers' lock, lets fn change it,
// and writes it back atomically if fn returns nil. A damaged file is backed
// up beside itself before it is rewritten.
func (s *Store) Update(fn func(f *memfile.File) error) error {
	return s.WithLock(func() error { return s.rewriteLocked(fn) })
}

// UpdateArchive is Update for the archive file.
func (s *Store) UpdateArchive(fn func(f *memfile.File) error) error {
	return s.WithLock(func() error { return s.rewritePathLocked(s.ArchivePath(), fn) })
}

func (s *Store) rewriteLocked(fn func(f *memfile.File) error) error {
	return s.rewritePathLocked(s.Path(), fn)
}

// rewritePathLocked is the one rewrite of a memory file (the active file or
// the archive): parse, fn, back up a damaged file, atomic write. The caller
// holds the writers' lock.
func (s *Store) rewritePathLocked(path string, fn func(f *memfile.File) error) error {
	target, err := s.Resolve(path)
	if err != nil {
		return err
	}
	if err := s.CheckWritable(path); err != nil {
		return err
	}
	data, err := hugepage.ReadFile(target)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, unmarked := s.ParseFile(path, data)
	if len(data) == 0 {
		f.Preamble = memfile.Header + "\n"
	}
	if renamed := f.Normalize(); len(renamed) > 0 {
		for _, r := range renamed {
			s.warn("%s:%d: entry %q has the ID %s of an earlier entry; it gets the new ID %s", path, r.Line, r.Heading, r.Old, r.New)
		}
		// The content index maps hashes to the old IDs: rebuild it.
		s.invalidateIndex()
	}
	var before []memfile.Entry
	if s.RemovalLog != "" {
		before = slices.Clone(f.Entries)
	}
	if err := fn(f); err != nil {
		return err
	}
	if err := s.recordRemovals(before, f.Entries); err != nil {
		return err
	}
	if err := fsutil.MkdirAll(filepath.Dir(target), s.dirMode()); err != nil {
		return err
	}
	// A backup keeps text the rewrite could lose: not for an entry that only
	// repeated another's ID (renamed above, with a warning; no text lost),
	// so a writer that draws IDs without checking (ralph) causes none.
	if unmarked || slices.ContainsFunc(f.Problems, func(p memfile.Problem) bool { return !memfile.IsDuplicateIDProblem(p) }) {
		backup, err := s.Backup(target, data)
		if err != nil {
			return err
		}
		if unmarked {
			s.warn("%s held git conflict markers: merged its two sides by entry; its old content is kept in %s", path, backup)
		} else {
			s.warn("%s had %d problem(s); its old content is kept in %s", path, len(f.Problems), backup)
		}
	}
	return fsutil.WriteFile(target, f.Render(), s.fileMode())
}

// Backup keeps data beside target as BackupPath(target, data), the backup
// of a damaged memory file before it is rewritten, and returns its path.
// There is one backup per distinct damage: a damage that stays in the file
// (a NUL line the rewrite keeps in place) is backed up by the first rewrite
// that meets it, not again by every later one.
func (s *Store) Backup(target string, data []byte) (string, error) {
	backup := BackupPath(target, data)
	if old, err := os.ReadFile(backup); err == nil && bytes.Equal(damageKey(old), damageKey(data)) {
		return backup, nil
	}
	if err := fsutil.WriteFile(backup, data, s.fileMode()); err != nil {
		return "", fmt.Errorf("backup before rewrite: %w", err)
	}
	return backup, nil
}

// BackupPath is where Backup keeps data, the content of target:
// target.bak-<16 hex digits of a SHA-256 of its damage>.
func BackupPath(target string, data []byte) string {
	sum := sha256.Sum256(damageKey(data))
	return target + ".bak-" + hex.EncodeToString(sum[:8])
}

// damageKey is what tells two damages apart: the damaged lines (NUL bytes,
// invalid UTF-8), which a rewrite keeps in place; the whole content when it
// holds conflict markers (a rewrite merges it) or no such line (duplicate
// IDs).
func damageKey(data []byte) []byte {
	ps := memfile.Damage(data)
	if len(ps) == 0 || memfile.HasConflictMarkers(data) {
		return data
	}
	lines := bytes.Split(data, []byte("\n"))
	var key bytes.Buffer
	for _, p := range ps {
		if p.Line >= 1 && p.Line <= len(lines) {
			key.Write(lines[p.Line-1])
			key.WriteByte('\n')
		}
	}
	return key.Bytes()
}

// CheckWritable refuses (ErrReadOnly) to write memory files when one of
// paths exists without its owner's write bit: the user made it read-only.
// The rule reads the mode bits, not the result of a write, so it holds for
// root as well. Every write of a memory file checks it first.
func (s *Store) CheckWritable(paths ...string) error {
	for _, path := range paths {
		target, err := s.Resolve(path)
		if err != nil {
			return err
		}
		fi, err := os.Stat(target)
		if err != nil || fi.Mode().Perm()&0o200 != 0 {
			continue // a missing file is created; other errors show at the write
		}
		return fmt.Errorf("%w: %s (mode %04o)", ErrReadOnly, path, fi.Mode().Perm())
	}
	return nil
}

// enforceCapLocked moves the oldest entries to the archive until the active
// file is under 90% of the cap, never the entry with the ID spare (the one
// just written) and never the last one left. The oldest come first in orch's
// file; in ralph's, those with the oldest time in their ID. The archive is
// written first.
func (s *Store) enforceCapLocked(f *memfile.File, spare string) error {
	size := int64(len(f.Render()))
	if size <= s.maxBytes() {
		return nil
	}
	goal := s.maxBytes() * 9 / 10
	order := make([]int, 0, len(f.Entries))
	for i := range f.Entries {
		if f.Entries[i].ID != spare {
			order = append(order, i)
		}
	}
	if f.Dialect == memfile.Ralph { // oldest first: ralph adds first in a section, memsync last
		slices.SortStableFunc(order, func(a, b int) int {
			return cmp.Compare(memfile.RalphUnix(f.Entries[a].ID), memfile.RalphUnix(f.Entries[b].ID))
		})
	}
	if len(order) == len(f.Entries) && len(order) > 0 {
		order = order[:len(order)-1] // no spare: the newest stays
	}
	var picked []int
	for _, i := range order {
		if size <= goal {
			break
		}
		size -= int64(len(memfile.RenderEntry(&f.Entries[i], f.Dialect)) + 1)
		picked = append(picked, i)
	}
	out := make([]memfile.Entry, 0, len(picked))
	for _, i := range picked {
		out = append(out, f.Entries[i])
	}
	if _, _, err := s.archiveLocked(out); err != nil {
		return err
	}
	s.warn("%s reached the size cap (%d bytes): moved the %d oldest entries to %s", s.Path(), s.maxBytes(), len(picked), s.ArchivePath())
	gone := make(map[int]bool, len(picked))
	for _, i := range picked {
		gone[i] = true
	}
	kept := f.Entries[:0]
	for i, e := range f.Entries {
		if !gone[i] {
			kept = append(kept, e)
		}
	}
	f.Entries = kept
	return nil
}

// archiveLocked appends entries to the archive file and syncs it; see
// landLocked for what it returns.
func (s *Store) archiveLocked(entries []memfile.Entry) (map[string]*memfile.Entry, []memfile.Entry, error) {
	if len(entries) == 0 {
		return nil, nil, nil
	}
	var have map[string]*memfile.Entry
	var landed []memfile.Entry
	err := s.rewritePathLocked(s.ArchivePath(), func(a *memfile.File) error {
		have, landed = s.land(s.ArchivePath(), a, entries)
		return nil
	})
	return have, landed, err
}

// land appends entries to dst, the file at path, so that each one is there
// afterwards: an entry whose ID dst already holds with the same content
// (left by a move a crash cut short) is not written twice; one whose ID dst
// holds with other content is written under a new ID, with a warning. It
// returns the entries of dst by ID and the entries as dst now holds them.
func (s *Store) land(path string, dst *memfile.File, entries []memfile.Entry) (map[string]*memfile.Entry, []memfile.Entry) {
	taken := make(map[string]bool, len(dst.Entries)+len(entries))
	for i := range dst.Entries {
		taken[dst.Entries[i].ID] = true
	}
	byID := func() map[string]*memfile.Entry {
		m := make(map[string]*memfile.Entry, len(dst.Entries))
		for i := range dst.Entries {
			m[dst.Entries[i].ID] = &dst.Entries[i]
		}
		return m
	}
	have := byID()
	landed := make([]memfile.Entry, 0, len(entries))
	dst.Entries = slices.Grow(dst.Entries, len(entries))
	for _, e := range entries {
		if d, ok := have[e.ID]; ok {
			if sameStoredEntry(d, &e) {
				landed = append(landed, *d)
				continue
			}
			old := e.ID
			e.ID = memfile.FreshID(&e, dst.Dialect, taken)
			e.KeepID()
			s.warn("%s already holds another entry with the ID %s; %q gets the new ID %s there", path, old, e.Heading(), e.ID)
		}
		taken[e.ID] = true
		dst.Entries = append(dst.Entries, e)
		landed = append(landed, e)
		have[e.ID] = &dst.Entries[len(dst.Entries)-1]
	}
	return byID(), landed
}

// sameStoredEntry tells two copies of one entry (same ID) from two entries that
// share an ID: the same content, as dedup compares it.
func sameStoredEntry(a, b *memfile.Entry) bool {
	return a.ID == b.ID && memfile.ContentHash(a.Content) == memfile.ContentHash(b.Content)
}

// ConflictLog records the entries the two sides of a memory file's git
// conflict markers hold differently (Store.Conflicts): ours[i] stays in the
// file at path, theirs[i] is the other side's version of the same ID.
type ConflictLog interface {
	Record(path string, ours, theirs []memfile.Entry) error
}

// ParseFile parses the bytes of the memory file at path, just read, as every
// rewrite does: a file with git conflict markers is merged by entry
// (Unmark) when the store has a conflict log (Conflicts), which records
// what the two sides hold differently; unmarked reports that it was. When
// the log cannot be written, the file is parsed as it is (with a warning).
// The entries share data's memory, so data must not change afterwards.
func (s *Store) ParseFile(path string, data []byte) (f *memfile.File, unmarked bool) {
	f = memfile.ParseOwned(data)
	if s.Conflicts == nil || !memfile.ConflictMarked(f.Problems) {
		return f, false
	}
	u, ours, theirs, ok := memfile.Unmark(data)
	if !ok {
		return f, false
	}
	if err := s.Conflicts.Record(path, ours, theirs); err != nil {
		s.warn("%s holds conflict markers, left as they are: %v", path, err)
		return f, false
	}
	switch n := len(theirs); {
	case n == 1:
		s.warn("%s: 1 entry differs between the two sides of the conflict; ours kept, theirs recorded (memsync conflicts)", path)
	case n > 1:
		s.warn("%s: %d entries differ between the two sides of the conflict; ours kept, theirs recorded (memsync conflicts)", path, n)
	}
	return u, true
}

// CutTorn removes the torn last entry (see Torn) of the memory file at path
// under the writers' lock, after keeping the whole file in a backup
// (Backup). It returns the backup's path and the line where the removed
// entry began; backup is "" when the file was not torn.
func (s *Store) CutTorn(path string) (backup string, line int, err error) {
	err = s.WithLock(func() error {
		target, err := s.Resolve(path)
		if err != nil {
			return err
		}
		if err := s.CheckWritable(path); err != nil {
			return err
		}
		data, err := os.ReadFile(target)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		at, l, torn := memfile.Torn(data)
		if !torn {
			return nil
		}
		if backup, err = s.Backup(target, data); err != nil {
			return err
		}
		line = l
		if err := s.recordRemovals(memfile.Parse(data).Entries, memfile.Parse(data[:at]).Entries); err != nil {
			return err
		}
		return fsutil.WriteFile(target, data[:at], s.fileMode())
	})
	return backup, line, err
}
