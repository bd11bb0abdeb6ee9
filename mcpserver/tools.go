package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/memory"
)

// SaveInput are save_to_memory's arguments (seed 001, plus type and title).
type SaveInput struct {
	Content       string   `json:"content" jsonschema:"what to remember; any text, several lines are fine"`
	Key           string   `json:"key,omitempty" jsonschema:"a name to get the entry back by, e.g. api-auth-decision (one line, not a number)"`
	Title         string   `json:"title,omitempty" jsonschema:"heading of the entry (default: the content's first line)"`
	Type          string   `json:"type,omitempty" jsonschema:"kind of memory, e.g. pattern, decision, fix, solution"`
	Tags          []string `json:"tags,omitempty" jsonschema:"words to find the entry by"`
	CallerAgentID string   `json:"caller_agent_id,omitempty" jsonschema:"the agent that saves (kept as the entry's Source)"`
}

// SaveOutput is what save_to_memory returns.
type SaveOutput struct {
	Entry Entry  `json:"entry"`
	Path  string `json:"path" jsonschema:"the memory file"`
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

// Summary is what the summary tools return: the shape of the CLI's
// `memsync summary --json` (the archive tool leaves out active).
type Summary struct {
	Layer      string           `json:"layer" jsonschema:"project or global"`
	Session    string           `json:"session,omitempty"`
	Path       string           `json:"path" jsonschema:"the memory file"`
	Active     *memfile.Summary `json:"active,omitempty" jsonschema:"the active memory: entries, bytes, types, tags, oldest and newest date"`
	Archive    *memfile.Summary `json:"archive"`
	MaxBytes   int64            `json:"max_bytes" jsonschema:"size cap of the active file; past it the oldest entries are archived"`
	MaxEntries int              `json:"max_entries" jsonschema:"most active entries; past it gc archives the least recently used"`
	TTLDays    int              `json:"ttl_days" jsonschema:"gc archives entries not accessed for this many days"`
	Problems   int              `json:"problems,omitempty" jsonschema:"damaged lines found in the active file (what parses is still served)"`
}

// RestoreOutput is what a restore returns.
type RestoreOutput struct {
	Restored []Entry `json:"restored"`
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
			// What the entry carries besides its text; refused, never
			// dropped, when it could not be given back.
			var extra []memfile.Field
			if in.Key != "" {
				if err := memfile.CheckKey(in.Key); err != nil {
					return SaveOutput{}, err
				}
				extra = append(extra, memfile.Field{Key: memfile.KeyField, Value: strings.TrimSpace(in.Key)})
			}
			if err := oneLine("caller_agent_id", in.CallerAgentID); err != nil {
				return SaveOutput{}, err
			}
			if a := strings.TrimSpace(in.CallerAgentID); a != "" {
				extra = append(extra, memfile.Field{Key: memory.SourceKey, Value: a})
			}
			if l.opts.Session != "" {
				extra = append(extra, memfile.Field{Key: "Session", Value: l.opts.Session})
			}
			st, err := l.store()
			if err != nil {
				return SaveOutput{}, err
			}
			e := st.NewEntry(in.Type, in.Title, in.Content, in.Tags)
			e.Extra = extra
			if err := st.CheckDialect(&e, strings.TrimSpace(in.Title) != ""); err != nil {
				return SaveOutput{}, err
			}
			if l.beforeWrite != nil {
				if err := l.beforeWrite(); err != nil {
					return SaveOutput{}, err
				}
			}
			e, dup, err := st.Add(e)
			if err != nil {
				return SaveOutput{}, err
			}
			out := SaveOutput{Entry: toEntry(&e, 0), Path: st.Path()}
			out.Duplicate = map[memfile.Dup]string{memfile.DupActive: "active", memfile.DupArchived: "archive"}[dup]
			return out, nil
		}))
	}},
	{base: "retrieve_from_memory", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "retrieve_from_memory"}.name(l.global),
			Description: "Search " + l.what() + " by relevance (BM25 over title, tags, type and content), best first.",
			Annotations: readOnly("Search memories"),
		}, handler(l, func(_ context.Context, in RetrieveInput) (Entries, error) {
			st, f, err := l.load(false)
			if err != nil {
				return Entries{}, err
			}
			res := l.search(f, in.Query, in.Tags, in.Type, limitOr(in.Limit, memory.DefaultLimit))
			ids := make([]string, len(res))
			for k := range res {
				ids[k] = res[k].ID
			}
			l.touch(st, ids...)
			return Entries{Entries: res, Total: len(res)}, nil
		}))
	}},
	{base: "get_memory_entry", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "get_memory_entry"}.name(l.global),
			Description: "Get one entry of " + l.what() + " by key, ID or number.",
			Annotations: readOnly("Get a memory"),
		}, handler(l, func(_ context.Context, in RefInput) (Entry, error) {
			st, f, err := l.load(false)
			if err != nil {
				return Entry{}, err
			}
			i, err := f.Find(in.Key)
			if err != nil {
				return Entry{}, err
			}
			l.touch(st, f.Entries[i].ID)
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
			return l.list(f, in), nil
		}))
	}},
	{base: "delete_memory_entry", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "delete_memory_entry"}.name(l.global),
			Description: "Delete one entry of " + l.what() + " for good (it is not archived). Owners and admins only.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: trueP, IdempotentHint: true, OpenWorldHint: falseP, Title: "Delete a memory"},
		}, handler(l, func(_ context.Context, in RefInput) (DeleteOutput, error) {
			if err := l.opts.Role.Check("delete"); err != nil {
				return DeleteOutput{}, err
			}
			st, err := l.store()
			if err != nil {
				return DeleteOutput{}, err
			}
			var out DeleteOutput
			err = st.Update(func(f *memfile.File) error {
				i, err := f.Find(in.Key)
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
			Description: "Summarize " + l.what() + " and its archive: entries per type and tag, dates, size against the cap, the gc limits.",
			Annotations: readOnly("Summarize memories"),
		}, handler(l, func(_ context.Context, _ struct{}) (Summary, error) { return l.summary(false) }))
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
			res := l.search(f, in.Query, in.Tags, in.Type, limitOr(in.Limit, memory.DefaultLimit))
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
			return l.list(f, in), nil
		}))
	}},
	{base: "get_memory_archive_summary", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "get_memory_archive_summary"}.name(l.global),
			Description: "Summarize the archive of " + l.what() + ": entries per type and tag, dates, size.",
			Annotations: readOnly("Summarize the archive"),
		}, handler(l, func(_ context.Context, _ struct{}) (Summary, error) { return l.summary(true) }))
	}},
	{base: "restore_from_memory_archive", add: func(s *mcp.Server, l *layer) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        tool{base: "restore_from_memory_archive"}.name(l.global),
			Description: "Move an archived entry of " + l.what() + " back to the active memory, with its ID. Owners and admins only.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: falseP, IdempotentHint: true, OpenWorldHint: falseP, Title: "Restore a memory"},
		}, handler(l, func(_ context.Context, in RefInput) (RestoreOutput, error) {
			if err := l.opts.Role.Check("restore"); err != nil {
				return RestoreOutput{}, err
			}
			st, err := l.store()
			if err != nil {
				return RestoreOutput{}, err
			}
			moved, err := st.Move(memfile.ToActive, func(f *memfile.File) ([]int, error) {
				i, err := f.Find(in.Key)
				if err != nil {
					return nil, fmt.Errorf("%w in the archive", err)
				}
				return []int{i}, nil
			})
			if err != nil {
				return RestoreOutput{}, err
			}
			out := RestoreOutput{Restored: make([]Entry, len(moved))}
			for k := range moved {
				out.Restored[k] = toEntry(&moved[k], 0)
			}
			return out, nil
		}))
	}},
}

