package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/memsync/memsync/memfile"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/hugepage"
	"github.com/memsync/memsync/lock"
)

// Defaults of a Store.
const (
	DefaultMaxBytes      = 10 << 20 // the memory's size cap
	DefaultMaxEntryBytes = 64 << 10 // one entry, rendered
)

// Errors a caller can test for with errors.Is.
var (
	// ErrUnsafePath: a file memsync would write (memory, archive, lock)
	// resolves outside its memory home, is not a regular file, or is the same
	// file as another of them. Every such error is a *PathError.
	ErrUnsafePath = errors.New("unsafe memory path")
	// ErrTooLarge: one entry exceeds MaxEntryBytes.
	ErrTooLarge = errors.New("entry too large")
	// ErrInvalid: an entry that cannot be written as given.
	ErrInvalid = memfile.ErrInvalid
	// ErrControl: a title, type or tag holding a character a terminal or
	// a viewer would act on (Control); errors that wrap it wrap ErrInvalid
	// too.
	ErrControl = errors.New("control character")
	// ErrReadOnly: the memory file (or the archive) has no owner write bit;
	// memsync refuses every write to it, whoever runs it (root included).
	ErrReadOnly = errors.New("memory file is read-only")
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
	// Shared is the repository's core.sharedRepository: the files and
	// folders the store creates (memory files, lock, backups, temp and
	// state files) get the modes git gives its own (FilePerm, DirPerm).
	Shared fsutil.Shared
	// StateDir holds the store's state (last access, content index; see
	// store_state.go); empty means no state: no access recording and no
	// dedup.
	StateDir string
	// RemovalLog, when set, is the file where every rewrite records the IDs
	// it takes out of a memory file (see store_removals.go); it lies in
	// StateDir.
	RemovalLog string
	// GoneLog, when set, is the file that keeps, for good, every ID the
	// removal log ever held and those a merge took out (RecordGone);
	// PurgeLog is the purge's tombstones, one ID a line. What they name, a
	// fold or an import never brings back (Gone).
	GoneLog, PurgeLog string
	// ArrivedLog, when set, records who brought each entry a merge took
	// from another clone (RecordArrived, Arrived).
	ArrivedLog string
	// Limits, when set (and with a StateDir), make Add run GC once a write
	// passes them.
	Limits *Limits
	// Conflicts, when set, lets a rewrite of a memory file that holds git
	// conflict markers merge its two sides by entry first (Unmark): the
	// entries the sides hold differently keep ours in the file and are
	// recorded there. Without it the file is rewritten as it parses. The
	// damaged bytes are backed up first either way.
	Conflicts ConflictLog
	// Locked, when set, runs each time the store has taken the writers'
	// lock (WithLock and every write), before the write's own work; its
	// error stops the write. The root package sets it on the store of an
	// operation that removes or replaces entries, to snapshot the memory
	// first under the same hold of the lock (a hook because package history
	// imports this one).
	Locked func() error
	// Appended, when set, runs after each append to the active file, under
	// the writers' lock, with the file and its state before and after: the
	// root package keeps the search index's stamp with it (a hook because
	// package searchidx imports this one). It cannot fail the append.
	Appended func(f *os.File, before, after os.FileInfo)
	// Changed, when set, runs at the end of each hold of the writers' lock
	// (WithLock and every write) in which the active file changed (its
	// inode, size or times), before the lock is released, with the file
	// open: the root package brings the search index up to date with it,
	// whatever wrote (an append, a rewrite, a rollback, a repair). It
	// cannot fail the write.
	Changed func(f *os.File)

	ctx context.Context // lock waits end when it is done (WithContext)
}

// WithContext returns a copy of the store whose lock waits also end when ctx
// is done (a caller that gives up, a deadline); the copy shares everything
// else with s.
func (s *Store) WithContext(ctx context.Context) *Store {
	c := *s
	c.ctx = ctx
	return &c
}

