// Package memsync is the shared, durable memory of a git repository's AI
// agents, as a library: one Open builds the memory, and every front door —
// the memsync command, its git hooks, the MCP server, the seed-002 agent API
// and a Go program embedding memsync — works through the *Memory it returns,
// so each gets the same guarantees: one lock, dedup, private global files,
// limits, the conflict log, access recording and a clean git status.
//
//	m, err := memsync.Open(".", memsync.Options{})
//	if err != nil { ... }
//	defer m.Close()
//	e, err := m.Add(ctx, memsync.Entry{Type: "pattern", Tags: []string{"db"}, Content: "…"})
//	hits, err := m.Search(ctx, "database pool", memsync.SearchOptions{Limit: 5})
package memsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/memsync/memsync/embed"
	"github.com/memsync/memsync/hooks"
	"github.com/memsync/memsync/internal/config"
	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/internal/searchidx"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/worktree"
)

// Options set up a Memory. A zero value means: the environment variable
// named beside the field where it is set, else the configuration files
// (orch.yml's memories block, .agent/memsync.yml) where they set it, else
// memsync's default — the same order for every front door.
type Options struct {
	// Global opens the global layer instead of the repository's memory:
	// $MEMSYNC_GLOBAL_DIR, else $XDG_DATA_HOME/memsync, else
	// ~/.local/share/memsync.
	Global bool
	// Session scopes the memory: entries added get a "- Session:" bullet, and
	// reads (and the duplicate check) see the session's entries and those of
	// no session. It is one line of printable text (else a ConfigError).
	Session string
	// Role is owner, admin or worker (docs/commands.md: Roles); MEMSYNC_ROLE; default
	// owner.
	Role string
	// LockTimeout bounds a wait for the memory lock; MEMSYNC_LOCK_TIMEOUT;
	// default 10s. A negative one is a ConfigError.
	LockTimeout time.Duration
	// SyncTimeout bounds each git fetch and push of Sync and Purge when
	// their own Timeout is zero; MEMSYNC_SYNC_TIMEOUT; default 2m.
	SyncTimeout time.Duration
	// MaxBytes is the size cap of the active file; MEMSYNC_MAX_BYTES; default
	// 10 MB. A negative one is a ConfigError.
	MaxBytes int64
	// MaxEntries and TTLDays are gc's limits; MCP_MEMORY_MAX_ENTRIES and
	// MCP_MEMORY_TTL_DAYS (the MCP server's names); default 1000 entries, 90 days.
	// nil is unset; new(0) is no maximum, and a TTL of 0 days (every entry
	// not accessed since now expires).
	MaxEntries *int
	TTLDays    *int
	// NoAccessLog turns off recording which entries were returned to a
	// reader (gc's TTL counts from the last access); MEMSYNC_RECORD_ACCESS=0.
	NoAccessLog bool
	// Embedder, if set, fuses meaning into search and inject: a second
	// ranking by the cosine of entry and query vectors (package embed),
	// merged with the lexical one.
	Embedder embed.Embedder
	// Model is the folder of a Model2Vec model to use as the Embedder when
	// none is set; MEMSYNC_MODEL; the configuration's model key. It is read
	// at the first search, never by Open or a write.
	Model string
	// Detach, when set, starts in the background the packing of the
	// repository's object store that a snapshot or sync leaves due, given
	// the repository's common git dir, so the call need not wait for it;
	// the memsync command starts `memsync -C DIR maintain` detached from
	// its terminal, as git's gc --auto does. nil, an error from it, or git's
	// maintenance.autoDetach (else gc.autoDetach) set to false: the call
	// packs before it returns. See Maintain.
	Detach func(gitDir string) error
	// Warn receives messages that are no errors (a size cap reached, a
	// backup written, a damaged line, a link git removed and Open put
	// back); nil drops them. It may run while the call that warns holds
	// the memory's lock, so it must not call the Memory back (such a call
	// waits for the lock until LockTimeout and fails): hand the message on.
	Warn func(msg string)

	// inHook is a git hook's own Open: what background hooks left in the
	// state dir's hooks.log stays there for the next command to say.
	inHook bool
}

