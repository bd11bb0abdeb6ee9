package memfile

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/hugepage"
	"github.com/memsync/memsync/internal/termsafe"
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
	ErrInvalid = errors.New("invalid entry")
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
	// state.go); empty means no state: no access recording and no dedup.
	StateDir string
	// RemovalLog, when set, is the file where every rewrite records the IDs
	// it takes out of a memory file (see removals.go); it lies in StateDir.
	RemovalLog string
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
	// Locked, when set, runs each time the store has taken the writers'
	// lock (WithLock and every write), before the write's own work; its
	// error stops the write. The root package sets it on the store of an
	// operation that removes or replaces entries, to snapshot the memory
	// first under the same hold of the lock (a hook because package history
	// imports this one).
	Locked func() error

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
	case errors.Is(err, ErrSecret):
		return SecretHint
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

// Resolve returns the real path of a file in the home (symlinks followed,
// also a dangling one), and refuses one that lies outside the home or that
// exists and is no regular file (a folder, a pipe).
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
	target = filepath.Join(resolveDir(filepath.Dir(target)), filepath.Base(target))
	home := filepath.Clean(s.Home)
	// The home's own parents are resolved too (where a caller passed them
	// unresolved), the home itself not: a .agent that is a link out of the
	// worktree leads outside.
	homeReal := filepath.Join(resolveDir(filepath.Dir(home)), filepath.Base(home))
	if !within(home, target) && !within(homeReal, target) {
		return "", &PathError{Path: path, Target: target, Link: s.LinkOn(path),
			Why: "resolves outside the memory home " + home + ", to " + target}
	}
	if fi, err := os.Stat(target); err == nil && !fi.Mode().IsRegular() {
		kind := "not a regular file"
		if fi.IsDir() {
			kind = "a directory"
		}
		return "", &PathError{Path: path, Target: target, notDir: true, Why: "is " + kind + ", not a memory file"}
	}
	return target, nil
}

// within tells whether path lies strictly inside dir (both clean).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolveDir resolves the symlinks of a folder that may not exist yet: its
// nearest existing ancestor is resolved and the rest joined to it, so a
// folder memsync would create under a symlink (also a dangling one) is
// judged where it would land.
func resolveDir(dir string) string {
	for range 40 {
		rest := ""
		d := dir
		for {
			if real, err := filepath.EvalSymlinks(d); err == nil {
				return filepath.Join(real, rest)
			}
			if fi, err := os.Lstat(d); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				break // a dangling link: follow it by hand
			}
			if filepath.Dir(d) == d {
				return dir
			}
			rest = filepath.Join(filepath.Base(d), rest)
			d = filepath.Dir(d)
		}
		dest, err := os.Readlink(d)
		if err != nil {
			return dir
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(d), dest)
		}
		dir = filepath.Join(dest, rest)
	}
	return dir
}

// LinkOn returns the first symlink on the way to path, from the memory home
// down (the home itself, a folder in it, the file), "" when there is none:
// the link to name when path resolves where it must not.
func (s *Store) LinkOn(path string) string {
	home := filepath.Clean(s.Home)
	steps := []string{filepath.Dir(path), path}
	if rel, err := filepath.Rel(home, path); err == nil && !strings.HasPrefix(rel, "..") {
		steps = []string{home}
		for at, part := home, strings.Split(rel, string(filepath.Separator)); len(part) > 0 && rel != "."; part = part[1:] {
			at = filepath.Join(at, part[0])
			steps = append(steps, at)
		}
	}
	for _, p := range steps {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return p
		}
	}
	return ""
}

// paths are the files of a store, resolved and checked.
type paths struct{ memory, archive, lock string }

// PathProblems checks every path the store writes: the active file, the
// archive and the lock each resolve inside the home and are no folder, and
// no two of them are the same file. It returns one *PathError per problem.
func (s *Store) PathProblems() []error {
	_, errs := s.checkPaths()
	return errs
}

func (s *Store) checkPaths() (paths, []error) {
	var p paths
	var errs []error
	names := []string{s.Path(), s.ArchivePath(), ""}
	real := []*string{&p.memory, &p.archive, &p.lock}
	for i := range names {
		if i == 2 {
			if p.memory == "" {
				break // the lock is beside the resolved active file
			}
			names[2] = lock.PathFor(p.memory)
		}
		t, err := s.Resolve(names[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		*real[i] = t
	}
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if *real[i] == "" || *real[j] == "" || !sameFile(*real[i], *real[j]) {
				continue
			}
			a, b := names[i], names[j]
			if s.LinkOn(b) != "" && s.LinkOn(a) == "" {
				a, b = b, a
			}
			errs = append(errs, &PathError{Path: a, Other: b, Target: *real[i], Link: s.LinkOn(a),
				Why: "and " + b + " are the same file (" + *real[i] + "); memsync never writes one through the other"})
		}
	}
	return p, errs
}

