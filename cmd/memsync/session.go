package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/memory"
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
}

// excludePatterns keep the memory files out of git status in every worktree.
var excludePatterns = []string{
	"/.agent/memories.md",
	"/.agent/memories.md.*",
	"/.agent/.memories.md.tmp-*",
	"/.agent/archive/",
}

// openSession finds the memory home (discovery reads files only; no git is
// spawned here) and sets up the store with the command line's limits.
func openSession(c *cli.Context) (*session, error) {
	s := &session{json: c.Bool("json"), stdout: c.App.Writer, stderr: c.App.ErrWriter}
	var home string
	if c.Bool("global") {
		var err error
		if home, err = memory.OpenGlobalDir(); err != nil {
			return nil, err
		}
	} else {
		repo, err := worktree.Discover(c.String("C"))
		if err != nil {
			return nil, err
		}
		s.repo, home = repo, repo.Home
	}
	s.store = &memfile.Store{
		Home:        home,
		LockTimeout: c.Duration("lock-timeout"),
		MaxBytes:    c.Int64("max-bytes"),
		Warn:        s.warn,
	}
	return s, nil
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
}

func toJSON(e *memfile.Entry, number int) entryJSON {
	j := entryJSON{Number: number, ID: e.ID, Title: e.Title, Type: e.Type, Tags: e.Tags, Date: e.Date, Content: e.Content}
	if j.Tags == nil {
		j.Tags = []string{}
	}
	for _, f := range e.Extra {
		if f.Key != "" {
			if j.Fields == nil {
				j.Fields = map[string]string{}
			}
			j.Fields[f.Key] = f.Value
		}
	}
	return j
}

func (s *session) printJSON(v any) error {
	enc := json.NewEncoder(s.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printList prints numbered entries, one line each: number, ID, date, heading, tags.
func (s *session) printList(f *memfile.File, idx []int) {
	for _, i := range idx {
		e := &f.Entries[i]
		tags := ""
		if len(e.Tags) > 0 {
			tags = "  [" + joinTags(e.Tags) + "]"
		}
		heading := e.Heading()
		if heading == "" {
			heading = e.Preview(60)
		}
		fmt.Fprintf(s.stdout, "%3d  %s  %s  %s%s\n", i+1, e.ID, e.Date, heading, tags)
	}
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