// Memory is one memory: a repository's (its primary worktree's .agent/) or
// the global layer. Its methods are safe for use by several goroutines and,
// through the file lock, by several processes.
type Memory struct {
	repo        *worktree.Repo // nil for the global layer
	store       *store.Store
	role        policy.Role
	cfg         config.Config
	session     string
	noAccess    bool
	warn        func(string)
	cache       cache
	embedder    func() (embed.Embedder, error) // nil: lexical search only
	opts        Options                        // as Open got them, after the environment (Promote opens the global layer with them)
	conflictLog string                         // where conflicts are recorded: <git common dir>/memsync/conflicts.json, or the global layer's state/conflicts.json
	near        nearSets                       // similarity sets of the active file (near.go)
	// index is the search index's upkeep: a sync defers it (see
	// Memory.sync), so that it runs while git pushes.
	index indexUpkeep
}

// ErrNotFound is what a reference that names no entry (or conflict, or
// snapshot entry) returns, wrapped; ErrAmbiguous what an ID prefix that
// names more than one returns.
var (
	ErrNotFound  = memfile.ErrNotFound
	ErrAmbiguous = memfile.ErrAmbiguous
)

// MaxEntryBytes is the size of the largest entry memsync stores, as the
// memory file spells it.
const MaxEntryBytes = store.DefaultMaxEntryBytes

// ErrUnknownRole is what Open returns (wrapped) for an Options.Role (or
// MEMSYNC_ROLE) that is not owner, admin or worker.
var ErrUnknownRole = policy.ErrUnknownRole

// ErrNoRepository is what Open returns (wrapped) when it finds no git
// repository at dir (Options.Global opens the global layer instead).
var ErrNoRepository = worktree.ErrNotRepo

// Open returns the memory of the git repository that contains dir (any
// worktree or subfolder; "" is the current folder), or the global layer with
// Options.Global. Where the memory's links are in place it reads files
// only: no git process is spawned. A worktree's link that git's own
// commands removed or replaced (or a new worktree's, made without the
// hooks) it puts back, saying so through Options.Warn; that asks git
// whether the worktree tracks the memory file.
func Open(dir string, o Options) (*Memory, error) {
	if err := o.fromEnv(os.Getenv); err != nil {
		return nil, &ConfigError{err}
	}
	switch {
	case o.LockTimeout < 0: // as the environment's are refused
		return nil, &ConfigError{fmt.Errorf("the lock timeout %s is negative", o.LockTimeout)}
	case o.SyncTimeout < 0:
		return nil, &ConfigError{fmt.Errorf("the sync timeout %s is negative", o.SyncTimeout)}
	case o.MaxBytes < 0:
		return nil, &ConfigError{fmt.Errorf("the size cap %d is negative", o.MaxBytes)}
	}
	if !printableLine(o.Session) { // every added entry's Session bullet
		return nil, &ConfigError{fmt.Errorf("the session %q is not one line of printable text", o.Session)}
	}
	if o.Role != "" { // before discovery: a bad role is a usage error wherever memsync runs
		if _, err := policy.Parse(o.Role); err != nil {
			return nil, err
		}
	}
	m := &Memory{session: o.Session, noAccess: o.NoAccessLog, warn: o.Warn, opts: o}
	if m.warn == nil {
		m.warn = func(string) {}
	}
	var home, state, conflicts, cfgDir string
	var mode os.FileMode
	var shared fsutil.Shared
	if o.Global {
		var err error
		if home, err = openGlobalDir(); err != nil {
			return nil, err
		}
		state = filepath.Join(home, "state")
		conflicts = filepath.Join(state, "conflicts.json")
		mode = 0o600
		cfgDir = home
	} else {
		repo, err := worktree.Discover(dir)
		if err != nil {
			return nil, err
		}
		m.repo = repo
		home, cfgDir = repo.Home, repo.WorkDir()
		shared = repo.Shared
		state = filepath.Join(repo.CommonDir, "memsync", "state")
		conflicts = history.ConflictLog(repo)
	}
	root, top := "", ""
	if m.repo != nil {
		root = m.repo.WorkTree
		if !m.repo.Bare {
			top = m.repo.Primary
		}
	}
	cfg, err := config.Load(root, cfgDir, top)
	if err != nil {
		return nil, &ConfigError{err}
	}
	m.cfg = cfg
	lim := store.DefaultLimits()
	switch {
	case o.MaxEntries != nil:
		lim.MaxEntries = *o.MaxEntries
	case cfg.MaxEntries > 0:
		lim.MaxEntries = cfg.MaxEntries
	}
	switch {
	case o.TTLDays != nil:
		lim.TTL = time.Duration(*o.TTLDays) * 24 * time.Hour
	case cfg.TTLDays > 0:
		lim.TTL = time.Duration(cfg.TTLDays) * 24 * time.Hour
	}
	role := o.Role
	if role == "" {
		role = cfg.Role
	}
	if m.role, err = policy.Parse(role); err != nil {
		return nil, err
	}
	m.store = &store.Store{
		Home:        home,
		LockTimeout: o.LockTimeout,
		MaxBytes:    o.MaxBytes,
		Warn:        m.warn,
		FileMode:    mode,
		Shared:      shared,
		StateDir:    state,
		Limits:      &lim,
	}
	if m.repo != nil { // only a repository's memory has snapshots to guard
		m.store.RemovalLog = filepath.Join(state, "removed")
		m.store.GoneLog = filepath.Join(state, "gone")
		m.store.ArrivedLog = filepath.Join(state, "arrived")
		m.store.PurgeLog = history.PurgedPath(m.repo)
	}
	m.store.Appended = func(f *os.File, before, after os.FileInfo) { searchidx.Appended(state, f, before, after) }
	m.store.Changed = func(f *os.File) {
		if !m.index.postpone() {
			searchidx.Changed(state, f, m.store.FilePerm(), m.store.DirPerm())
		}
	}
	m.conflictLog = conflicts
	m.store.Conflicts = merge.LogFile(conflicts)
	m.embedder = newEmbedder(o, cfg)
	if m.repo != nil {
		m.heal(false)
		if !o.inHook {
			m.reportHookWarnings()
		}
	}
	return m, nil
}