// sameFile tells whether two resolved paths are one file (one name, or hard links).
func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// resolvePaths is checkPaths' first problem as an error.
func (s *Store) resolvePaths() (paths, error) {
	p, errs := s.checkPaths()
	if len(errs) > 0 {
		return p, errs[0]
	}
	return p, nil
}

// LockPath is the one lock file of the home: beside the resolved active file,
// itself resolved. A symlink there is followed while it stays in the home (a
// worktree's lock link), and refused when it leaves the home or when the
// lock, the active file and the archive are not three files.
func (s *Store) LockPath() (string, error) {
	p, err := s.resolvePaths()
	return p.lock, err
}

// readLockPath is the lock a reader takes: beside the resolved active file,
// resolved inside the home, not the memory file itself. Unlike LockPath it
// does not judge the archive, so a bad archive link never stops a read of
// the active memory.
func (s *Store) readLockPath() (string, error) {
	mem, err := s.Resolve(s.Path())
	if err != nil {
		return "", err
	}
	lp, err := s.Resolve(lock.PathFor(mem))
	if err != nil {
		return "", err
	}
	if sameFile(lp, mem) {
		return s.LockPath() // names the alias
	}
	return lp, nil
}

// StaleTemps lists the temp files that killed rewrites left beside the
// active file and the archive (and their backups) and in StateDir: those no
// live process is writing (see fsutil.StaleTemps).
func (s *Store) StaleTemps() ([]string, error) {
	var out []string
	seen := map[string]bool{}
	dirs := []string{}
	for _, p := range []string{s.Path(), s.ArchivePath()} {
		if t, err := s.Resolve(p); err == nil {
			dirs = append(dirs, filepath.Dir(t))
		}
	}
	if s.StateDir != "" {
		dirs = append(dirs, s.StateDir)
	}
	for _, dir := range dirs {
		if seen[dir] {
			continue
		}
		seen[dir] = true
		stale, err := fsutil.StaleTemps(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, stale...)
	}
	return out, nil
}

// RemoveStaleTemps removes StaleTemps under the writers' lock, so no memsync
// rewrite is under way, and returns the files it removed.
func (s *Store) RemoveStaleTemps() ([]string, error) {
	var removed []string
	err := s.WithLock(func() error {
		stale, err := s.StaleTemps()
		for _, p := range stale {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			removed = append(removed, p)
		}
		return err
	})
	return removed, err
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
		lp, err := s.readLockPath()
		if err != nil {
			return nil, err
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
	if s.Locked != nil {
		if err := s.Locked(); err != nil {
			return err
		}
	}
	return fn()
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
// file or that is binary is refused, and so is an entry over the size limit
// or one that holds a secret (CheckSecrets).
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
	for name, v := range map[string]string{"title": e.Title, "type": e.Type, "tags": strings.Join(e.Tags, ",")} {
		if i := strings.IndexFunc(v, Control); i >= 0 {
			return fmt.Errorf("%w: the %s holds the %w %U", ErrInvalid, name, ErrControl, []rune(v[i:])[0])
		}
	}
	if n := len(RenderEntry(e, Orch)); n > s.maxEntryBytes() {
		return fmt.Errorf("%w: entry is %d bytes, the limit is %d bytes", ErrTooLarge, n, s.maxEntryBytes())
	}
	return CheckSecrets(e)
}

// NewEntry fills in what a new entry needs: an ID, the date, a title. Tags
// are kept as a read gives them back: without edge spaces, none empty.
func (s *Store) NewEntry(typ, title, content string, tags []string) Entry {
	var clean []string
	for _, t := range tags {
		if t = strings.TrimSpace(t); t != "" {
			clean = append(clean, t)
		}
	}
	e := Entry{ID: NewID(), Type: NormalizeType(typ), Title: strings.TrimSpace(title), Tags: clean, Content: content, Date: s.now().Format("2006-01-02")}
	if e.Title == "" {
		e.Title = TitleFrom(content)
	}
	return e
}

// Control tells a character other than a tab that a terminal or a viewer
// would act on (a terminal escape, a bell, C1, a bidi override, a line
// separator; termsafe.Unsafe): one a one-line field may not hold.
func Control(r rune) bool { return r != '\t' && termsafe.Unsafe(r) }

// TitleFrom makes a heading from content: its first line, shortened,
// without control characters (a terminal escape in pasted output).
func TitleFrom(content string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(content), "\n")
	first = strings.Map(func(r rune) rune {
		if Control(r) {
			return -1
		}
		return r
	}, first)
	first = strings.Join(strings.Fields(first), " ")
	if r := []rune(first); len(r) > 60 {
		first = strings.TrimSpace(string(r[:59])) + "…"
	}
	return first
}

