package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

// session is what every command works with: the memory and the output
// streams.
type session struct {
	m              *memsync.Memory
	json           bool
	stdout, stderr io.Writer
	scope          string // --session, MEMSYNC_SESSION; "" is the whole project
	color          bool   // colour the output (colorOK)
	c              *cli.Context
}

// use opens the global layer or the project's memory as the session's
// (discovery reads files only; no git is spawned here).
func (s *session) use(global bool) error {
	m, err := s.open(global)
	if err != nil {
		return err
	}
	s.m = m
	return nil
}

// open opens a memory layer with what the command line sets; what it leaves
// unset, memsync.Open takes from the environment and configuration files.
func (s *session) open(global bool) (*memsync.Memory, error) { return s.openWith(global, nil) }

// openWith is open with tune applied to the options before the memory
// opens (nil: none).
func (s *session) openWith(global bool, tune func(*memsync.Options)) (*memsync.Memory, error) {
	c := s.c
	o := memsync.Options{Global: global, Session: s.scope, Warn: s.warn, Detach: detachMaintain}
	if c.IsSet("role") {
		o.Role = c.String("role")
	}
	o.LockTimeout = lockTimeoutFlag(c)
	if c.IsSet("max-bytes") {
		o.MaxBytes = c.Int64("max-bytes")
	}
	if c.IsSet("max-entries") {
		o.MaxEntries = new(c.Int("max-entries"))
	}
	if c.IsSet("ttl-days") {
		o.TTLDays = new(c.Int("ttl-days"))
	}
	if c.IsSet("timeout") { // sync's and purge's: the variable is then not read
		o.SyncTimeout = c.Duration("timeout")
	}
	if tune != nil {
		tune(&o)
	}
	m, err := memsync.Open(c.String("C"), o)
	if errors.Is(err, memsync.ErrUnknownRole) { // --role or MEMSYNC_ROLE
		return nil, usageError{err}
	}
	if err == nil {
		fitOneShot(m.Path())
	}
	return m, err
}

// lockTimeoutFlag is --lock-timeout where the line gives it, else 0 (the
// root then reads MEMSYNC_LOCK_TIMEOUT).
func lockTimeoutFlag(c *cli.Context) time.Duration {
	if c.IsSet("lock-timeout") {
		return c.Duration("lock-timeout")
	}
	return 0
}

// filterFlags select entries by provenance (list, search).
func filterFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "author", Usage: "only entries whose author (git user.name <user.email>) contains `TEXT`, any case"},
		&cli.StringFlag{Name: "branch", Usage: "only entries written on `BRANCH`"},
		&cli.StringFlag{Name: "agent", Usage: "only entries written by `AGENT` (MEMSYNC_AGENT, RALPH_LOOP_ID, MCP caller_agent_id)"},
	}
}

// tagFlags are the tag filters of search, list and inject: --tags keeps
// the entries with all the tags, --any-tags those with at least one.
func tagFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "tags", Usage: "only entries with all these comma-separated `TAGS`"},
		&cli.StringFlag{Name: "any-tags", Usage: "only entries with at least one of these comma-separated `TAGS`"},
	}
}

// hasTags tells whether e carries every tag of all and, when anyOf is not
// empty, one of anyOf (any case), as search's --tags and --any-tags.
func hasTags(e *memsync.Entry, all, anyOf []string) bool {
	has := func(t string) bool {
		return slices.ContainsFunc(e.Tags, func(x string) bool { return strings.EqualFold(x, t) })
	}
	for _, t := range all {
		if !has(t) {
			return false
		}
	}
	return len(anyOf) == 0 || slices.ContainsFunc(anyOf, has)
}

// filterOf is the provenance filter the command line sets.
func filterOf(c *cli.Context) memsync.Filter {
	return memsync.Filter{Author: c.String("author"), Branch: c.String("branch"), Agent: c.String("agent")}
}

func (s *session) warn(msg string) { s.eprintf("memsync: warning: %s\n", msg) }

// hintSync says, when a read found the memory empty in a clone that never
// synced, that its team's memory may be on the remote.
func (s *session) hintSync(c *cli.Context) {
	if name := s.m.NeverSynced(c.Context); name != "" {
		s.eprintf("hint: this clone has not fetched its team's memory yet: memsync sync %s\n", name)
	}
}

// print returns err, or prints v: as JSON with --json, else by calling text.
func (s *session) print(v any, err error, text func()) error {
	switch {
	case err != nil:
		return err
	case !s.json:
		text()
		return nil
	}
	switch v := v.(type) { // the entry shapes, written without reflection
	case []memsync.Entry:
		return memsync.WriteEntriesJSON(s.stdout, v)
	case memsync.Entry:
		return v.WriteJSON(s.stdout)
	case *memsync.Entry:
		if v != nil {
			return v.WriteJSON(s.stdout)
		}
	}
	enc := json.NewEncoder(s.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printf prints to stdout with every argument shown safely (shown).
func (s *session) printf(format string, a ...any) { fmt.Fprintf(s.stdout, format, shown(a)...) }

// eprintf prints to stderr with every argument shown safely (shown).
func (s *session) eprintf(format string, a ...any) { fmt.Fprintf(s.stderr, format, shown(a)...) }

// painted is text that printf writes as it is: memsync's own colors, around
// text already escaped (paint).
type painted string

// shown is a copy of printf's arguments with their text (strings, errors,
// Stringers) escaped by termsafe.Text: text from a memory file, a snapshot
// or a remote never sends a terminal escape. Tabs and newlines stay.
func shown(a []any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		switch v := v.(type) {
		case painted:
			out[i] = string(v)
		case string:
			out[i] = memsync.Printable(v)
		case error:
			out[i] = memsync.Printable(v.Error())
		case fmt.Stringer:
			out[i] = memsync.Printable(v.String())
		default:
			out[i] = v
		}
	}
	return out
}

// printEntries prints one line per entry: verb, ID, heading.
func (s *session) printEntries(verb string, entries []memsync.Entry) {
	for _, e := range entries {
		s.printf("%s %s\n", verb, e.ID+"  "+e.Heading())
	}
}

// printLine prints one entry as list does, after prefix: number, ID, date, heading, tags.
func (s *session) printLine(prefix string, e *memsync.Entry) {
	tags := ""
	if len(e.Tags) > 0 {
		tags = "  [" + strings.Join(e.Tags, ", ") + "]"
	}
	s.printf("%s%3d  %s  %s  %s%s%s\n", prefix, e.Number, s.paint(yellow, e.ID), e.Date, s.paint(bold, e.Heading()), tags, s.paint(red, staleNote(e)))
}
