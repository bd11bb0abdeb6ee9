package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/memory"
)

// SaveInput are save_to_memory's arguments (seed 001, plus type and title).
type SaveInput struct {
	Content       string   `json:"content" jsonschema:"what to remember; any text, several lines are fine"`
	Key           string   `json:"key,omitempty" jsonschema:"a name to get the entry back by, e.g. api-auth-decision"`
	Title         string   `json:"title,omitempty" jsonschema:"heading of the entry (default: the content's first line)"`
	Type          string   `json:"type,omitempty" jsonschema:"kind of memory, e.g. pattern, decision, fix, solution"`
	Tags          []string `json:"tags,omitempty" jsonschema:"words to find the entry by"`
	CallerAgentID string   `json:"caller_agent_id,omitempty" jsonschema:"the agent that saves (kept as the entry's Source)"`
}

// SaveOutput is what save_to_memory returns.
type SaveOutput struct {
	Entry Entry  `json:"entry"`
	Path  string `json:"path" jsonschema:"the memory file"`
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
	Key string `json:"key" jsonschema:"the entry: the key it was saved with, its ID (or a unique prefix of 4+ characters), or its number in the list"`
}

// ListInput are the list tools' arguments.
type ListInput struct {
	Tags   []string `json:"tags,omitempty" jsonschema:"only entries with all these tags"`
	Type   string   `json:"type,omitempty" jsonschema:"only entries of this type"`
	Limit  int      `json:"limit,omitempty" jsonschema:"at most this many entries, newest first (default 50)"`
	Offset int      `json:"offset,omitempty" jsonschema:"skip this many of the newest first"`
}

// Entries is a list of entries; Total counts all that matched.
type Entries struct {
	Entries []Entry `json:"entries"`
	Total   int     `json:"total"`
}

// DeleteOutput is what a delete returns.
type DeleteOutput struct {
	Deleted Entry `json:"deleted"`
}

// Summary describes one memory file.
type Summary struct {
	Path     string         `json:"path"`
	Entries  int            `json:"entries"`
	Bytes    int64          `json:"bytes" jsonschema:"size of the file"`
	MaxBytes int64          `json:"max_bytes,omitempty" jsonschema:"size cap; past it the oldest entries are archived"`
	Types    map[string]int `json:"types" jsonschema:"entries per type"`
	Tags     map[string]int `json:"tags" jsonschema:"entries per tag"`
	Oldest   string         `json:"oldest,omitempty" jsonschema:"date of the oldest entry"`
	Newest   string         `json:"newest,omitempty" jsonschema:"date of the newest entry"`
	Problems int            `json:"problems,omitempty" jsonschema:"damaged lines found (what parses is still served)"`
	Archived int            `json:"archived,omitempty" jsonschema:"entries in the archive"`
}

const defaultListLimit = 50

