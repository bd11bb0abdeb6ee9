package memfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/hugepage"
	"github.com/memsync/memsync/lock"
)

// Defaults of a Store.
const (
	DefaultMaxBytes      = 10 << 20 // seed 004's size cap
	DefaultMaxEntryBytes = 64 << 10 // one entry, rendered
)

// Errors a caller can test for with errors.Is.
var (
	// ErrUnsafePath: the memory file resolves outside its memory home.
	ErrUnsafePath = errors.New("memory file resolves outside the memory home")
	// ErrTooLarge: one entry exceeds MaxEntryBytes.
	ErrTooLarge = errors.New("entry too large")
	// ErrInvalid: an entry that cannot be written as given.
	ErrInvalid = errors.New("invalid entry")
)

// Store is one memory home: its active file and its archive, guarded by one
// lock. The zero values of its limits mean the defaults.
type Store struct {
	Home          string        // the memory home folder; its parents must be resolved (no symlinks)
	LockTimeout   time.Duration // how long a command waits for the lock
	MaxBytes      int64         // size cap of the active file
	MaxEntryBytes int           // size limit of one entry
	Now           func() time.Time
	// Warn receives messages that are no errors (size cap reached, backup written).
	Warn func(msg string)
	// FileMode is the mode of the memory files it creates (0 means 0644);
	// the global layer uses 0600, and its folders then get 0700.
	FileMode os.FileMode
	// StateDir holds the store's state (last access, content index; see
	// state.go); empty means no state: no access recording and no dedup.
	StateDir string
	// Limits, when set (and with a StateDir), make Add run GC once a write
	// passes them.
	Limits *Limits
	// Unmark, when set, merges a memory file that holds git conflict
	// markers before any rewrite of it (path is the file, data its bytes):
	// it returns the file to write instead, or false to keep the damaged one
	// as it parses. The damaged bytes are backed up first either way. It is
	// a hook because the entry-level merge lives in package merge, which
	// imports this package (the CLI sets it to merge.Unmark).
	Unmark func(path string, data []byte) (*File, bool)
}

// Open returns the store of a memory home with default limits.
func Open(home string) *Store { return &Store{Home: home} }

// Path is the active memory file (it may be a symlink in a worktree setup).
func (s *Store) Path() string { return filepath.Join(s.Home, "memories.md") }

// ArchivePath is the archive file.
func (s *Store) ArchivePath() string { return filepath.Join(s.Home, "archive", "memories.md") }

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Store) warn(format string, args ...any) {
	if s.Warn != nil {
		s.Warn(fmt.Sprintf(format, args...))
	}
}

func (s *Store) fileMode() os.FileMode {
	if s.FileMode != 0 {
		return s.FileMode
	}
	return 0o644
}

// dirMode is the mode of folders the store creates: private when its files are.
func (s *Store) dirMode() os.FileMode {
	if s.fileMode()&0o077 == 0 {
		return 0o700
	}
	return 0o755
}

func (s *Store) maxBytes() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return DefaultMaxBytes
}

func (s *Store) maxEntryBytes() int {
	if s.MaxEntryBytes > 0 {
		return s.MaxEntryBytes
	}
	return DefaultMaxEntryBytes
}

// Resolve returns the real path of a file in the home (symlinks followed,
// also a dangling one), and refuses one that lies outside the home.
func (s *Store) Resolve(path string) (string, error) {
	target := path
	for range 40 {
		fi, err := os.Lstat(target)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		dest, err := os.Readlink(target)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(target), dest)
		}
		target = filepath.Clean(dest)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(target)); err == nil {
		target = filepath.Join(dir, filepath.Base(target))
	}
	home := filepath.Clean(s.Home)
	if rel, err := filepath.Rel(home, target); err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%w: %s -> %s (home %s)", ErrUnsafePath, path, target, home)
	}
	return target, nil
}

// lockPath is the one lock of the home: beside the resolved active file.
func (s *Store) lockPath() (string, error) {
	target, err := s.Resolve(s.Path())
	if err != nil {
		return "", err
	}
	return lock.PathFor(target), nil
}

// Load reads the active file under the readers' lock. A missing file is an
// empty memory.
func (s *Store) Load() (*File, error) {
	return s.load(s.Path(), true)
}

// LoadArchive reads the archive under the readers' lock.
func (s *Store) LoadArchive() (*File, error) {
	return s.load(s.ArchivePath(), true)
}

// Reload is Load for a caller that keeps the file it loaded last, prev, and
// never changes it (a server answering reads): when the memory file still
// holds the bytes prev was parsed from, it returns prev itself rather than
// parsing them again. The file is read and compared on every call, so every
// change is seen at once.
func (s *Store) Reload(prev *File) (*File, error) {
	return s.loadReusing(s.Path(), true, prev)
}

