package memsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/memfile"
)

// Archive moves the entries refs name (as Get resolves them in the active
// memory) to the archive, with the same IDs, and returns them. The archive
// is written before the entries leave the active file, under the one lock:
// a crash leaves an entry in both files, never in neither. Every reference
// is resolved first: one that names nothing moves nothing. Owner and admin
// only.
func (m *Memory) Archive(ctx context.Context, refs ...string) ([]Entry, error) {
	return m.move(ctx, policy.OpArchive, store.ToArchive, refs)
}

// Restore moves the archived entries refs name back to the active memory,
// with the same IDs, and returns them. A number is the entry's place in the
// archive as List(ctx, View{Archive: true}) numbers it. An entry holding a
// secret stays archived (ErrSecret, nothing moves) unless ctx comes from
// AllowSecrets. Owner and admin only.
func (m *Memory) Restore(ctx context.Context, refs ...string) ([]Entry, error) {
	return m.move(ctx, policy.OpRestore, store.ToActive, refs)
}

// move is Archive and Restore: op is the operation the role must be allowed.
func (m *Memory) move(ctx context.Context, op policy.Op, dir store.Direction, refs []string) ([]Entry, error) {
	what := "archive"
	if dir == store.ToActive {
		what = "restore"
	}
	st, err := m.beginWrite(ctx, op, what)
	if err != nil {
		return nil, err
	}
	from := m.store.Path()
	if dir == store.ToActive {
		from = m.store.ArchivePath()
	}
	moved, err := st.Move(dir, func(f *memfile.File) ([]int, error) {
		m.reportDamage(from, f)
		idx, err := f.FindAll(refs)
		if err != nil && dir == store.ToActive {
			return nil, fmt.Errorf("%w in the archive", err)
		}
		if dir == store.ToActive {
			for _, i := range idx {
				if err := m.admitSecrets(ctx, &f.Entries[i]); err != nil {
					return nil, fmt.Errorf("the archived entry %s: %w; nothing was restored", f.Entries[i].ID, err)
				}
			}
		}
		return idx, err
	})
	if err != nil {
		return nil, err
	}
	return entriesOf(moved, ""), nil
}

// entriesOf converts entries a store operation returned (unnumbered), each
// with layer as its Layer.
func entriesOf(es []memfile.Entry, layer string) []Entry {
	out := make([]Entry, len(es))
	for i := range es {
		out[i] = entryOf(&es[i], 0)
		out[i].Layer = layer
	}
	return out
}

// GCOptions set up a GC.
type GCOptions struct {
	DryRun bool // report what would move; change nothing (allowed to every role)
}

// GCResult is what GC did (the JSON of `memsync gc --json`).
type GCResult struct {
	DryRun     bool    `json:"dry_run"`
	MaxEntries int     `json:"max_entries"`
	TTLDays    int     `json:"ttl_days"`
	Moved      []Entry `json:"moved"` // with DryRun: what would move
}

// GC moves to the archive (never deletes) the entries not accessed for the
// TTL, then, while more than the max count remain, the least recently
// accessed (Options.MaxEntries and TTLDays). Owner and admin only,
// except a dry run.
func (m *Memory) GC(ctx context.Context, o GCOptions) (GCResult, error) {
	st := m.st(ctx)
	if o.DryRun {
		if err := ctx.Err(); err != nil {
			return GCResult{}, err
		}
	} else {
		var err error
		if st, err = m.beginWrite(ctx, policy.OpGC, "gc"); err != nil {
			return GCResult{}, err
		}
	}
	lim := m.limits()
	moved, err := st.GC(lim, o.DryRun)
	if err != nil {
		return GCResult{}, err
	}
	return GCResult{DryRun: o.DryRun, MaxEntries: lim.MaxEntries, TTLDays: days(lim.TTL), Moved: entriesOf(moved, "")}, nil
}

func days(d time.Duration) int { return int(d / (24 * time.Hour)) }

