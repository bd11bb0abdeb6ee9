package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/memfile"
)

// SaveInput are save_to_memory's arguments (content, tags, key, session, plus type and title).
type SaveInput struct {
	Content       string   `json:"content" jsonschema:"what to remember; any text, several lines are fine"`
	Key           string   `json:"key,omitempty" jsonschema:"a name to get the entry back by, e.g. api-auth-decision (one line, not a number)"`
	Title         string   `json:"title,omitempty" jsonschema:"heading of the entry (default: the content's first line)"`
	Type          string   `json:"type,omitempty" jsonschema:"kind of memory, e.g. pattern, decision, fix, solution"`
	Tags          []string `json:"tags,omitempty" jsonschema:"words to find the entry by"`
	CallerAgentID string   `json:"caller_agent_id,omitempty" jsonschema:"the agent that saves (kept as the entry's Source)"`
	Cite          []string `json:"cite,omitempty" jsonschema:"code the memory is about, as PATH, PATH:LINE or PATH:FIRST-LAST relative to the repository's top; files the content names are cited too"`
	Supersedes    string   `json:"supersedes,omitempty" jsonschema:"the ID of an entry this one replaces (a corrected fact): it is archived, linked to the new one"`
	AllowSecret   bool     `json:"allow_secret,omitempty" jsonschema:"save content the secret rules flag anyway (only for a false positive the user confirmed; the entry records the rule as Secret-Allowed); refused to the worker role"`
}

// SaveOutput is what save_to_memory returns.
type SaveOutput struct {
	Entry memsync.Entry `json:"entry"`
	Path  string        `json:"path" jsonschema:"the memory file"`
	// Similar names active entries nearly the same as the saved one.
	Similar []string `json:"similar,omitempty" jsonschema:"IDs of active entries nearly the same as this one (it was saved all the same): if it replaces one, delete it and save again with supersedes set to that ID"`
	// Duplicate is set when the same content was already stored and nothing
	// was added: "active", or "archive" (restore it to use it again).
	Duplicate string `json:"duplicate,omitempty" jsonschema:"set when the content was already stored (active or archive) and nothing was added; entry is the stored one"`
}

// RetrieveInput are retrieve_from_memory's and search_memory_archive's arguments.
type RetrieveInput struct {
	Query string   `json:"query" jsonschema:"words to look for (identifiers and word forms match)"`
	Tags  []string `json:"tags,omitempty" jsonschema:"only entries with all these tags"`
	Type  string   `json:"type,omitempty" jsonschema:"only entries of this type"`
	Limit int      `json:"limit,omitempty" jsonschema:"at most this many results (default 10)"`
}

// RefInput names one entry.
type RefInput struct {
	Key string `json:"key" jsonschema:"the entry, first match wins: its full ID, its number in the list, the key it was saved with, or a unique prefix of its ID (4+ characters)"`
}

// EditInput are edit_memory_entry's arguments: what is left out stays.
type EditInput struct {
	Key     string   `json:"key" jsonschema:"the entry, first match wins: its full ID, its number in the list, the key it was saved with, or a unique prefix of its ID (4+ characters)"`
	Content *string  `json:"content,omitempty" jsonschema:"the new content"`
	Title   *string  `json:"title,omitempty" jsonschema:"the new heading; empty derives it from the content (a title that was the content's first line follows new content by itself)"`
	Type    *string  `json:"type,omitempty" jsonschema:"the new type; empty removes it"`
	Tags    []string `json:"tags,omitempty" jsonschema:"the new tags, replacing the old ones"`
}

// ListInput are the list tools' arguments.
type ListInput struct {
	Tags   []string `json:"tags,omitempty" jsonschema:"only entries with all these tags"`
	Type   string   `json:"type,omitempty" jsonschema:"only entries of this type"`
	Limit  int      `json:"limit,omitempty" jsonschema:"at most this many entries, newest first (default 50)"`
	Offset int      `json:"offset,omitempty" jsonschema:"skip this many of the newest first"`
	Author string   `json:"author,omitempty" jsonschema:"only entries whose author (git user.name <user.email>) contains this, any case"`
	Branch string   `json:"branch,omitempty" jsonschema:"only entries written on this branch"`
	Agent  string   `json:"agent,omitempty" jsonschema:"only entries written by this agent or loop"`
}

// Entries is a list of entries; Total counts all that matched.
type Entries struct {
	Entries []memsync.Entry `json:"entries"`
	Total   int             `json:"total"`
}

// DeleteOutput is what a delete returns.
type DeleteOutput struct {
	Deleted memsync.Entry `json:"deleted"`
}

