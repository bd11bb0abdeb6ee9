// Package agents wires memsync into coding agents' own config files: its
// MCP server (memsync mcp), the context hooks of the agents that run hooks
// (memsync context --agent NAME), and, on request, a marked section of the
// rules file the agent reads. Each edit keeps the rest of the file as it
// was (jsonedit.go, tomledit.go), is idempotent, and is undone by Remove.
package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
)

// Scope is where an agent's configuration lives: the repository's shared
// files (project), this user's settings for this repository (local), or
// this user's settings for every repository (user).
type Scope string

// The scopes.
const (
	Project Scope = "project"
	Local   Scope = "local"
	User    Scope = "user"
)

// Env is where the agents keep their files, and the command they run.
type Env struct {
	Home       string // the user's home folder
	ConfigHome string // XDG_CONFIG_HOME, or Home/.config
	CodexHome  string // CODEX_HOME, or Home/.codex
	ClaudeDir  string // CLAUDE_CONFIG_DIR, or "" (Home/.claude and Home/.claude.json)
	GOOS       string
	Top        string // the top of the repository's worktree; "" outside one
	// Command starts memsync in the user's own files: an absolute path. A
	// project's shared files get "memsync" (on each user's PATH) unless
	// Fixed: the command was given.
	Command string
	Fixed   bool
}

// ErrNoRepo is the error of a scope whose files are in a repository, outside one.
var ErrNoRepo = errors.New("not inside a git repository")

// FileError is a config file setup cannot read or change; nothing was written.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// UsageError is a bad agent or scope name.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// format is a config file's format.
type format int

const (
	formatJSON  format = iota
	formatJSONC        // JSON with comments and trailing commas
	formatTOML
)

// Agent is one agent memsync can be wired into.
type Agent struct {
	Name, Title string
	Scopes      []Scope // the first is the default: it changes no tracked file
	// server is the file, format and key path of memsync's MCP server.
	server func(e Env, sc Scope) (string, format, []string)
	// value is the server's entry, for command.
	value func(command string, sc Scope) any
	// hooks is the settings file of the context hooks ("" none), its
	// events and one event's entry for command.
	hooks     func(e Env, sc Scope) (string, format)
	events    []string
	hookEntry func(command string) any
	// rules is the rules file, relative to the top; own: memsync's file alone.
	rules string
	own   bool
	front string // an own rules file's front matter
	// exclude are the .git/info/exclude patterns of scope's files (nil none).
	exclude func(sc Scope) []string
	// todo is what the user still has to do once the files are written.
	todo func(e Env, sc Scope) []string
	// found tells why the agent seems to be used here ("" not found).
	found func(e Env) string
}

// All are the agents, in the order memsync lists them.
func All() []*Agent { return all }

// Find is the agent named name.
func Find(name string) (*Agent, error) {
	for _, a := range all {
		if a.Name == name {
			return a, nil
		}
	}
	names := make([]string, len(all))
	for i, a := range all {
		names[i] = a.Name
	}
	return nil, &UsageError{fmt.Sprintf("unknown agent %q (memsync sets up %s)", name, strings.Join(names, ", "))}
}

// Scope checks s ("" is the default) against the agent's scopes.
func (a *Agent) Scope(s string) (Scope, error) {
	if s == "" {
		return a.Scopes[0], nil
	}
	if slices.Contains(a.Scopes, Scope(s)) {
		return Scope(s), nil
	}
	names := make([]string, len(a.Scopes))
	for i, sc := range a.Scopes {
		names[i] = string(sc)
	}
	return "", &UsageError{fmt.Sprintf("%s has no %q scope (it has %s)", a.Title, s, strings.Join(names, ", "))}
}

// HasHooks tells whether the agent runs memsync's context hooks.
func (a *Agent) HasHooks() bool { return a.hooks != nil }

// Change is one file's edit.
type Change struct {
	Path          string
	Before, After []byte // After nil: the file is removed (it held only memsync's)
	Existed       bool
	Perm          os.FileMode // a new file's
}