// SummaryOptions choose what Summary covers.
type SummaryOptions struct {
	ArchiveOnly bool // the archive only (Summary.Active is nil)
}

// Summary is the state of a memory and its archive: the JSON of `memsync
// summary --json` and of the MCP summary tools (docs/commands.md documents it).
type Summary struct {
	Layer      string       `json:"layer" jsonschema:"project or global"`
	Session    string       `json:"session,omitempty"`
	Path       string       `json:"path" jsonschema:"the memory file"`
	Active     *FileSummary `json:"active,omitempty" jsonschema:"the active memory: entries, bytes, types, tags, oldest and newest date"`
	Archive    *FileSummary `json:"archive"`
	MaxBytes   int64        `json:"max_bytes" jsonschema:"size cap of the active file; past it the oldest entries are archived"`
	MaxEntries int          `json:"max_entries" jsonschema:"most active entries; past it gc archives the least recently used"`
	TTLDays    int          `json:"ttl_days" jsonschema:"gc archives entries not accessed for this many days"`
	Problems   int          `json:"problems,omitempty" jsonschema:"damaged lines found in the active file (what parses is still served)"`
}

// FileSummary describes a memory file: counts by type and tag, the range
// of dates, the size.
type FileSummary struct {
	Entries int            `json:"entries"`
	Bytes   int64          `json:"bytes"` // the file's size on disk
	Types   map[string]int `json:"types"` // "" counts entries without a type
	Tags    map[string]int `json:"tags"`
	Oldest  string         `json:"oldest,omitempty"` // smallest Date
	Newest  string         `json:"newest,omitempty"` // largest Date
}

// Summary counts the entries in the session's view of the memory and its
// archive (by type and by tag, oldest and newest date), with the files'
// sizes and the limits.
func (m *Memory) Summary(ctx context.Context, o SummaryOptions) (Summary, error) {
	lim := m.limits()
	maxBytes := m.store.MaxBytes
	if maxBytes <= 0 {
		maxBytes = store.DefaultMaxBytes
	}
	out := Summary{Layer: m.layerName(), Session: m.session, Path: m.Path(), MaxBytes: maxBytes,
		MaxEntries: lim.MaxEntries, TTLDays: days(lim.TTL)}
	views := []View{{Archive: true}}
	if !o.ArchiveOnly {
		views = append(views, View{})
	}
	for _, v := range views {
		f, err := m.load(ctx, v)
		if err != nil {
			return Summary{}, err
		}
		in := &memfile.File{}
		for i := range f.Entries {
			if m.inView(&f.Entries[i]) {
				in.Entries = append(in.Entries, f.Entries[i])
			}
		}
		s := FileSummary(memfile.Summarize(in))
		if v.Archive {
			s.Bytes = m.fileSize(m.ArchivePath())
			out.Archive = &s
		} else {
			s.Bytes = m.fileSize(m.Path())
			out.Active, out.Problems = &s, len(f.Problems)
		}
	}
	return out, nil
}

