package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync/config"
	"github.com/memsync/memsync/history"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/memory"
	"github.com/memsync/memsync/merge"
	"github.com/memsync/memsync/policy"
	"github.com/memsync/memsync/worktree"
)

// session is what every command works with: the repository (nil for the
// global layer), the store of its memory home, and the output streams.
type session struct {
	repo   *worktree.Repo
	store  *memfile.Store
	json   bool
	stdout io.Writer
	stderr io.Writer
	role   policy.Role   // --role, MEMSYNC_ROLE, the configuration; default owner
	cfg    config.Config // the configuration files and environment, before flags
	scope  string        // --session, MEMSYNC_SESSION; "" is the whole project
	global bool          // the store is the global layer
	c      *cli.Context
}

// excludePatterns keep the memory files out of git status in every worktree.
var excludePatterns = worktree.ExcludePatterns

// openSession finds the memory home (discovery reads files only; no git is
// spawned here) and sets up the store with the command line's limits.
func openSession(c *cli.Context) (*session, error) { return openLayer(c, c.Bool("global")) }

// openLayer is openSession on the global layer or the project's memory.
func openLayer(c *cli.Context, global bool) (*session, error) {
	role, err := policy.Parse(c.String("role"))
	if err != nil {
		return nil, usageError{err}
	}
	s := &session{json: c.Bool("json"), stdout: c.App.Writer, stderr: c.App.ErrWriter, role: role, scope: c.String("session"), c: c}
	if global {
		s.global = true
		s.store, err = s.globalStore()
	} else {
		s.store, err = s.projectStore()
	}
	if err != nil {
		return nil, err
	}
	return s, s.applyConfig()
}

// applyConfig takes the role and gc's limits from the configuration files
// (orch.yml's memories block, .agent/memsync.yml) where neither a flag nor an
// environment variable sets them.
func (s *session) applyConfig() error {
	c := s.c
	root := ""
	if s.repo != nil {
		root = s.repo.WorkTree
	}
	cfg, err := config.Load(root, s.store.Home)
	if err != nil {
		return withHint(err, "fix the value in that file (memories: enabled true|false, inject auto|manual|none, budget TOKENS, filter: types, tags, recent_days; role, max_entries, ttl_days)")
	}
	s.cfg = cfg
	if !c.IsSet("role") && cfg.Role != "" {
		s.role = policy.Role(cfg.Role)
	}
	if !c.IsSet("max-entries") && cfg.MaxEntries > 0 {
		s.store.Limits.MaxEntries = cfg.MaxEntries
	}
	if !c.IsSet("ttl-days") && cfg.TTLDays > 0 {
		s.store.Limits.TTL = time.Duration(cfg.TTLDays) * 24 * time.Hour
	}
	return nil
}

// projectStore is the store of the repository's memory home; its state lives
// in the common git dir.
func (s *session) projectStore() (*memfile.Store, error) {
	if s.repo == nil {
		repo, err := worktree.Discover(s.c.String("C"))
		if err != nil {
			return nil, err
		}
		s.repo = repo
	}
	st := s.newStore(s.repo.Home, filepath.Join(s.repo.CommonDir, "memsync", "state"), 0)
	st.Unmark = merge.Hook(history.ConflictLog(s.repo), s.warn)
	return st, nil
}

// globalStore is the store of the global layer: private files (0600, folders
// 0700), its own lock, archive and state beside them.
func (s *session) globalStore() (*memfile.Store, error) {
	home, err := memory.OpenGlobalDir()
	if err != nil {
		return nil, err
	}
	st := s.newStore(home, filepath.Join(home, "state"), 0o600)
	st.Unmark = merge.Hook(filepath.Join(home, "state", "conflicts.json"), s.warn)
	return st, nil
}

// plural picks the singular or plural ending for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (s *session) newStore(home, state string, mode os.FileMode) *memfile.Store {
	// gc's limits from --max-entries and --ttl-days (and seed 001's
	// MCP_MEMORY_MAX_ENTRIES and MCP_MEMORY_TTL_DAYS); applyConfig may
	// change them.
	lim := memfile.Limits{MaxEntries: s.c.Int("max-entries"), TTL: time.Duration(s.c.Int("ttl-days")) * 24 * time.Hour}
	return &memfile.Store{
		Home:        home,
		LockTimeout: s.c.Duration("lock-timeout"),
		MaxBytes:    s.c.Int64("max-bytes"),
		Warn:        s.warn,
		FileMode:    mode,
		StateDir:    state,
		Limits:      &lim,
	}
}