var tools = []tool{
	{base: "save_to_memory", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "save_to_memory"}.name(l.global),
			Description: "Save a memory to " + l.what() + ": a decision and its reason, a fix, a pattern, a preference. Not for task progress or passing errors.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: falseP, OpenWorldHint: falseP, Title: "Save a memory"},
		}, handler(l, func(_ context.Context, in SaveInput) (SaveOutput, error) {
			if strings.TrimSpace(in.Content) == "" {
				return SaveOutput{}, errors.New("the content is empty; give the text to remember in 'content'")
			}
			st, err := l.store()
			if err != nil {
				return SaveOutput{}, err
			}
			if l.beforeWrite != nil {
				if err := l.beforeWrite(); err != nil {
					return SaveOutput{}, err
				}
			}
			e := st.NewEntry(in.Type, in.Title, in.Content, in.Tags)
			if k := strings.TrimSpace(in.Key); k != "" {
				if strings.ContainsAny(k, "\n\r") {
					return SaveOutput{}, fmt.Errorf("%w: the key must be one line", memfile.ErrInvalid)
				}
				e.Extra = append(e.Extra, memfile.Field{Key: keyField, Value: k})
			}
			if a := strings.TrimSpace(in.CallerAgentID); a != "" && !strings.ContainsAny(a, "\n\r") {
				e.Extra = append(e.Extra, memfile.Field{Key: memory.SourceKey, Value: a})
			}
			e, err = st.Append(e)
			if err != nil {
				return SaveOutput{}, err
			}
			return SaveOutput{Entry: toEntry(&e, 0), Path: st.Path()}, nil
		}))
	}},
	{base: "retrieve_from_memory", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "retrieve_from_memory"}.name(l.global),
			Description: "Search " + l.what() + " by relevance (BM25 over title, tags, type and content), best first.",
			Annotations: readOnly("Search memories"),
		}, handler(l, func(_ context.Context, in RetrieveInput) (Entries, error) {
			_, f, err := l.load(false)
			if err != nil {
				return Entries{}, err
			}
			res := search(f, in.Query, in.Tags, in.Type, limitOr(in.Limit, memory.DefaultLimit))
			return Entries{Entries: res, Total: len(res)}, nil
		}))
	}},
	{base: "get_memory_entry", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "get_memory_entry"}.name(l.global),
			Description: "Get one entry of " + l.what() + " by key, ID or number.",
			Annotations: readOnly("Get a memory"),
		}, handler(l, func(_ context.Context, in RefInput) (Entry, error) {
			_, f, err := l.load(false)
			if err != nil {
				return Entry{}, err
			}
			i, err := find(f, in.Key)
			if err != nil {
				return Entry{}, err
			}
			return toEntry(&f.Entries[i], i+1), nil
		}))
	}},
	{base: "list_memory_entries", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "list_memory_entries"}.name(l.global),
			Description: "List entries of " + l.what() + ", newest first, with their numbers and IDs.",
			Annotations: readOnly("List memories"),
		}, handler(l, func(_ context.Context, in ListInput) (Entries, error) {
			_, f, err := l.load(false)
			if err != nil {
				return Entries{}, err
			}
			return list(f, in), nil
		}))
	}},
	{base: "delete_memory_entry", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "delete_memory_entry"}.name(l.global),
			Description: "Delete one entry of " + l.what() + " for good (it is not archived). Owners and admins only.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: trueP, IdempotentHint: true, OpenWorldHint: falseP, Title: "Delete a memory"},
		}, handler(l, func(_ context.Context, in RefInput) (DeleteOutput, error) {
			if err := l.role.Allow(memory.OpDelete); err != nil {
				return DeleteOutput{}, err
			}
			st, err := l.store()
			if err != nil {
				return DeleteOutput{}, err
			}
			var out DeleteOutput
			err = st.Update(func(f *memfile.File) error {
				i, err := find(f, in.Key)
				if err != nil {
					return err
				}
				out.Deleted = toEntry(&f.Entries[i], i+1)
				f.Entries = append(f.Entries[:i], f.Entries[i+1:]...)
				return nil
			})
			return out, err
		}))
	}},
	{base: "get_memory_summary", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "get_memory_summary"}.name(l.global),
			Description: "Summarize " + l.what() + ": entries per type and tag, dates, size against the cap, archived entries.",
			Annotations: readOnly("Summarize memories"),
		}, handler(l, func(_ context.Context, _ struct{}) (Summary, error) {
			st, f, err := l.load(false)
			if err != nil {
				return Summary{}, err
			}
			sum := summarize(f, st.Path(), fileSize(st, st.Path()))
			sum.MaxBytes = st.MaxBytes
			if sum.MaxBytes <= 0 {
				sum.MaxBytes = memfile.DefaultMaxBytes
			}
			if a, err := st.LoadArchive(); err == nil {
				sum.Archived = len(a.Entries)
			}
			return sum, nil
		}))
	}},
	{base: "search_memory_archive", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "search_memory_archive"}.name(l.global),
			Description: "Search the archive of " + l.what() + " (entries moved out by the size cap or by archiving), best first.",
			Annotations: readOnly("Search the archive"),
		}, handler(l, func(_ context.Context, in RetrieveInput) (Entries, error) {
			_, f, err := l.load(true)
			if err != nil {
				return Entries{}, err
			}
			res := search(f, in.Query, in.Tags, in.Type, limitOr(in.Limit, memory.DefaultLimit))
			return Entries{Entries: res, Total: len(res)}, nil
		}))
	}},
	{base: "list_memory_archive", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "list_memory_archive"}.name(l.global),
			Description: "List the archive of " + l.what() + ", newest first.",
			Annotations: readOnly("List the archive"),
		}, handler(l, func(_ context.Context, in ListInput) (Entries, error) {
			_, f, err := l.load(true)
			if err != nil {
				return Entries{}, err
			}
			return list(f, in), nil
		}))
	}},
	{base: "get_memory_archive_summary", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "get_memory_archive_summary"}.name(l.global),
			Description: "Summarize the archive of " + l.what() + ": entries per type and tag, dates, size.",
			Annotations: readOnly("Summarize the archive"),
		}, handler(l, func(_ context.Context, _ struct{}) (Summary, error) {
			st, f, err := l.load(true)
			if err != nil {
				return Summary{}, err
			}
			return summarize(f, st.ArchivePath(), fileSize(st, st.ArchivePath())), nil
		}))
	}},
}

func limitOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// list returns entries newest (last in the file) first, filtered and paged.
func list(f *memfile.File, in ListInput) Entries {
	typ := memfile.NormalizeType(in.Type)
	out := Entries{Entries: []Entry{}}
	limit := limitOr(in.Limit, defaultListLimit)
	for i := len(f.Entries) - 1; i >= 0; i-- {
		e := &f.Entries[i]
		if (typ != "" && e.Type != typ) || !hasAll(e, in.Tags) {
			continue
		}
		if out.Total >= in.Offset && len(out.Entries) < limit {
			out.Entries = append(out.Entries, toEntry(e, i+1))
		}
		out.Total++
	}
	return out
}

func summarize(f *memfile.File, path string, size int64) Summary {
	sum := Summary{Path: path, Entries: len(f.Entries), Bytes: size, Types: map[string]int{}, Tags: map[string]int{}, Problems: len(f.Problems)}
	var dates []string
	for i := range f.Entries {
		e := &f.Entries[i]
		t := e.Type
		if t == "" {
			t = "(none)"
		}
		sum.Types[t]++
		for _, tag := range e.Tags {
			sum.Tags[strings.ToLower(tag)]++
		}
		if e.Date != "" {
			dates = append(dates, e.Date)
		}
	}
	if len(dates) > 0 {
		sort.Strings(dates)
		sum.Oldest, sum.Newest = dates[0], dates[len(dates)-1]
	}
	return sum
}