// ReloadArchive is Reload for the archive.
func (s *Store) ReloadArchive(prev *File) (*File, error) {
	return s.loadReusing(s.ArchivePath(), true, prev)
}

func (s *Store) load(path string, locked bool) (*File, error) {
	return s.loadReusing(path, locked, nil)
}

// loadReusing is load that returns prev when the file holds the bytes prev
// was parsed from.
func (s *Store) loadReusing(path string, locked bool, prev *File) (*File, error) {
	target, err := s.Resolve(path)
	if err != nil {
		return nil, err
	}
	if locked {
		lp, err := s.lockPath()
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(s.Home); err == nil {
			// A reader that cannot create the lock file (a read-only
			// checkout) reads without it: appends are single writes and
			// rewrites are renames, so it still never sees a mixed file.
			l, err := lock.Shared(lp, s.LockTimeout)
			switch {
			case err == nil:
				defer func() { _ = l.Release() }()
			case errors.Is(err, lock.ErrTimeout):
				return nil, err
			}
		}
	}
	data, err := hugepage.ReadFile(target)
	if errors.Is(err, os.ErrNotExist) {
		return &File{Preamble: Header + "\n"}, nil
	}
	if err != nil {
		return nil, err
	}
	if prev != nil && prev.src != nil && bytes.Equal(prev.src, data) {
		return prev, nil
	}
	return parseOwned(data), nil
}

// WithLock runs fn holding the writers' lock, creating the home if needed.
// It is for work that must not interleave with other writers and that reads
// or writes the memory files itself (a snapshot, a rollback): fn must not
// call the Store's own locking methods (Load, Append, Update), since the lock
// is not reentrant.
func (s *Store) WithLock(fn func() error) error {
	if err := os.MkdirAll(s.Home, s.dirMode()); err != nil {
		return err
	}
	lp, err := s.lockPath()
	if err != nil {
		return err
	}
	l, err := lock.Exclusive(lp, s.LockTimeout)
	if err != nil {
		return err
	}
	defer func() { _ = l.Release() }()
	return fn()
}

// Validate checks an entry before it is written: text that would break the
// file or that is binary is refused, and so is an entry over the size limit.
func (s *Store) Validate(e *Entry) error {
	for name, v := range map[string]string{"title": e.Title, "type": e.Type, "date": e.Date, "tags": strings.Join(e.Tags, ",")} {
		if strings.ContainsAny(v, "\n\r") {
			return fmt.Errorf("%w: the %s must be one line", ErrInvalid, name)
		}
	}
	for _, t := range e.Tags {
		if strings.ContainsAny(t, ",|") {
			return fmt.Errorf("%w: a tag cannot contain ',' or '|': %q", ErrInvalid, t)
		}
	}
	if e.Type != "" && strings.Contains(e.Type, ":") {
		return fmt.Errorf("%w: a type cannot contain a colon: %q", ErrInvalid, e.Type)
	}
	for _, v := range []string{e.Title, e.Content} {
		if strings.IndexByte(v, 0) >= 0 || !utf8.ValidString(v) {
			return fmt.Errorf("%w: content is binary (NUL bytes or invalid UTF-8)", ErrInvalid)
		}
	}
	if n := len(RenderEntry(e, Orch)); n > s.maxEntryBytes() {
		return fmt.Errorf("%w: entry is %d bytes, the limit is %d bytes", ErrTooLarge, n, s.maxEntryBytes())
	}
	return nil
}

// NewEntry fills in what a new entry needs: an ID, the date, a title.
func (s *Store) NewEntry(typ, title, content string, tags []string) Entry {
	e := Entry{ID: NewID(), Type: NormalizeType(typ), Title: strings.TrimSpace(title), Tags: tags, Content: content, Date: s.now().Format("2006-01-02")}
	if e.Title == "" {
		e.Title = TitleFrom(content)
	}
	return e
}

// TitleFrom makes a heading from content: its first line, shortened.
func TitleFrom(content string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(content), "\n")
	first = strings.Join(strings.Fields(first), " ")
	if r := []rune(first); len(r) > 60 {
		first = strings.TrimSpace(string(r[:59])) + "…"
	}
	return first
}

// sniffBytes is how much of the head of a file Append reads to know its dialect.
const sniffBytes = 4096