// RestoreOutput is what a restore returns.
type RestoreOutput struct {
	Restored []memsync.Entry `json:"restored"`
}

const (
	defaultListLimit   = 50
	defaultSearchLimit = 10
)

var tools = []tool{
	{base: "save_to_memory", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "save_to_memory"}.name(l.global),
			Description: "Save a memory to " + l.what() + ": a decision and its reason, a fix, a pattern, a preference. Not for task progress or passing errors. Content holding a credential (a key, a token, a password) is refused.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: falseP, OpenWorldHint: falseP, Title: "Save a memory"},
		}, handler(l, func(ctx context.Context, m *memsync.Memory, in SaveInput) (SaveOutput, error) {
			// Named after the argument, not after the bullet it becomes.
			if err := oneLine("caller_agent_id", in.CallerAgentID); err != nil {
				return SaveOutput{}, err
			}
			if in.AllowSecret {
				ctx = memsync.AllowSecrets(ctx)
			}
			e, err := m.AddWith(ctx, memsync.Entry{Type: in.Type, Title: in.Title, Content: in.Content, Tags: in.Tags,
				Fields: map[string]string{memfile.KeyField: in.Key, sourceField: in.CallerAgentID}},
				memsync.AddOptions{Cite: in.Cite, Supersedes: in.Supersedes})
			if err != nil {
				return SaveOutput{}, err
			}
			return SaveOutput{Entry: e, Path: m.Path(), Duplicate: e.Duplicate, Similar: e.Similar}, nil
		}))
	}},
	{base: "retrieve_from_memory", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "retrieve_from_memory"}.name(l.global),
			Description: "Search " + l.what() + " by relevance (BM25 over title, tags, type and content), best first. An entry whose cited code changed has stale: true and a stale_reason: check it before relying on it.",
			Annotations: readOnly("Search memories"),
		}, handler(l, func(ctx context.Context, m *memsync.Memory, in RetrieveInput) (Entries, error) {
			return search(ctx, m, in, false)
		}))
	}},
	{base: "get_memory_entry", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "get_memory_entry"}.name(l.global),
			Description: "Get one entry of " + l.what() + " by key, ID or number.",
			Annotations: readOnly("Get a memory"),
		}, handler(l, func(ctx context.Context, m *memsync.Memory, in RefInput) (memsync.Entry, error) {
			got, err := m.Get(ctx, memsync.View{}, in.Key)
			if err != nil {
				return memsync.Entry{}, err
			}
			return got[0], nil
		}))
	}},
	{base: "list_memory_entries", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "list_memory_entries"}.name(l.global),
			Description: "List entries of " + l.what() + ", newest first, with their numbers and IDs.",
			Annotations: readOnly("List memories"),
		}, handler(l, func(ctx context.Context, m *memsync.Memory, in ListInput) (Entries, error) {
			return list(ctx, m, in, false)
		}))
	}},
	{base: "edit_memory_entry", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "edit_memory_entry"}.name(l.global),
			Description: "Change one entry of " + l.what() + " in place: its content, title, tags or type (what is left out stays; the ID stays). Records who edited. Owners and admins only.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: trueP, IdempotentHint: true, OpenWorldHint: falseP, Title: "Edit a memory"},
		}, handler(l, func(ctx context.Context, m *memsync.Memory, in EditInput) (memsync.EditResult, error) {
			return m.Edit(ctx, in.Key, memsync.EditOptions{Content: in.Content, Title: in.Title, Type: in.Type, Tags: in.Tags})
		}))
	}},
	{base: "delete_memory_entry", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "delete_memory_entry"}.name(l.global),
			Description: "Delete one entry of " + l.what() + " for good (it is not archived). Owners and admins only.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: trueP, IdempotentHint: true, OpenWorldHint: falseP, Title: "Delete a memory"},
		}, handler(l, func(ctx context.Context, m *memsync.Memory, in RefInput) (DeleteOutput, error) {
			deleted, err := m.Delete(ctx, in.Key)
			if err != nil {
				return DeleteOutput{}, err
			}
			return DeleteOutput{Deleted: deleted[0]}, nil
		}))
	}},
	{base: "get_memory_summary", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "get_memory_summary"}.name(l.global),
			Description: "Summarize " + l.what() + " and its archive: entries per type and tag, dates, size against the cap, the gc limits.",
			Annotations: readOnly("Summarize memories"),
		}, handler(l, func(ctx context.Context, m *memsync.Memory, _ struct{}) (memsync.Summary, error) {
			return m.Summary(ctx, memsync.SummaryOptions{})
		}))
	}},
	{base: "review_memory", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name: tool{base: "review_memory"}.name(l.global),
			Description: "The review queue of " + l.what() + ", for an agent asked to tidy memory: entries whose cited code changed (stale), groups of near-duplicates, entries nobody read within the TTL; " +
				"each item with the memsync commands that settle it (the same tools do it: save_to_memory with supersedes, edit_memory_entry, delete_memory_entry).",
			Annotations: readOnly("Review memories"),
		}, handler(l, func(ctx context.Context, m *memsync.Memory, _ struct{}) (memsync.ReviewResult, error) {
			return m.Review(ctx)
		}))
	}},
	{base: "search_memory_archive", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "search_memory_archive"}.name(l.global),
			Description: "Search the archive of " + l.what() + " (entries moved out by the size cap or by archiving), best first.",
			Annotations: readOnly("Search the archive"),
		}, handler(l, func(ctx context.Context, m *memsync.Memory, in RetrieveInput) (Entries, error) {
			return search(ctx, m, in, true)
		}))
	}},
	{base: "list_memory_archive", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "list_memory_archive"}.name(l.global),
			Description: "List the archive of " + l.what() + ", newest first.",
			Annotations: readOnly("List the archive"),
		}, handler(l, func(ctx context.Context, m *memsync.Memory, in ListInput) (Entries, error) {
			return list(ctx, m, in, true)
		}))
	}},
	{base: "get_memory_archive_summary", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "get_memory_archive_summary"}.name(l.global),
			Description: "Summarize the archive of " + l.what() + ": entries per type and tag, dates, size.",
			Annotations: readOnly("Summarize the archive"),
		}, handler(l, func(ctx context.Context, m *memsync.Memory, _ struct{}) (memsync.Summary, error) {
			return m.Summary(ctx, memsync.SummaryOptions{ArchiveOnly: true})
		}))
	}},
	{base: "restore_from_memory_archive", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "restore_from_memory_archive"}.name(l.global),
			Description: "Move an archived entry of " + l.what() + " back to the active memory, with its ID. Owners and admins only.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: falseP, IdempotentHint: true, OpenWorldHint: falseP, Title: "Restore a memory"},
		}, handler(l, func(ctx context.Context, m *memsync.Memory, in RefInput) (RestoreOutput, error) {
			restored, err := m.Restore(ctx, in.Key)
			if err != nil {
				return RestoreOutput{}, err
			}
			return RestoreOutput{Restored: restored}, nil
		}))
	}},
}

