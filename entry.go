package memsync

import (
	"maps"
	"slices"
	"strings"

	"github.com/memsync/memsync/internal/inject"
	"github.com/memsync/memsync/internal/provenance"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/memfile"
)

// Entry is one memory as every front door shows it: the JSON of the CLI's
// --json, of the MCP tools and of the Go API (docs/commands.md documents the shape).
// As an argument of Add, only Title, Type, Tags, Content and Fields are read.
type Entry struct {
	Number  int               `json:"number,omitempty" jsonschema:"position in the list, 1-based"`
	ID      string            `json:"id"`
	Title   string            `json:"title"`
	Type    string            `json:"type"`
	Tags    []string          `json:"tags"`
	Date    string            `json:"date"`
	Content string            `json:"content"`
	Fields  map[string]string `json:"fields,omitempty" jsonschema:"other bullets of the entry (Key, Source, Session, Author, Branch, ...)"`
	// Provenance is who wrote the entry and where, read from its bullets;
	// nil for an entry that records none (written before memsync did).
	Provenance *Provenance `json:"provenance,omitempty" jsonschema:"who wrote the entry and where (absent for entries written before memsync recorded it)"`
	// Citations are the places in the code the entry is about (docs/keeping-true.md:
	// Keeping memory true).
	Citations []Citation `json:"citations,omitempty" jsonschema:"the code the entry cites: path, lines, commit, fingerprint"`
	// Stale says that the code a citation names changed, as the last check
	// found it (Check; the hooks after a merge or checkout); StaleReason
	// says where and how. List, Search, Get and Inject set them.
	Stale       bool   `json:"stale" jsonschema:"the code the entry cites changed since it was written: it may be stale"`
	StaleReason string `json:"stale_reason,omitempty" jsonschema:"what changed: which citation, and how"`
	// Supersedes names the entry this one replaced (AddOptions.Supersedes);
	// SupersededBy, on the archived entry, the one that replaced it.
	Supersedes   string `json:"supersedes,omitempty" jsonschema:"the ID of the entry this one replaced"`
	SupersededBy string `json:"superseded_by,omitempty" jsonschema:"the ID of the entry that replaced this one"`
	// Score is the relevance to the query that found the entry (Search only).
	Score *float64 `json:"score,omitempty" jsonschema:"relevance to the query"`
	// Layer is "project" or "global" when a search covered both.
	Layer string `json:"layer,omitempty"`
	// Similar is set by Add when the content is nearly the same as that of
	// active entries (package similar): their IDs, most similar first. The
	// entry is stored all the same; superseding one of them may be meant.
	Similar []string `json:"similar,omitempty" jsonschema:"IDs of active entries nearly the same as this one: if it replaces one, save again with supersedes"`
	// Duplicate is set by Add when the same content was already stored and
	// nothing was added: "active", or "archive" (Restore brings it back).
	Duplicate string `json:"duplicate,omitempty"`

	heading string         // the heading as the file spells it
	src     *memfile.Entry // the entry as parsed, where kept (Get, Conflict.Edited): Text and Resolve use it
}

// Heading is the entry's heading line as the file spells it ("Pattern:
// Title"), else a preview of its content.
func (e *Entry) Heading() string {
	if e.heading != "" {
		return e.heading
	}
	return (&memfile.Entry{Title: e.Title, Content: e.Content}).Preview(60)
}

// Provenance is who wrote an entry and where, as the entry's bullets
// record it (docs/formats.md: Provenance): every front door records it at write time.
type Provenance struct {
	Author   string `json:"author,omitempty" jsonschema:"the git user: Name <email>"`
	Branch   string `json:"branch,omitempty" jsonschema:"the branch checked out"`
	Worktree string `json:"worktree,omitempty" jsonschema:"the worktree, relative to the primary (. for the primary)"`
	Commit   string `json:"commit,omitempty" jsonschema:"the commit HEAD was at"`
	Agent    string `json:"agent,omitempty" jsonschema:"the agent or loop (MEMSYNC_AGENT, RALPH_LOOP_ID, MCP caller_agent_id)"`
	Session  string `json:"session,omitempty" jsonschema:"the session (--session, MEMSYNC_SESSION)"`
	EditedAt string `json:"edited_at,omitempty" jsonschema:"time of the last edit (RFC 3339)"`
	EditedBy string `json:"edited_by,omitempty" jsonschema:"the git user who made the last edit"`
}

// provenanceOf reads an entry's provenance; nil when it records none.
func provenanceOf(e *memfile.Entry) *Provenance {
	p := Provenance{
		Author:   e.Field(provenance.AuthorField),
		Branch:   e.Field(provenance.BranchField),
		Worktree: e.Field(provenance.WorktreeField),
		Commit:   e.Field(provenance.CommitField),
		Agent:    provenance.Agent(e),
		Session:  e.Field("Session"),
	}
	p.EditedAt, p.EditedBy = provenance.SplitEdited(e.Field(provenance.EditedField))
	if p == (Provenance{}) {
		return nil
	}
	return &p
}

// Arrived is, for each entry a sync merged in from another clone, the git
// user ("Name <email>") whose snapshot first brought it: what history
// proves, where the entry's Author bullet is only what it claims. Entries
// written here, and any this clone does not know the arrival of, are not
// in it.
func (m *Memory) Arrived() Arrivals { return m.store.Arrived() }

// Arrivals is Memory.Arrived: an entry's ID → the author of the snapshot
// that brought it from another clone.
type Arrivals map[string]string

// Claimed is who made the snapshot that brought e from another clone, when
// e's Author bullet names someone else (the author is then only claimed);
// "" otherwise.
func (a Arrivals) Claimed(e Entry) string {
	who := a[e.ID]
	if who == "" || e.Provenance == nil || e.Provenance.Author == "" {
		return ""
	}
	email := who
	if i := strings.LastIndexByte(who, '<'); i >= 0 {
		email, _, _ = strings.Cut(who[i+1:], ">")
	}
	if !inject.OtherAuthor(e.Provenance.Author, email) {
		return ""
	}
	return who
}

// entryOf converts an entry of a memory file; number is its 1-based
// position (0: none).
func entryOf(e *memfile.Entry, number int) Entry {
	return Entry{Number: number, ID: e.ID, Title: e.Title, Type: e.Type, Tags: e.TagList(), Date: e.Date, Content: e.Content,
		Fields: e.Fields(), Provenance: provenanceOf(e), Citations: citationsOf(e),
		Supersedes: e.Field(memfile.SupersedesField), SupersededBy: e.Field(memfile.SupersededByField), heading: e.Heading()}
}

// dupName is how Entry.Duplicate names what Add found.
var dupName = map[store.Dup]string{store.DupActive: "active", store.DupArchived: "archive"}

// fileEntry is e as a memory file holds it: the entry it was read as, else
// one made of its fields.
func fileEntry(e *Entry) memfile.Entry {
	if e.src != nil {
		return *e.src
	}
	f := memfile.Entry{ID: e.ID, Type: e.Type, Title: e.Title, Tags: e.Tags, Date: e.Date, Content: e.Content}
	for _, k := range slices.Sorted(maps.Keys(e.Fields)) {
		f.SetField(k, e.Fields[k])
	}
	return f
}

// Text is the entry as the memory file spells it (orch's dialect), as
// 'memsync show' prints it.
func (e *Entry) Text() string {
	f := fileEntry(e)
	return memfile.RenderEntry(&f, memfile.Orch)
}