// Plan is what a setup (or its removal) changes and what is left to the user.
type Plan struct {
	Agent   *Agent
	Scope   Scope
	Changes []Change // only the files that change
	Todo    []string
	// Exclude are the patterns of .git/info/exclude that keep this
	// user's files in the repository out of git (Claude Code's
	// settings.local.json, as Claude Code itself does).
	Exclude []string
}

// Options choose what Setup plans.
type Options struct {
	Scope  Scope
	Remove bool // take memsync's entries out
	Rules  bool // the rules file's section too
}

// command is what the scope's files run.
func (e Env) command(sc Scope) string {
	if sc == Project && !e.Fixed {
		return "memsync"
	}
	return e.Command
}

// repoPath is rel under the top, or ErrNoRepo.
func (e Env) repoPath(rel string) (string, error) {
	if e.Top == "" {
		return "", ErrNoRepo
	}
	return filepath.Join(e.Top, rel), nil
}

// staysInRepo refuses a path in the repository that leads out of it through a
// symlink (its own or a folder's): a clone can ship any link, and setup
// would edit, or with --remove delete, what it names. The user's own files
// outside the repository are followed (a dotfiles repository's links).
func (e Env) staysInRepo(path string) error {
	if e.Top == "" || !strings.HasPrefix(path, e.Top+string(filepath.Separator)) {
		return nil
	}
	real, top := fsutil.ResolveDir("", path), fsutil.ResolveDir("", e.Top)
	if rel, err := filepath.Rel(top, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return &fsutil.OutsideError{Path: path, Target: real, Root: e.Top}
	}
	return nil
}

// Setup plans the edits of o for agent a; Apply writes them.
func Setup(a *Agent, e Env, o Options) (Plan, error) {
	p := Plan{Agent: a, Scope: o.Scope}
	files := map[string]*Change{}
	var order []string
	edit := func(path string, f func([]byte) ([]byte, error)) error {
		c := files[path]
		if c == nil {
			if err := e.staysInRepo(path); err != nil {
				return &FileError{path, err}
			}
			before, existed, err := readConfig(path)
			if err != nil {
				return &FileError{path, err}
			}
			c = &Change{Path: path, Before: before, After: before, Existed: existed, Perm: 0o600}
			if e.Top != "" && strings.HasPrefix(path, e.Top+string(filepath.Separator)) {
				c.Perm = 0o644 // the repository's files have the modes git gives them
			}
			files[path] = c
			order = append(order, path)
		}
		after, err := f(c.After)
		if err != nil {
			return &FileError{path, err}
		}
		c.After = after
		return nil
	}
	cmd := e.command(o.Scope)
	path, fm, key := a.server(e, o.Scope)
	if path == "" {
		return p, ErrNoRepo
	}
	if err := edit(path, func(s []byte) ([]byte, error) {
		if fm == formatTOML {
			if o.Remove {
				return removeCodex(s)
			}
			return setCodex(s, cmd, []string{"mcp"})
		}
		if o.Remove {
			return jsonEdit(s, fm, func(s []byte, jsonc bool) ([]byte, error) { return deleteJSON(s, jsonc, key, 0) })
		}
		return jsonEdit(s, fm, func(s []byte, jsonc bool) ([]byte, error) { return setJSON(s, jsonc, key, a.value(cmd, o.Scope)) })
	}); err != nil {
		return p, err
	}
	if a.hooks != nil {
		hpath, hfm := a.hooks(e, o.Scope)
		if hpath == "" {
			return p, ErrNoRepo
		}
		hook := shellQuote(cmd) + " context --agent " + a.Name
		for _, ev := range a.events {
			if err := edit(hpath, func(s []byte) ([]byte, error) {
				return jsonEdit(s, hfm, func(s []byte, jsonc bool) ([]byte, error) {
					return setHook(s, jsonc, ev, a.Name, hook, a.hookEntry(hook), o.Remove)
				})
			}); err != nil {
				return p, err
			}
		}
	}
	if o.Rules && a.rules != "" {
		rpath, err := e.repoPath(a.rules)
		if err != nil {
			return p, err
		}
		if err := edit(rpath, func(s []byte) ([]byte, error) { return rulesEdit(s, a, o.Remove), nil }); err != nil {
			return p, err
		}
	}
	for _, path := range order {
		c := files[path]
		if c.After != nil && onlyEmpty(c.After) && !onlyEmpty(c.Before) {
			c.After = nil // a file that held only memsync's goes
		}
		if c.After != nil && len(c.After) == 0 {
			c.After = nil
		}
		if c.After == nil && !c.Existed || c.After != nil && bytes.Equal(c.Before, c.After) {
			continue // nothing there, or nothing changes
		}
		p.Changes = append(p.Changes, *c)
	}
	if !o.Remove {
		p.Todo = a.todo(e, o.Scope)
		if a.exclude != nil {
			p.Exclude = a.exclude(o.Scope)
		}
	}
	return p, nil
}

