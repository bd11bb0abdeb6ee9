package memsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/memsync/memsync/internal/config"
	"github.com/memsync/memsync/internal/gitconfig"
	"github.com/memsync/memsync/internal/inject"
	"github.com/memsync/memsync/memfile"
)

// InjectOptions override, for one Inject, what the configuration sets
// (orch.yml's memories block, .agent/memsync.yml, MEMSYNC_ENABLED,
// MEMSYNC_INJECT, MEMSYNC_BUDGET). Nil and "" leave the configuration's.
type InjectOptions struct {
	// Mode is how the memories reach the prompt: "auto" (put before it),
	// "manual" (the prompt is left as it is; the agent reads them apart) or
	// "none". Memories disabled in the configuration (enabled: false) make
	// it none whatever Mode says.
	Mode string
	// Budget is the most tokens of memory to add (about 4 bytes each; 0:
	// no limit).
	Budget *int
	// Query is what memories are ranked for; nil is the prompt.
	Query *string
	// Types, Tags and RecentDays narrow which memories may be injected
	// (only these types; only entries with one of these tags; only entries
	// dated within this many days, 0: all). A nil list leaves the
	// configuration's; an empty one lifts it.
	Types      []string
	Tags       []string
	RecentDays *int
	// AllTags keeps only entries with all of these tags (the configuration
	// sets none).
	AllTags []string
	// NoGlobal leaves out the global layer. Without it, Inject on a
	// repository's memory ranks the global layer's entries (the layer
	// Options.Global opens, when its folder exists: Inject never creates
	// it) together with the project's, under the one budget and filter;
	// the block marks them "(global)" and their Layer is "global". An entry
	// of the global layer whose ID the project's memory has is left out.
	NoGlobal bool

	// The agent hooks' own (AgentContext): skip leaves out entries by ID
	// (a session has them), matching keeps only the entries the query
	// matches, use ranks by how often an entry was read, and noTouch does
	// not count the chosen entries as read.
	skip     func(id string) bool
	matching bool
	use      func(id string) float64
	noTouch  bool
}

// InjectResult is a prompt with the memories put into it (the JSON of
// `memsync inject --json`; docs/commands.md documents it).
type InjectResult struct {
	Mode    string `json:"mode"`    // the mode in effect
	Enabled bool   `json:"enabled"` // memories are enabled in the configuration
	Prompt  string `json:"prompt"`  // the prompt as given
	// Output is the prompt for the agent: with Mode auto, the memory block
	// ("# Memories", a one-line notice, the chosen entries quoted in a
	// fence), "---", "# Task", then the prompt; else the prompt.
	Output string `json:"output"`
	// Memories is the block of chosen memories (manual mode gives it to the
	// agent apart from the prompt).
	Memories string `json:"memories"`
	Path     string `json:"path,omitempty"` // the memory file read
	// Entries are the chosen entries, best first; each one's Layer is
	// "project" or "global".
	Entries  []Entry `json:"entries"`
	Omitted  int     `json:"omitted"`  // entries left out for the budget
	Filtered int     `json:"filtered"` // entries the filter left out
	Budget   int     `json:"budget"`   // tokens
}

// settings are the injection settings in effect: the configuration Open
// read with o's overrides.
func (o InjectOptions) settings(cfg config.Config) config.Config {
	if o.Mode != "" {
		cfg.Inject = config.Mode(o.Mode)
	}
	if o.Budget != nil {
		cfg.Budget = *o.Budget
	}
	if o.Types != nil {
		cfg.Filter.Types = o.Types
	}
	if o.Tags != nil {
		cfg.Filter.Tags = o.Tags
	}
	if o.RecentDays != nil {
		cfg.Filter.RecentDays = *o.RecentDays
	}
	cfg.Filter.AllTags = o.AllTags
	return cfg
}

