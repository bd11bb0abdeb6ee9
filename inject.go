package memsync

import (
	"context"
	"fmt"
	"os"
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
	Memories string  `json:"memories"`
	Path     string  `json:"path,omitempty"` // the memory file read
	Entries  []Entry `json:"entries"`        // the chosen entries
	Omitted  int     `json:"omitted"`        // entries left out for the budget
	Filtered int     `json:"filtered"`       // entries the filter left out
	Budget   int     `json:"budget"`         // tokens
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
		Keep: m.injectable, User: m.gitEmail(), Stale: rec.StaleFunc()}
	res, entries, ok, err := m.injectIndexed(ctx, opts)
	if err != nil {
		return out, err
	}
	if !ok {
		f, err := m.load(ctx, View{})
		if err != nil {
			return out, err
		}
		if opts.Vectors, err = m.injectVectors(ctx, query, f); err != nil {
			return out, err
		}
		res = inject.Select(f, opts)
		entries = make([]*memfile.Entry, len(res.Chosen))
		for k, i := range res.Chosen {
			entries[k] = &f.Entries[i]
		}
	}
	if res.Block == "" && res.Omitted > 0 {
		m.warn(fmt.Sprintf("a budget of %d tokens leaves no room for any memory; %s", cfg.Budget, inject.Note(res.Omitted, res.Filtered)))
	}
	out.Path, out.Memories, out.Omitted, out.Filtered = m.store.Path(), res.Block, res.Omitted, res.Filtered
	ids := make([]string, 0, len(res.Chosen))
	for k, i := range res.Chosen {
		out.Entries = append(out.Entries, entryOf(entries[k], i+1))
		ids = append(ids, entries[k].ID)
	}
	markStale(rec, out.Entries)
	m.touch(ids...) // injected memories are in use (gc's TTL)
	if cfg.Mode() == config.Auto {
		out.Output = res.Prompt(prompt)
	}
	return out, nil
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