// allow refuses an operation the role may not do, before anything changes.
func (s *session) allow(op string) error { return s.role.Check(op) }

// touch records that entries were returned to a reader (the TTL of gc);
// MEMSYNC_RECORD_ACCESS=0 turns it off.
func (s *session) touch(st *memfile.Store, ids ...string) {
	if os.Getenv("MEMSYNC_RECORD_ACCESS") != "0" {
		st.RecordAccess(ids...)
	}
}

// inScope tells whether an entry belongs to the session's view: without a
// session, every entry; with one, the session's entries and the entries
// saved without a session (shared by all sessions).
func (s *session) inScope(e *memfile.Entry) bool {
	if s.scope == "" {
		return true
	}
	got := e.Field("Session")
	return got == "" || got == s.scope
}

// scoped returns the indexes of the entries in the session's view.
func (s *session) scoped(f *memfile.File) []int {
	idx := make([]int, 0, len(f.Entries))
	for i := range f.Entries {
		if s.inScope(&f.Entries[i]) {
			idx = append(idx, i)
		}
	}
	return idx
}

func (s *session) warn(msg string) { fmt.Fprintf(s.stderr, "memsync: warning: %s\n", msg) }

// maxProblems is how many damage reports a command prints before summing up.
const maxProblems = 5

// reportDamage warns about what did not parse; the command goes on with what did.
func (s *session) reportDamage(path string, f *memfile.File) {
	for i, p := range f.Problems {
		if i == maxProblems {
			s.warn(fmt.Sprintf("%s: %d more problem(s)", path, len(f.Problems)-maxProblems))
			break
		}
		s.warn(fmt.Sprintf("%s:%d: %s", path, p.Line, p.Msg))
	}
	if len(f.Problems) > 0 {
		s.warn("reading what parses; a rewrite keeps a backup of the damaged file beside it")
	}
}

// load reads the active memory and reports damage.
func (s *session) load() (*memfile.File, error) {
	f, err := s.store.Load()
	if err != nil {
		return nil, err
	}
	s.reportDamage(s.store.Path(), f)
	return f, nil
}

// loadArchive reads the archive and reports damage.
func (s *session) loadArchive() (*memfile.File, error) {
	f, err := s.store.LoadArchive()
	if err != nil {
		return nil, err
	}
	s.reportDamage(s.store.ArchivePath(), f)
	return f, nil
}

// loadView reads the archive with --archive, else the active memory.
func (s *session) loadView(archive bool) (*memfile.File, error) {
	if archive {
		return s.loadArchive()
	}
	return s.load()
}

// entryJSON is the stable JSON shape of an entry (README documents it).
type entryJSON struct {
	Number  int               `json:"number,omitempty"`
	ID      string            `json:"id"`
	Title   string            `json:"title"`
	Type    string            `json:"type"`
	Tags    []string          `json:"tags"`
	Date    string            `json:"date"`
	Content string            `json:"content"`
	Fields  map[string]string `json:"fields,omitempty"`
	Score   *float64          `json:"score,omitempty"`
	Layer   string            `json:"layer,omitempty"`     // search --layer all: "project" or "global"
	Dup     string            `json:"duplicate,omitempty"` // add: "active" or "archive" when nothing was added
}

func toJSON(e *memfile.Entry, number int) entryJSON {
	return entryJSON{Number: number, ID: e.ID, Title: e.Title, Type: e.Type, Tags: e.TagList(), Date: e.Date, Content: e.Content, Fields: e.Fields()}
}

func (s *session) printJSON(v any) error {
	enc := json.NewEncoder(s.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printList prints numbered entries, one line each: number, ID, date, heading, tags.
func (s *session) printList(f *memfile.File, idx []int) {
	for _, i := range idx {
		s.printLine("", f, i)
	}
}

// printLine prints one entry as printList does, after prefix.
func (s *session) printLine(prefix string, f *memfile.File, i int) {
	e := &f.Entries[i]
	tags := ""
	if len(e.Tags) > 0 {
		tags = "  [" + joinTags(e.Tags) + "]"
	}
	heading := e.Heading()
	if heading == "" {
		heading = e.Preview(60)
	}
	fmt.Fprintf(s.stdout, "%s%3d  %s  %s  %s%s\n", prefix, i+1, e.ID, e.Date, heading, tags)
}

func joinTags(t []string) string {
	out := ""
	for i, x := range t {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
