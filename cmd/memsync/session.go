package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/policy"
	"github.com/memsync/memsync/worktree"
)

// session is what every command works with: the memory (its repository is
// nil for the global layer), its store, and the output streams.
type session struct {
	m      *memsync.Memory
	repo   *worktree.Repo
	json   bool
	stdout io.Writer
	stderr io.Writer
	scope  string // --session, MEMSYNC_SESSION; "" is the whole project
	global bool   // the store is the global layer
	c      *cli.Context
}

// openSession opens the memory the command line names (discovery reads
// files only; no git is spawned here).
func openSession(c *cli.Context) (*session, error) { return openLayer(c, c.Bool("global")) }

// openLayer is openSession on the global layer or the project's memory.
func openLayer(c *cli.Context, global bool) (*session, error) {
	s := &session{json: c.Bool("json"), stdout: c.App.Writer, stderr: c.App.ErrWriter, scope: c.String("session"), global: global, c: c}
	m, err := s.open(global)
	if err != nil {
		return nil, err
	}
	s.m, s.repo = m, m.Repo()
	return s, nil
}

// open opens a memory layer with what the command line sets; what it leaves
// unset, memsync.Open takes from the environment and configuration files.
func (s *session) open(global bool) (*memsync.Memory, error) {
	c := s.c
	o := memsync.Options{Global: global, Session: s.scope, Warn: s.warn}
	if c.IsSet("role") {
		if _, err := policy.Parse(c.String("role")); err != nil {
			return nil, usageError{err}
		}
		o.Role = c.String("role")
	}
	if c.IsSet("lock-timeout") {
		o.LockTimeout = c.Duration("lock-timeout")
	}
	if c.IsSet("max-bytes") {
		o.MaxBytes = c.Int64("max-bytes")
	}
	if c.IsSet("max-entries") {
		o.MaxEntries = new(c.Int("max-entries"))
	}
	if c.IsSet("ttl-days") {
		o.TTLDays = new(c.Int("ttl-days"))
	}
	m, err := memsync.Open(c.String("C"), o)
	var ce *memsync.ConfigError
	if errors.As(err, &ce) {
		return nil, withHint(err, "fix the value in that file (memories: enabled true|false, inject auto|manual|none, budget TOKENS, filter: types, tags, recent_days; role, max_entries, ttl_days)")
	}
	return m, err
}

// plural picks the singular or plural ending for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (s *session) warn(msg string) { fmt.Fprintf(s.stderr, "memsync: warning: %s\n", msg) }

func (s *session) printJSON(v any) error {
	enc := json.NewEncoder(s.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printList prints numbered entries, one line each: number, ID, date, heading, tags.
func (s *session) printList(entries []memsync.Entry) {
	for i := range entries {
		s.printLine("", &entries[i])
	}
}

// printLine prints one entry as printList does, after prefix.
func (s *session) printLine(prefix string, e *memsync.Entry) {
	tags := ""
	if len(e.Tags) > 0 {
		tags = "  [" + joinTags(e.Tags) + "]"
	}
	fmt.Fprintf(s.stdout, "%s%3d  %s  %s  %s%s\n", prefix, e.Number, e.ID, e.Date, e.Heading(), tags)
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