// fileSize is the size of a memory file (after its links), 0 when there is none.
func (m *Memory) fileSize(path string) int64 {
	target, err := m.store.Resolve(path)
	if err != nil {
		return 0
	}
	fi, err := os.Stat(target)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Promote copies the entries refs name to the global layer, with the same
// IDs and content and a "Promoted-From" bullet naming the repository, then
// moves the project copies to the project's archive; it returns the global
// copies (Layer "global"). The global copy is written first, so a crash
// leaves an entry in both layers, never in neither; an entry the global
// layer already holds only has its project copy archived. An entry holding
// a secret stops the promotion before anything is written (ErrSecret)
// unless ctx comes from AllowSecrets. The global layer is opened with this
// Memory's Options. Owner and admin only.
func (m *Memory) Promote(ctx context.Context, refs ...string) ([]Entry, error) {
	if m.repo == nil {
		return nil, errors.New("promote copies from a project's memory to the global layer; this is the global layer")
	}
	st, err := m.beginWrite(ctx, policy.OpPromote, "promote")
	if err != nil {
		return nil, err
	}
	f, err := m.load(ctx, View{})
	if err != nil {
		return nil, err
	}
	idx, err := f.FindAll(refs)
	if err != nil {
		return nil, err
	}
	o := m.opts
	o.Global = true
	g, err := Open("", o)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	from := m.repo.Primary
	if from == "" { // a bare repository
		from = m.repo.CommonDir
	}
	ids := map[string]bool{}
	copies := make([]memfile.Entry, 0, len(idx))
	for _, i := range idx {
		e := f.Entries[i] // f is shared: copy what SetField changes
		e.Extra = append([]memfile.Field(nil), e.Extra...)
		e.SetField("Promoted-From", from)
		if err := m.admitSecrets(ctx, &e); err != nil {
			return nil, fmt.Errorf("the entry %s: %w; nothing was promoted", e.ID, err)
		}
		ids[e.ID] = true
		copies = append(copies, e)
	}
	if _, _, err := g.store.Import(copies, nil); err != nil {
		return nil, fmt.Errorf("write the global layer: %w", err)
	}
	if _, err := st.Move(store.ToArchive, func(f *memfile.File) ([]int, error) {
		var out []int
		for i := range f.Entries {
			if ids[f.Entries[i].ID] {
				out = append(out, i)
			}
		}
		return out, nil
	}); err != nil {
		return nil, err
	}
	return entriesOf(copies, "global"), nil
}

// ImportResult is what Import did (the JSON of `memsync import --json`).
type ImportResult struct {
	Added   []Entry `json:"added"`
	Skipped int     `json:"skipped"` // entries whose ID or content was already stored
	// Archived is how many of Added went to the archive.
	Archived int `json:"-"`
}

// ImportError is a source Import could not read; nothing was imported.
type ImportError struct {
	Path string
	Err  error
}

func (e *ImportError) Error() string { return e.Err.Error() }

// Unwrap returns the reading error.
func (e *ImportError) Unwrap() error { return e.Err }

// Import adds memories kept by other tools (a folder of front-matter
// files, ralph's and orch's memories.md), archived
// ones to the archive, skipping any whose ID or content is already stored,
// so importing twice adds nothing (a relative path is relative to the
// current folder). Every source is read before anything is
// written. An entry that records no provenance gets the importer's (see
// Add). An entry holding a secret stops the import before anything is
// written (ErrSecret) unless ctx comes from AllowSecrets. Owner and admin only.
func (m *Memory) Import(ctx context.Context, paths ...string) (ImportResult, error) {
	if err := ctx.Err(); err != nil {
		return ImportResult{}, err
	}
	if err := m.allow(policy.OpImport); err != nil {
		return ImportResult{}, err
	}
	var active, archived []memfile.Entry
	for _, p := range paths {
		a, b, err := store.ReadForeign(p)
		if err != nil {
			return ImportResult{}, &ImportError{Path: p, Err: err}
		}
		active, archived = append(active, a...), append(archived, b...)
	}
	who := m.writer()
	for _, es := range [][]memfile.Entry{active, archived} {
		for i := range es {
			if err := m.admitSecrets(ctx, &es[i]); err != nil {
				return ImportResult{}, fmt.Errorf("the entry %s: %w; nothing was imported", es[i].ID, err)
			}
			who.Stamp(&es[i])
		}
	}
	if err := m.beforeWrite(); err != nil {
		return ImportResult{}, err
	}
	added, skipped, err := m.st(ctx).Import(active, archived)
	if err != nil {
		return ImportResult{}, err
	}
	inArchive := map[string]bool{}
	for _, e := range archived {
		inArchive[e.ID] = true
	}
	out := ImportResult{Added: entriesOf(added, ""), Skipped: skipped}
	for _, e := range added {
		if inArchive[e.ID] {
			out.Archived++
		}
	}
	return out, nil
}