// heal repairs the memory links git's own commands remove or replace (see
// worktree.Heal) and says what it did through Warn; with create (a write)
// the links are made where the memory is new.
func (m *Memory) heal(create bool) {
	for _, msg := range worktree.Heal(m.repo, m.store, create) {
		m.warn(msg)
	}
	if other := worktree.OtherLayoutFile(m.repo); other != "" {
		m.warnOnce("other-layout", other, otherLayoutMessage(m.repo, other)+"; 'memsync doctor --fix' folds them in")
	}
}

// warnOnce warns msg unless the state dir records that it was said for
// the same subject (a path) as it is now (size and time of change).
func (m *Memory) warnOnce(name, subject, msg string) {
	fi, err := os.Stat(subject)
	if err != nil {
		return
	}
	seen := fmt.Sprintf("%s %d %d\n", subject, fi.Size(), fi.ModTime().UnixNano())
	marker := filepath.Join(m.store.StateDir, name+".seen")
	if old, err := fsutil.ReadOwn(marker, int64(len(seen))); err == nil && string(old) == seen {
		return
	}
	m.warn(msg)
	if fsutil.MkdirAll(m.store.StateDir, m.store.DirPerm()) == nil {
		_ = fsutil.WriteFile(marker, []byte(seen), m.store.FilePerm())
	}
}