// Inject chooses the memories for an agent's prompt (orch's
// memories.inject): under the budget, entries in the session's
// view are ranked by relevance to the query blended with recency (fixes and
// solutions get a bonus); entries are never cut. The chosen entries count
// as accessed. With mode none no memory is read.
func (m *Memory) Inject(ctx context.Context, prompt string, o InjectOptions) (InjectResult, error) {
	if err := ctx.Err(); err != nil {
		return InjectResult{}, err
	}
	if o.Mode != "" {
		mode, err := config.ParseMode(o.Mode)
		if err != nil {
			return InjectResult{}, &ConfigError{fmt.Errorf("mode: %w", err)}
		}
		o.Mode = string(mode)
	}
	if o.Budget != nil && *o.Budget < 0 {
		return InjectResult{}, fmt.Errorf("the budget must be 0 or more tokens, not %d", *o.Budget)
	}
	cfg := o.settings(m.cfg)
	out := InjectResult{Mode: string(cfg.Mode()), Enabled: cfg.Enabled, Prompt: prompt, Output: prompt, Entries: []Entry{}, Budget: cfg.Budget}
	if cfg.Mode() == config.None {
		return out, nil
	}
	query := prompt
	if o.Query != nil {
		query = *o.Query
	}
	rec := m.marks()
	opts := inject.Options{Budget: cfg.Budget * config.BytesPerToken, Query: query, Filter: cfg.Filter,
		Keep: m.injectable, User: m.gitEmail(), Stale: rec.StaleFunc(), Matching: o.matching}
	if brought := m.Arrived(); len(brought) > 0 {
		opts.BroughtBy = func(e *memfile.Entry) string { return brought[e.ID] }
	}
	if o.skip != nil {
		opts.Skip = func(e *memfile.Entry) bool { return o.skip(e.ID) }
	}
	if o.use != nil {
		opts.Use = func(e *memfile.Entry) float64 { return o.use(e.ID) }
	}
	layers := []*Memory{m}
	from := func(i int) origin { return origin{0, i} } // where chosen entry i came from
	opts.Global = func(i int) bool { return layers[from(i).layer].repo == nil }
	var res inject.Result
	var picked []*memfile.Entry // the chosen entries, in res.Chosen's order
	g, gf := m.globalLayer(ctx, o)
	ok := false
	if g == nil { // the project's memory alone: its search index may choose
		var err error
		if res, picked, ok, err = m.injectIndexed(ctx, opts); err != nil {
			return out, err
		}
	}
	if !ok {
		f, err := m.load(ctx, View{})
		if err != nil {
			return out, err
		}
		files := []*memfile.File{f}
		if g != nil {
			layers, files = append(layers, g), append(files, gf)
		}
		all, at := f, []origin(nil) // the entries to choose from; at[i]: where entry i came from (nil: f alone)
		if len(files) > 1 {
			all, at = joinLayers(files)
			from = func(i int) origin { return at[i] }
		}
		if opts.Vectors, err = m.injectVectors(ctx, query, layers, files, all, at); err != nil {
			return out, err
		}
		res = inject.Select(all, opts)
		picked = make([]*memfile.Entry, len(res.Chosen))
		for k, i := range res.Chosen {
			picked[k] = &all.Entries[i]
		}
	}
	if res.Block == "" && res.Omitted > 0 {
		m.warn(fmt.Sprintf("a budget of %d tokens leaves no room for any memory; %s", cfg.Budget, inject.Note(res.Omitted, res.Filtered)))
	}
	out.Path, out.Memories, out.Omitted, out.Filtered = m.store.Path(), res.Block, res.Omitted, res.Filtered
	ids := make([][]string, len(layers))
	for k, i := range res.Chosen {
		src := from(i)
		x := entryOf(picked[k], src.i+1)
		x.Layer = layers[src.layer].layerName()
		out.Entries = append(out.Entries, x)
		if src.layer == 0 { // the record is the project's
			markStale(rec, out.Entries[len(out.Entries)-1:])
		}
		ids[src.layer] = append(ids[src.layer], x.ID)
	}
	for k, l := range layers {
		if !o.noTouch {
			l.touch(ids[k]...) // injected memories are in use (gc's TTL)
		}
	}
	if cfg.Mode() == config.Auto {
		out.Output = res.Prompt(prompt)
	}
	return out, nil
}

// globalLayer is the global layer Inject ranks with a repository's memory,
// and its active file: nil with NoGlobal, for the global layer itself, and
// when the global folder does not exist. A global layer that cannot be
// read is left out with a warning: the project's memories still go in.
func (m *Memory) globalLayer(ctx context.Context, o InjectOptions) (*Memory, *memfile.File) {
	if o.NoGlobal || m.repo == nil {
		return nil, nil
	}
	dir, err := globalDir()
	if err != nil {
		if errors.As(err, new(*ConfigError)) {
			m.warn("the global layer is left out: " + err.Error())
		}
		return nil, nil // no home folder: no global layer
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	opts := m.opts
	opts.Global = true
	g, err := Open("", opts)
	var f *memfile.File
	if err == nil {
		f, err = g.load(ctx, View{})
	}
	if err != nil {
		if ctx.Err() == nil {
			m.warn("the global layer is left out: " + err.Error())
		}
		return nil, nil
	}
	return g, f
}

// joinLayers is the entries of files (the project's first) as one file,
// and where each came from; an entry of a later file whose ID an earlier
// one has is left out.
func joinLayers(files []*memfile.File) (*memfile.File, []origin) {
	n := 0
	for _, f := range files {
		n += len(f.Entries)
	}
	all := &memfile.File{Entries: make([]memfile.Entry, 0, n)}
	at := make([]origin, 0, n)
	seen := make(map[string]bool, n)
	for k, f := range files {
		for i := range f.Entries {
			if id := f.Entries[i].ID; !seen[id] {
				seen[id] = true
				all.Entries = append(all.Entries, f.Entries[i])
				at = append(at, origin{k, i})
			}
		}
	}
	return all, slices.Clip(at)
}

// gitEmail is the email of the current git user, as git would name them in
// a commit: GIT_AUTHOR_EMAIL, else user.email of the repository's effective
// configuration; "" when neither is set, and for the global layer without
// GIT_AUTHOR_EMAIL (no repository to read).
func (m *Memory) gitEmail() string {
	if v := strings.TrimSpace(os.Getenv("GIT_AUTHOR_EMAIL")); v != "" {
		return v
	}
	if m.repo == nil {
		return ""
	}
	v, _ := gitconfig.Effective(m.repo.CommonDir, m.repo.GitDir).Get("user.email")
	return strings.TrimSpace(v)
}