// onlyEmpty: s is a JSON object holding nothing but empty objects (as
// {"mcpServers": {}}), without comments: what a file memsync made holds
// once memsync's entries are out.
func onlyEmpty(s []byte) bool {
	var v any
	if json.Unmarshal(s, &v) != nil {
		return false
	}
	var empty func(any) bool
	empty = func(v any) bool {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, x := range m {
			if !empty(x) {
				return false
			}
		}
		return true
	}
	return empty(v)
}

// jsonEdit runs f on s, a new file's text being {}.
func jsonEdit(s []byte, fm format, f func([]byte, bool) ([]byte, error)) ([]byte, error) {
	if len(bytes.TrimSpace(s)) == 0 {
		s = []byte("{}\n")
	}
	return f(s, fm == formatJSONC)
}

// maxConfig bounds what setup reads of a config file (~/.claude.json
// grows with history; 64 MiB is far past any seen).
const maxConfig = 64 << 20

// readConfig is the file at path (nil, false when there is none).
func readConfig(path string) ([]byte, bool, error) {
	b, err := fsutil.ReadFile(resolved(path), maxConfig)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// resolved is path with its symlinks resolved where it exists (a config
// file kept in a dotfiles repository is written where it lives).
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// Apply writes the plan's changes, each file atomically.
func (p Plan) Apply() error {
	for _, c := range p.Changes {
		path := resolved(c.Path)
		if c.After == nil {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := fsutil.WriteFile(path, c.After, c.Perm); err != nil {
			return err
		}
	}
	return nil
}

// Wired tells whether memsync's server is in the agent's file of scope sc.
func (a *Agent) Wired(e Env, sc Scope) (bool, error) {
	path, fm, key := a.server(e, sc)
	if path == "" {
		return false, nil
	}
	s, ok, err := readConfig(path)
	if err != nil || !ok {
		return false, err
	}
	if fm == formatTOML {
		server, err := codexServer(s)
		if err != nil {
			return false, &FileError{path, err}
		}
		return server != nil, nil
	}
	if len(bytes.TrimSpace(s)) == 0 {
		return false, nil
	}
	n, err := parseJSON(s, fm == formatJSONC)
	if err != nil {
		return false, &FileError{path, err}
	}
	for _, k := range key {
		if n = n.lookup(k); n == nil {
			return false, nil
		}
	}
	return true, nil
}

// Found says why the agent seems to be used on this machine ("" not found).
func (a *Agent) Found(e Env) string { return a.found(e) }

// ServerFile is the file of memsync's server in scope sc ("" outside a
// repository for a repository's scope).
func (a *Agent) ServerFile(e Env, sc Scope) string {
	path, _, _ := a.server(e, sc)
	return path
}

// shellQuote quotes s for sh where it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+:@%,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isMemsyncHook: command is memsync's context hook for agent, whatever
// path it starts memsync by.
func isMemsyncHook(command, agent string) bool {
	bin, ok := strings.CutSuffix(command, " context --agent "+agent)
	if !ok {
		return false
	}
	bin = strings.Trim(bin, `'"`)
	return filepath.Base(bin) == "memsync"
}