// fromEnv fills the options left zero from the environment.
func (o *Options) fromEnv(getenv func(string) string) error {
	num := func(key string, dst **int) error {
		v := getenv(key)
		if *dst != nil || v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("environment: %s=%q is not a number (0 or more)", key, v)
		}
		*dst = &n
		return nil
	}
	if err := num("MCP_MEMORY_MAX_ENTRIES", &o.MaxEntries); err != nil {
		return err
	}
	if err := num("MCP_MEMORY_TTL_DAYS", &o.TTLDays); err != nil {
		return err
	}
	if v := getenv("MEMSYNC_MAX_BYTES"); o.MaxBytes == 0 && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("environment: MEMSYNC_MAX_BYTES=%q is not a number of bytes", v)
		}
		o.MaxBytes = n
	}
	if v := getenv("MEMSYNC_LOCK_TIMEOUT"); o.LockTimeout == 0 && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("environment: MEMSYNC_LOCK_TIMEOUT=%q is not a duration such as 10s", v)
		}
		o.LockTimeout = d
	}
	if v := getenv("MEMSYNC_SYNC_TIMEOUT"); o.SyncTimeout == 0 && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("environment: MEMSYNC_SYNC_TIMEOUT=%q is not a duration (2m, 30s)", v)
		}
		o.SyncTimeout = d
	}
	if o.Role == "" {
		o.Role = getenv("MEMSYNC_ROLE")
	}
	if o.Model == "" {
		o.Model = getenv("MEMSYNC_MODEL")
	}
	if getenv("MEMSYNC_RECORD_ACCESS") == "0" {
		o.NoAccessLog = true
	}
	return nil
}

// ConfigError is a setting memsync could not use: in a configuration file
// or the environment (Open), or an option (SetLayout, InjectOptions.Mode).
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }

// Unwrap returns the configuration's own error.
func (e *ConfigError) Unwrap() error { return e.Err }

// Close releases what the Memory holds. Nothing is held between calls today
// (every operation takes the lock and reads the file anew); Close is there so
// callers need not change when that does.
func (m *Memory) Close() error { return nil }

// WorkTree is the top of the worktree Open found dir in: "" for the global
// layer, and in a bare repository or a git folder.
func (m *Memory) WorkTree() string {
	if m.repo == nil {
		return ""
	}
	return m.repo.WorkTree
}

// Path is the active memory file.
func (m *Memory) Path() string { return m.store.Path() }

// ArchivePath is the archive file.
func (m *Memory) ArchivePath() string { return m.store.ArchivePath() }

// Session is the session the memory is scoped to ("" for none).
func (m *Memory) Session() string { return m.session }

// limits are gc's limits.
func (m *Memory) limits() store.Limits { return *m.store.Limits }

// st is the store for one call: its lock waits end when ctx is done.
func (m *Memory) st(ctx context.Context) *store.Store { return m.store.WithContext(ctx) }

// Allow refuses an operation the role may not do, before anything
// changes: op is named as the command line names it ("edit", "resolve",
// "delete", ...; see docs/commands.md: Roles). A front door checks before it asks a
// person for input (an editor), as every operation checks again.
func (m *Memory) Allow(op string) error {
	for _, o := range policy.Ops() {
		if o.String() == op {
			return m.allow(o)
		}
	}
	return fmt.Errorf("%w: no operation %q", memfile.ErrInvalid, op)
}

// allow refuses an operation the role may not do.
func (m *Memory) allow(op policy.Op) error { return m.role.Check(op) }

// beginWrite is the prologue of a write that removes or replaces entries
// (what names it in the snapshot's subject): the context is live, the role
// may do op, and the write will leave git status clean (beforeWrite). It
// returns the store to write through, which makes the write undoable
// (undoable).
func (m *Memory) beginWrite(ctx context.Context, op policy.Op, what string) (*store.Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := m.allow(op); err != nil {
		return nil, err
	}
	if err := m.beforeWrite(); err != nil {
		return nil, err
	}
	return m.undoable(ctx, what), nil
}

// undoable returns the store for a write that removes or replaces entries
// (delete, archive, restore, gc, promote, resolve; rollback and sync
// snapshot first in package history). Where the memory keeps history —
// memsync's hooks are installed, or the snapshot ref exists — the store
// snapshots the memory each time it takes the writers' lock, before the
// write changes anything and under the same hold of the lock, so no other
// writer comes between: 'memsync log' then shows every entry the write
// removes, and rollback brings it back. A snapshot that fails stops the
// write (a damaged history says to run 'memsync doctor --fix').
func (m *Memory) undoable(ctx context.Context, what string) *store.Store {
	st := m.st(ctx)
	if m.repo == nil {
		return st
	}
	h := history.Open(m.repo, m.st(ctx)) // its own copy of the store: no hook there
	if !hooks.Installed(m.repo) {
		if head, err := h.RefHash(history.Ref); err == nil && head == "" {
			return st // no history kept here (an unreadable ref goes on: the snapshot reports it)
		}
	}
	st.Locked = func() error {
		_, err := h.TakeLocked(ctx, "memsync snapshot before "+what, h.CurrentProvenance(""))
		if errors.Is(err, memfile.ErrSecret) {
			// A secret written into the file by hand is never snapshotted;
			// the write goes on (it may be the one that takes it out).
			m.warn("no snapshot before " + what + ": " + err.Error())
			return nil
		}
		return err
	}
	return st
}