// Context is the context the store's lock waits honour (Background unless
// WithContext set one).
func (s *Store) Context() context.Context {
	if s.ctx != nil {
		return s.ctx
	}
	return context.Background()
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

func (s *Store) fileMode() os.FileMode { return s.FilePerm() }

func (s *Store) dirMode() os.FileMode { return s.DirPerm() }

// FilePerm is the mode of a file the store creates: FileMode (0644 when
// zero) without the umask's bits, shared as core.sharedRepository says
// (Shared). Every memory, lock, backup, temp and state file memsync creates
// in the home gets it.
func (s *Store) FilePerm() os.FileMode {
	base := s.FileMode
	if base == 0 {
		base = 0o644
	}
	return s.Shared.File(base)
}

// DirPerm is the mode of a folder the store creates: private (0700) when
// its files are, else 0755, without the umask's bits and shared as Shared
// says (setgid where the group shares it).
func (s *Store) DirPerm() os.FileMode {
	base := os.FileMode(0o755)
	if s.FileMode != 0 && s.FileMode&0o077 == 0 {
		base = 0o700
	}
	return s.Shared.Dir(base)
}

// Cap is the size cap of the active file: MaxBytes, or DefaultMaxBytes.
func (s *Store) Cap() int64 { return s.maxBytes() }

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

// PathError is an ErrUnsafePath: which path is refused, why, and the
// symlink that leads it astray.
type PathError struct {
	Path   string // the path memsync was to use
	Other  string // for an alias: the other path that is the same file
	Target string // where Path resolves
	Link   string // the symlink that leads astray ("" when there is none)
	Why    string // what is wrong, after the path
	notDir bool   // Target exists and is no regular file
}

func (e *PathError) Error() string {
	msg := "unsafe memory path: " + e.Path + " " + e.Why
	if e.Link != "" && e.Link != e.Path && e.Link != e.Other {
		msg += " (through the symlink " + e.Link + ")"
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrUnsafePath) work.
func (e *PathError) Unwrap() error { return ErrUnsafePath }

// Fix tells the user how to repair it.
func (e *PathError) Fix() string {
	if e.notDir {
		return "move " + e.Target + " out of the way (mv " + e.Target + " " + e.Target + ".old), then run 'memsync init'"
	}
	if e.Link != "" {
		return "remove the symlink " + e.Link + " (memsync never writes through a symlink that leaves the memory home or makes two of its files one), then run 'memsync init'"
	}
	return "move " + e.Path + " into the memory home, then run 'memsync init'"
}

// Fix tells the user how to repair a memory file memsync refused or failed
// to write (a PathError, another unsafe path, a file made read-only, a file
// or folder this user may not write, a full disk, an append it could not cut
// back, an entry holding a secret), or "" for any other error. Every front
// door gives this advice.
func Fix(err error) string {
	var pe *PathError
	var ae *fsutil.AppendError
	var fe *fs.PathError
	switch {
	case errors.As(err, &ae) && ae.Undo != nil:
		return fmt.Sprintf("'memsync doctor --fix' removes the torn entry, keeping the file in a backup (or cut it off by hand: truncate -s %d %s); then add it again", ae.Size, ae.Path)
	case fsutil.DiskFull(err):
		return "free some space on the disk that holds the memory, then run the command again: nothing was written"
	case errors.As(err, &fe) && errors.Is(err, fs.ErrPermission):
		return permissionFix(fe.Path)
	case errors.As(err, &pe):
		return pe.Fix()
	case errors.Is(err, ErrUnsafePath):
		return "memsync never writes through a link that leaves the memory home; remove the link, then run 'memsync worktree link'"
	case errors.Is(err, ErrControl):
		return "a title, type or tag is one line of plain text: leave out the escape or control character (content may hold tabs and newlines)"
	case errors.Is(err, ErrReadOnly):
		return "memsync writes no memory file you made read-only; to let it write again, run chmod u+w on that file"
	case errors.Is(err, memfile.ErrSecret):
		return memfile.SecretHint
	}
	return ""
}

// permissionFix is the advice for a file or folder this user may not write
// (EACCES, EPERM): another user made it, without write access for the group.
func permissionFix(path string) string {
	chmod := "chmod g+w " + path
	if fi, err := os.Stat(path); err != nil || fi.IsDir() {
		dir := path
		if err != nil {
			dir = filepath.Dir(path)
		}
		chmod = "chmod g+ws " + dir
	}
	return "you may not write " + path + ", which another user made; where users share the repository through a group, its owner runs '" + chmod +
		"' and 'git config core.sharedRepository group' (memsync and git then create shared files and folders), and the repository's files belong to that group (chgrp); else run memsync as the owner"
}

// Load reads the active file under the readers' lock. A missing file is an
// empty memory.
func (s *Store) Load() (*memfile.File, error) {
	return s.load(s.Path(), true)
}

// LoadArchive reads the archive under the readers' lock.
func (s *Store) LoadArchive() (*memfile.File, error) {
	return s.load(s.ArchivePath(), true)
}

// Reload is Load for a caller that keeps the file it loaded last, prev, and
// never changes it (a server answering reads): when the memory file still
// holds the bytes prev was parsed from, it returns prev itself rather than
// parsing them again. The file is read and compared on every call, so every
// change is seen at once.
func (s *Store) Reload(prev *memfile.File) (*memfile.File, error) {
	return s.loadReusing(s.Path(), true, prev)
}

// ReloadArchive is Reload for the archive.
func (s *Store) ReloadArchive(prev *memfile.File) (*memfile.File, error) {
	return s.loadReusing(s.ArchivePath(), true, prev)
}

func (s *Store) load(path string, locked bool) (*memfile.File, error) {
	return s.loadReusing(path, locked, nil)
}

// loadReusing is load that returns prev when the file holds the bytes prev
// was parsed from.
func (s *Store) loadReusing(path string, locked bool, prev *memfile.File) (*memfile.File, error) {
	var f *memfile.File
	err := s.read(path, locked, func(data []byte) error {
		switch {
		case data == nil:
			f = &memfile.File{Preamble: memfile.Header + "\n"}
		case prev != nil && prev.Source() != nil && bytes.Equal(prev.Source(), data):
			f = prev
		default:
			f = memfile.ParseOwned(data)
		}
		return nil
	})
	return f, err
}

// ViewActive calls fn with the active file open for reading (nil when
// there is none), under the readers' lock, which it holds while fn runs: no
// writer changes the file meanwhile. fn must not call the Store's locking
// methods.
func (s *Store) ViewActive(fn func(f *os.File) error) error {
	target, err := s.Resolve(s.Path())
	if err != nil {
		return err
	}
	return s.readLocked(true, func() error {
		f, err := os.Open(target)
		if errors.Is(err, os.ErrNotExist) {
			return fn(nil)
		}
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		return fn(f)
	})
}

// read is the one read of a memory file: resolved, under the readers' lock
// (locked) held while fn runs on its bytes, nil for a missing file.
func (s *Store) read(path string, locked bool, fn func(data []byte) error) error {
	target, err := s.Resolve(path)
	if err != nil {
		return err
	}
	return s.readLocked(locked, func() error {
		data, err := hugepage.ReadFile(target)
		if errors.Is(err, os.ErrNotExist) {
			return fn(nil)
		}
		if err != nil {
			return err
		}
		return fn(data)
	})
}

// readLocked runs fn under the readers' lock (when locked).
func (s *Store) readLocked(locked bool, fn func() error) error {
	if locked {
		lp, err := s.readLockPath()
		if err != nil {
			return err
		}
		if _, err := os.Stat(s.Home); err == nil {
			// A reader that cannot create the lock file (a read-only
			// checkout) reads without it: appends are single writes and
			// rewrites are renames, so it still never sees a mixed file.
			_ = s.createLockFile(lp)
			l, err := lock.Shared(s.Context(), lp, s.LockTimeout)
			switch {
			case err == nil:
				defer func() { _ = l.Release() }()
			case errors.Is(err, lock.ErrTimeout):
				return err
			}
		}
	}
	return fn()
}

// WithLock runs fn holding the writers' lock, creating the home if needed.
// It is for work that must not interleave with other writers and that reads
// or writes the memory files itself (a snapshot, a rollback): fn must not
// call the Store's own locking methods (Load, Append, Update), since the lock
// is not reentrant.
func (s *Store) WithLock(fn func() error) error {
	if err := fsutil.MkdirAll(s.Home, s.dirMode()); err != nil {
		return err
	}
	lp, err := s.LockPath()
	if err != nil {
		return err
	}
	if err := s.createLockFile(lp); err != nil {
		return err
	}
	l, err := lock.Exclusive(s.Context(), lp, s.LockTimeout)
	if err != nil {
		return err
	}
	defer func() { _ = l.Release() }()
	if s.Changed != nil {
		if target, err := s.Resolve(s.Path()); err == nil {
			before, _ := os.Stat(target)
			defer s.changed(target, before)
		}
	}
	if s.Locked != nil {
		if err := s.Locked(); err != nil {
			return err
		}
	}
	return fn()
}

// changed runs Changed when the active file, target, is no longer in the
// state before.
func (s *Store) changed(target string, before os.FileInfo) {
	f, err := os.Open(target)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	after, err := f.Stat()
	if err != nil || before != nil && os.SameFile(before, after) && before.Size() == after.Size() &&
		before.ModTime().Equal(after.ModTime()) && sameChange(before, after) {
		return
	}
	s.Changed(f)
}

// sameChange reports whether two states of a file have the same change time.
func sameChange(a, b os.FileInfo) bool {
	x, ok1 := fsutil.ChangeTime(a)
	y, ok2 := fsutil.ChangeTime(b)
	return ok1 && ok2 && x == y
}

// createLockFile creates the lock file lp, when it is missing, with the
// store's file mode (the lock package would create it with the umask's).
func (s *Store) createLockFile(lp string) error {
	if _, err := os.Lstat(lp); err == nil {
		return nil
	}
	f, err := fsutil.OpenFile(lp, os.O_RDONLY|os.O_CREATE, s.fileMode())
	if err != nil {
		return err
	}
	return f.Close()
}

// Validate checks an entry before it is written: text that would break the
// file or that is binary (or a field name the file would not read back as
// one) is refused, and so is an entry over the size limit
// or one that holds a secret (CheckSecrets). It first sets the content's
// line ends as a read of the file gives them back ("\r\n" as "\n"), so the
// entry a write returns is the one stored.
func (s *Store) Validate(e *memfile.Entry) error {
	e.Content, _ = memfile.LineEnds(e.Content)
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
	for _, f := range e.Extra {
		if f.Key != memfile.StrayKey && !memfile.ValidKey(f.Key) {
			return fmt.Errorf("%w: a field name is letters, digits, spaces, '-' and '_' (at most 40, none at the edges): %q", ErrInvalid, f.Key)
		}
	}
	if e.Type != "" && strings.Contains(e.Type, ":") {
		return fmt.Errorf("%w: a type cannot contain a colon: %q", ErrInvalid, e.Type)
	}
	binary := func(v string) bool { return strings.IndexByte(v, 0) >= 0 || !utf8.ValidString(v) }
	for _, v := range []string{e.Title, e.Content} {
		if binary(v) {
			return fmt.Errorf("%w: content is binary (NUL bytes or invalid UTF-8)", ErrInvalid)
		}
	}
	for _, f := range e.Extra {
		if binary(f.Value) {
			what := "a line of the entry"
			if f.Key != memfile.StrayKey {
				what = "the " + f.Key + " bullet"
			}
			return fmt.Errorf("%w: %s is binary (NUL bytes or invalid UTF-8)", ErrInvalid, what)
		}
	}
	for name, v := range map[string]string{"title": e.Title, "type": e.Type, "tags": strings.Join(e.Tags, ",")} {
		if i := strings.IndexFunc(v, memfile.Control); i >= 0 {
			return fmt.Errorf("%w: the %s holds the %w %U", ErrInvalid, name, ErrControl, []rune(v[i:])[0])
		}
	}
	if n := len(memfile.RenderEntry(e, memfile.Orch)); n > s.maxEntryBytes() {
		return fmt.Errorf("%w: entry is %d bytes, the limit is %d bytes", ErrTooLarge, n, s.maxEntryBytes())
	}
	return memfile.CheckSecrets(e)
}

// NewEntry fills in what a new entry needs: an ID, the date, a title. Tags
// are kept as a read gives them back: without edge spaces, none empty.
func (s *Store) NewEntry(typ, title, content string, tags []string) memfile.Entry {
	var clean []string
	for _, t := range tags {
		if t = strings.TrimSpace(t); t != "" {
			clean = append(clean, t)
		}
	}
	e := memfile.Entry{ID: memfile.NewID(), Title: strings.TrimSpace(title), Tags: clean, Content: content, Date: s.now().Format("2006-01-02")}
	e.SetType(typ)
	if e.Title == "" {
		e.Title = memfile.TitleFrom(content)
	}
	return e
}

// CheckDialect refuses, before a write, an entry the active file's dialect
// cannot keep (an ErrInvalid; see ralphRefuses). Append checks again under
// the lock.
func (s *Store) CheckDialect(e *memfile.Entry) error {
	d, err := s.Dialect()
	if err != nil || d != memfile.Ralph {
		return err
	}
	return memfile.RalphRefuses(e)
}

// Dialect is the dialect of the active file as Append sees it, from the
// file's head; Orch for a file not yet written.
func (s *Store) Dialect() (memfile.Dialect, error) {
	target, err := s.Resolve(s.Path())
	if err != nil {
		return memfile.Orch, err
	}
	f, err := os.Open(target)
	if errors.Is(err, fs.ErrNotExist) {
		return memfile.Orch, nil
	} else if err != nil {
		return memfile.Orch, err
	}
	defer func() { _ = f.Close() }()
	head := make([]byte, sniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return memfile.Orch, err
	}
	return memfile.SniffDialect(head[:n]), nil
}