// oneLine refuses a value that is not one line of printable text: it
// would break the entry's bullet, or hide in it.
func oneLine(name, v string) error {
	switch {
	case strings.ContainsAny(v, "\n\r"):
		return fmt.Errorf("%w: the %s must be one line", memfile.ErrInvalid, name)
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
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

// list returns the entries in view, newest (last in the file) first,
// filtered and paged.
func (l *layer) list(f *memfile.File, in ListInput) Entries {
	typ := memfile.NormalizeType(in.Type)
	out := Entries{Entries: []Entry{}}
	limit := limitOr(in.Limit, defaultListLimit)
	for i := len(f.Entries) - 1; i >= 0; i-- {
		e := &f.Entries[i]
		if (typ != "" && e.Type != typ) || !hasAll(e, in.Tags) || !l.inScope(e) {
			continue
		}
		if out.Total >= in.Offset && len(out.Entries) < limit {
			out.Entries = append(out.Entries, toEntry(e, i+1))
		}
		out.Total++
	}
	return out
}

// summary summarizes the layer's view of its files.
func (l *layer) summary(archiveOnly bool) (Summary, error) {
	st, err := l.store()
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{Layer: "project", Session: l.opts.Session, Path: st.Path(), MaxBytes: st.MaxBytes}
	if l.global {
		sum.Layer = "global"
	}
	if sum.MaxBytes <= 0 {
		sum.MaxBytes = memfile.DefaultMaxBytes
	}
	lim := memfile.DefaultLimits
	if st.Limits != nil {
		lim = *st.Limits
	}
	sum.MaxEntries, sum.TTLDays = lim.MaxEntries, int(lim.TTL/(24*time.Hour))
	view := func(f *memfile.File, path string) *memfile.Summary {
		in := &memfile.File{}
		for i := range f.Entries {
			if l.inScope(&f.Entries[i]) {
				in.Entries = append(in.Entries, f.Entries[i])
			}
		}
		s := memfile.Summarize(in)
		s.Bytes = fileSize(st, path)
		return &s
	}
	if !archiveOnly {
		f, err := st.Load()
		if err != nil {
			return Summary{}, err
		}
		sum.Active, sum.Problems = view(f, st.Path()), len(f.Problems)
	}
	a, err := st.LoadArchive()
	if err != nil {
		return Summary{}, err
	}
	sum.Archive = view(a, st.ArchivePath())
	return sum, nil
}