// sniffBytes is how much of the head of a file Append reads to know its dialect.
const sniffBytes = 4096

// Append adds an entry with one O_APPEND write and an fsync, under the
// writers' lock; its cost does not depend on the file's size. In a ralph
// file the entry gets a "mem-<unix>-<hex4>" ID no entry of the file has
// (the file is read, not parsed, to check it) and goes to its section: an
// append where that is the file's last section, else one atomic rewrite. A
// file holding both dialects is rewritten in one (see Parse). At the size
// cap the oldest entries move to the archive first, with a warning.
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
	dialect := SniffDialect(head)
	rewrite := size+int64(len(RenderEntry(&e, dialect)))+2 > s.maxBytes()
	if dialect == Ralph {
		if err := ralphRefuses(&e); err != nil {
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
		e.ToRalph(uniqueRalphID(data, s.now()))
		last, pure := ralphLastSection(data)
		rewrite = rewrite || !pure || last != ralphSection(e.Type)
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
		return e, true, s.rewriteLocked(func(f *File) error {
			if f.Dialect == Ralph {
				if validRalphID(e.ID) {
					taken := make(map[string]bool, len(f.Entries))
					for i := range f.Entries {
						taken[f.Entries[i].ID] = true
					}
					for taken[e.ID] {
						e.ID = NewRalphID(s.now())
					}
				} else { // an orch head, but mostly ralph's entries
					if err := ralphRefuses(&e); err != nil {
						return err
					}
					e.ID = ""
					e.ToRalph(uniqueRalphID(f.Render(), s.now()))
				}
			}
			f.Entries = append(f.Entries, e) // last in its section, as an append puts it
			return s.enforceCapLocked(f, e.ID)
		})
	}
	rec := RenderEntry(&e, dialect)
	crlf := firstLineCRLF(head)
	prefix, err := separator(f, size, crlf)
	if err != nil {
		return e, false, err
	}
	text := prefix + rec
	if crlf { // the file's own line ends, as a rewrite would write them
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	return e, false, fsutil.Append(f, []byte(text))
}

// separator is what goes before an appended entry so that it starts a new
// block: the header for an empty file, else enough newlines for one blank
// line (written "\n"; crlf: the file's line ends are "\r\n").
func separator(f *os.File, size int64, crlf bool) (string, error) {
	if size == 0 {
		return Header + "\n", nil
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
	if err := s.CheckWritable(path); err != nil {
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
	if renamed := f.Normalize(); len(renamed) > 0 {
		for _, r := range renamed {
			s.warn("%s:%d: entry %q has the ID %s of an earlier entry; it gets the new ID %s", path, r.Line, r.Heading, r.Old, r.New)
		}
		// The content index maps hashes to the old IDs: rebuild it.
		s.invalidateIndex()
	}
	var before []Entry
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
	if unmarked || slices.ContainsFunc(f.Problems, func(p Problem) bool { return !IsDuplicateIDProblem(p) }) {
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
	ps := Damage(data)
	if len(ps) == 0 || HasConflictMarkers(data) {
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

// DuplicateIDs returns the indexes of the entries whose ID an earlier entry
// of f already has (doctor reports them; a rewrite gives them new IDs).
func DuplicateIDs(f *File) []int {
	var dups []int
	seen := make(map[string]bool, len(f.Entries))
	for i := range f.Entries {
		if seen[f.Entries[i].ID] {
			dups = append(dups, i)
		}
		seen[f.Entries[i].ID] = true
	}
	return dups
}

// Renamed is an entry Normalize gave a new ID: it repeated the ID of an
// earlier entry.
type Renamed struct {
	Line     int
	Heading  string
	Old, New string
}

// Normalize does to f what every rewrite does before it writes: entries of
// the other dialect are converted to the file's (a ralph file's entries get
// ralph IDs), and each entry whose ID an earlier entry already has gets a new
// one (returned, for a warning). After it, Render(Parse(Render())) is Render().
func (f *File) Normalize() []Renamed {
	for _, p := range f.Problems {
		if IsDialectProblem(p) {
			f.ConvertDialect()
			break
		}
	}
	dups := DuplicateIDs(f)
	if len(dups) == 0 {
		return nil
	}
	taken := make(map[string]bool, len(f.Entries))
	for i := range f.Entries {
		taken[f.Entries[i].ID] = true
	}
	out := make([]Renamed, 0, len(dups))
	for _, i := range dups {
		e := &f.Entries[i]
		r := Renamed{Line: e.Line, Heading: e.Heading(), Old: e.ID}
		e.ID = freshID(e, f.Dialect, taken)
		e.derived = false
		r.New = e.ID
		out = append(out, r)
	}
	return out
}

// freshID is a new ID for e, not in taken (which it joins), derived from
// e's old ID and text; in ralph's dialect it keeps ralph's "mem-<unix>-<hex>" form.
func freshID(e *Entry, d Dialect, taken map[string]bool) string { return FreshID(e, d, taken) }

// FreshID is a new ID for e that taken lacks (and adds it there), derived
// from e's ID, title and content, so that two processes renaming the same
// entry against the same taken set agree; in ralph's dialect it keeps
// ralph's mem-<unix>-<4 hex> shape and e's time.
func FreshID(e *Entry, d Dialect, taken map[string]bool) string {
	seed := e.ID + "\x00" + e.Title + "\x00" + e.Content
	for n := 1; ; n++ {
		id := deriveID(seed, n)
		if d == Ralph {
			unix := strings.TrimPrefix(e.ID, "mem-")
			if unix, _, _ = strings.Cut(unix, "-"); unix == "" {
				unix = "0"
			}
			sum := sha256.Sum256([]byte(id))
			id = "mem-" + unix + "-" + hex.EncodeToString(sum[:2])
		}
		if !taken[id] {
			taken[id] = true
			return id
		}
	}
}

// enforceCapLocked moves the oldest entries to the archive until the active
// file is under 90% of the cap, never the entry with the ID spare (the one
// just written) and never the last one left. The oldest come first in orch's
// file; in ralph's, those with the oldest time in their ID. The archive is
// written first.
func (s *Store) enforceCapLocked(f *File, spare string) error {
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
	if f.Dialect == Ralph { // oldest first: ralph adds first in a section, memsync last
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ralphUnix(f.Entries[a].ID), ralphUnix(f.Entries[b].ID)) })
	}
	if len(order) == len(f.Entries) && len(order) > 0 {
		order = order[:len(order)-1] // no spare: the newest stays
	}
	var picked []int
	for _, i := range order {
		if size <= goal {
			break
		}
		size -= int64(len(RenderEntry(&f.Entries[i], f.Dialect)) + 1)
		picked = append(picked, i)
	}
	out := make([]Entry, 0, len(picked))
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
func (s *Store) archiveLocked(entries []Entry) (map[string]*Entry, []Entry, error) {
	if len(entries) == 0 {
		return nil, nil, nil
	}
	var have map[string]*Entry
	var landed []Entry
	err := s.rewritePathLocked(s.ArchivePath(), func(a *File) error {
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
func (s *Store) land(path string, dst *File, entries []Entry) (map[string]*Entry, []Entry) {
	taken := make(map[string]bool, len(dst.Entries)+len(entries))
	for i := range dst.Entries {
		taken[dst.Entries[i].ID] = true
	}
	byID := func() map[string]*Entry {
		m := make(map[string]*Entry, len(dst.Entries))
		for i := range dst.Entries {
			m[dst.Entries[i].ID] = &dst.Entries[i]
		}
		return m
	}
	have := byID()
	landed := make([]Entry, 0, len(entries))
	dst.Entries = slices.Grow(dst.Entries, len(entries))
	for _, e := range entries {
		if d, ok := have[e.ID]; ok {
			if sameStoredEntry(d, &e) {
				landed = append(landed, *d)
				continue
			}
			old := e.ID
			e.ID = freshID(&e, dst.Dialect, taken)
			e.derived = false
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
func sameStoredEntry(a, b *Entry) bool {
	return a.ID == b.ID && ContentHash(a.Content) == ContentHash(b.Content)
}