// sourceField is the bullet that keeps save_to_memory's caller_agent_id.
const sourceField = "Source"

// oneLine refuses a value that is not one line of printable text: it
// would break the entry's bullet, or hide in it (a bidi override, a line
// separator: memfile.Control, as in a title).
func oneLine(name, v string) error {
	switch {
	case strings.ContainsAny(v, "\n\r"):
		return fmt.Errorf("%w: the %s must be one line", memfile.ErrInvalid, name)
	case strings.IndexFunc(v, memfile.LineControl) >= 0:
		return fmt.Errorf("%w: the %s has a control character: %q", memfile.ErrInvalid, name, v)
	}
	return nil
}

func limitOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// search ranks the memory's entries (or its archive's) for the query.
func search(ctx context.Context, m *memsync.Memory, in RetrieveInput, archive bool) (Entries, error) {
	res, err := m.Search(ctx, in.Query, memsync.SearchOptions{View: memsync.View{Archive: archive},
		Limit: limitOr(in.Limit, defaultSearchLimit), Tags: in.Tags, Type: in.Type})
	if err != nil {
		return Entries{}, err
	}
	return Entries{Entries: res, Total: len(res)}, nil
}

// list returns the entries in view, newest (last in the file) first,
// filtered and paged.
func list(ctx context.Context, m *memsync.Memory, in ListInput, archive bool) (Entries, error) {
	all, err := m.List(ctx, memsync.View{Archive: archive})
	if err != nil {
		return Entries{}, err
	}
	all = memsync.Filtered(all, memsync.Filter{Author: in.Author, Branch: in.Branch, Agent: in.Agent})
	typ := memfile.NormalizeType(in.Type)
	out := Entries{Entries: []memsync.Entry{}}
	limit := limitOr(in.Limit, defaultListLimit)
	for i := len(all) - 1; i >= 0; i-- {
		e := &all[i]
		if (typ != "" && e.Type != typ) || !hasAll(e, in.Tags) {
			continue
		}
		if out.Total >= in.Offset && len(out.Entries) < limit {
			out.Entries = append(out.Entries, *e)
		}
		out.Total++
	}
	return out, nil
}