// beforeWrite makes sure a write leaves git status clean: the memory files
// are in the common info/exclude (a read of one small file when they are
// already). Every write of a Memory runs it; it is exported for the adapters
// that still write through Store.
func (m *Memory) beforeWrite() error {
	if err := m.present(); err != nil {
		return err
	}
	if _, err := m.exclude(); err != nil {
		return err
	}
	if err := m.ensureRalphFile(); err != nil {
		return err
	}
	if m.repo != nil {
		m.heal(true)
	}
	return nil
}

// present refuses a write to a repository's memory when the repository
// was moved or deleted since Open: git always has a HEAD (it replaces it by
// a rename), and a write would make a ghost .git where nothing reads it.
func (m *Memory) present() error {
	if m.repo == nil {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(m.repo.CommonDir, "HEAD")); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s is gone (moved or deleted since the memory was opened); open it again where it is now", ErrNoRepository, m.repo.CommonDir)
	}
	return nil
}

// ralphTemplate is the file ralph-orchestrator starts a memory with; a
// memory in ralph's layout starts with it too, so both tools read and write
// it in ralph's dialect from the first entry.
const ralphTemplate = "# Memories\n\n## Patterns\n\n## Decisions\n\n## Fixes\n\n## Context\n"

// ensureRalphFile creates, in ralph's layout, a missing memory file as ralph
// does (under the writers' lock, the one ralph takes). It reports whether it
// created the file.
func (m *Memory) ensureRalphFile() error {
	_, err := m.createRalphFile()
	return err
}

func (m *Memory) createRalphFile() (bool, error) {
	if m.repo == nil || m.repo.Layout != worktree.LayoutRalph {
		return false, nil
	}
	target, err := m.store.Resolve(m.store.Path())
	if err != nil {
		return false, err
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	created := false
	err = m.store.WithLock(func() error {
		if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
			return nil
		}
		created = true
		return fsutil.WriteFile(target, []byte(ralphTemplate), m.store.FilePerm())
	})
	return created, err
}

// exclude adds the memory files to the common info/exclude, shared by every
// worktree, and returns the patterns it added (none when they were there).
func (m *Memory) exclude() ([]string, error) {
	if m.repo == nil {
		return nil, nil
	}
	added, err := worktree.EnsureExclude(m.repo, m.repo.Excludes())
	if err != nil {
		return nil, fmt.Errorf("update info/exclude: %w", err)
	}
	return added, nil
}

// globalDir is the memory home of the global layer, shared by all
// repositories of a user: $MEMSYNC_GLOBAL_DIR (an absolute path), else
// $XDG_DATA_HOME/memsync (a relative XDG_DATA_HOME is ignored, as the XDG
// base directory spec says), else ~/.local/share/memsync.
func globalDir() (string, error) {
	if d := os.Getenv("MEMSYNC_GLOBAL_DIR"); d != "" {
		if !filepath.IsAbs(d) {
			return "", &ConfigError{fmt.Errorf("environment: MEMSYNC_GLOBAL_DIR=%q is not an absolute path", d)}
		}
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "memsync"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("no home folder for the global memory; set MEMSYNC_GLOBAL_DIR to its folder")
	}
	return filepath.Join(home, ".local", "share", "memsync"), nil
}

// openGlobalDir creates the global memory home if needed (private: 0700) and
// returns it with symlinks resolved (globalDir's is absolute).
func openGlobalDir() (string, error) {
	dir, err := globalDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(dir)
}