// Append adds an entry with one O_APPEND write and an fsync, under the
// writers' lock; its cost does not depend on the file's size. A ralph file
// gets the entry in its section (a rewrite). At the size cap the oldest
// entries move to the archive first, with a warning.
func (s *Store) Append(e Entry) (Entry, error) {
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
func (s *Store) appendLocked(e Entry) (_ Entry, rewrote bool, err error) {
	target, err := s.Resolve(s.Path())
	if err != nil {
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
	dialect := SniffDialect(head)
	if dialect == Ralph {
		e.ID = NewRalphID(s.now())
	}
	rec := RenderEntry(&e, dialect)
	if dialect == Ralph || size+int64(len(rec))+2 > s.maxBytes() {
		return e, true, s.rewriteLocked(func(f *File) error {
			f.Entries = append(f.Entries, e)
			if f.Dialect == Ralph { // ralph keeps the newest first in its section
				f.Entries = append([]Entry{e}, f.Entries[:len(f.Entries)-1]...)
			}
			return s.enforceCapLocked(f)
		})
	}
	prefix, err := separator(f, size)
	if err != nil {
		return e, false, err
	}
	return e, false, fsutil.Append(f, []byte(prefix+rec))
}

// separator is what goes before an appended entry so that it starts a new
// block: the header for an empty file, else enough newlines for one blank line.
func separator(f *os.File, size int64) (string, error) {
	if size == 0 {
		return Header + "\n", nil
	}
	tail := make([]byte, min(size, 2))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
		return "", err
	}
	switch {
	case string(tail) == "\n\n" || (size == 1 && tail[0] == '\n'):
		return "", nil
	case tail[len(tail)-1] == '\n':
		return "\n", nil
	}
	return "\n\n", nil
}

// Update loads the active file under the writers' lock, lets fn change it,
// and writes it back atomically if fn returns nil. A damaged file is backed
// up beside itself before it is rewritten.
func (s *Store) Update(fn func(f *File) error) error {
	return s.WithLock(func() error { return s.rewriteLocked(fn) })
}

// UpdateArchive is Update for the archive file.
func (s *Store) UpdateArchive(fn func(f *File) error) error {
	return s.WithLock(func() error { return s.rewritePathLocked(s.ArchivePath(), fn) })
}

func (s *Store) rewriteLocked(fn func(f *File) error) error {
	return s.rewritePathLocked(s.Path(), fn)
}

// rewritePathLocked is the one rewrite of a memory file (the active file or
// the archive): parse, fn, back up a damaged file, atomic write. The caller
// holds the writers' lock.
func (s *Store) rewritePathLocked(path string, fn func(f *File) error) error {
	target, err := s.Resolve(path)
	if err != nil {
		return err
	}
	data, err := hugepage.ReadFile(target)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, unmarked := s.ParseFile(path, data)
	if len(data) == 0 {
		f.Preamble = Header + "\n"
	}
	if err := fn(f); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(target), s.dirMode()); err != nil {
		return err
	}
	if unmarked || len(f.Problems) > 0 {
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

// Backup keeps data beside target as target.bak-<time>, the backup of a
// damaged memory file before it is rewritten, and returns its path.
func (s *Store) Backup(target string, data []byte) (string, error) {
	backup := fmt.Sprintf("%s.bak-%s", target, s.now().UTC().Format("20060102T150405.000000000"))
	if err := fsutil.WriteFile(backup, data, s.fileMode()); err != nil {
		return "", fmt.Errorf("backup before rewrite: %w", err)
	}
	return backup, nil
}

// enforceCapLocked moves the oldest entries to the archive until the active
// file is under 90% of the cap. The archive is written first.
func (s *Store) enforceCapLocked(f *File) error {
	size := int64(len(f.Render()))
	if size <= s.maxBytes() {
		return nil
	}
	goal := s.maxBytes() * 9 / 10
	n := 0
	for n < len(f.Entries)-1 && size > goal {
		size -= int64(len(RenderEntry(&f.Entries[n], f.Dialect)) + 1)
		n++
	}
	if _, err := s.archiveLocked(f.Entries[:n]); err != nil {
		return err
	}
	s.warn("%s reached the size cap (%d bytes): moved the %d oldest entries to %s", s.Path(), s.maxBytes(), n, s.ArchivePath())
	f.Entries = f.Entries[n:]
	return nil
}

// archiveLocked appends entries to the archive file and syncs it. Entries
// already in the archive (same ID) are not written twice. It returns the IDs
// the archive holds afterwards (nil when there was nothing to write).
func (s *Store) archiveLocked(entries []Entry) (map[string]bool, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	var have map[string]bool
	err := s.rewritePathLocked(s.ArchivePath(), func(a *File) error {
		have = make(map[string]bool, len(a.Entries)+len(entries))
		for _, e := range a.Entries {
			have[e.ID] = true
		}
		a.Entries = slices.Grow(a.Entries, len(entries))
		for _, e := range entries {
			if !have[e.ID] {
				have[e.ID] = true
				a.Entries = append(a.Entries, e)
			}
		}
		return nil
	})
	return have, err
}
