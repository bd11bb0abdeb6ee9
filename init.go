package memsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/worktree"
)

// InitOptions are Init's.
type InitOptions struct {
	// MergeDriver sets up memsync's merge driver, for a .agent/memories.md
	// that branches track: merge.memsync.driver in the repository's git
	// config and the attribute line in <git common dir>/info/attributes.
	MergeDriver bool
	// Executable is the memsync binary the merge driver runs; "" is this
	// program (os.Executable).
	Executable string
}

// InitResult is what Init did (the JSON of `memsync init --json`).
type InitResult struct {
	Home     string   `json:"home"`
	File     string   `json:"file"`
	Created  bool     `json:"created"`  // the memory file was created
	Excluded []string `json:"excluded"` // patterns added to info/exclude
	Tracked  bool     `json:"tracked"`  // git tracks .agent/memories.md on the primary's branch
	// MergeDriver is set with InitOptions.MergeDriver.
	MergeDriver *MergeDriver `json:"merge_driver,omitempty"`
	// MergeDriverSet tells that an attribute routes the memory file to
	// memsync's merge driver (tracking it is then on purpose).
	MergeDriverSet bool `json:"-"`
	// ExcludeFile is the common info/exclude Excluded went to ("" on the
	// global layer).
	ExcludeFile string `json:"-"`
	// Layout is where the repository keeps its memory, "agent" or "ralph"
	// (see SetLayout; "" on the global layer), LayoutWhy why (the git config memsync.layout, or what the
	// primary worktree holds), and RelFile the memory file relative to a
	// worktree's top.
	Layout    string `json:"-"`
	LayoutWhy string `json:"-"`
	RelFile   string `json:"-"`
}

// MergeDriver is the merge driver Init set up.
type MergeDriver struct {
	Driver     string `json:"driver"`     // merge.memsync.driver
	Attributes string `json:"attributes"` // the file the attribute line is in
	Line       string `json:"line"`       // the attribute line
}

// Init sets up the memory home: creates the memory file if there is none
// and, in a repository, adds the memory files to the common info/exclude so
// git status stays clean in every worktree (and the merge driver, with
// InitOptions.MergeDriver). Idempotent.
func (m *Memory) Init(ctx context.Context, o InitOptions) (InitResult, error) {
	if err := ctx.Err(); err != nil {
		return InitResult{}, err
	}
	if o.MergeDriver && m.repo == nil {
		return InitResult{}, ErrGlobalLayer
	}
	if o.MergeDriver {
		// A memory merged by a driver is a file its branches track: it
		// lives in the primary worktree, where git keeps it.
		if err := worktree.UseWorktreeHome(m.repo, m.store); err != nil {
			return InitResult{}, err
		}
	}
	res := InitResult{Home: m.store.Home, File: m.store.Path(), Excluded: []string{}}
	if err := fsutil.MkdirAll(m.store.Home, m.store.DirPerm()); err != nil {
		return res, err
	}
	target, err := m.store.Resolve(m.store.Path())
	if err != nil {
		return res, err
	}
	if res.Created, err = m.createRalphFile(); err != nil {
		return res, err
	}
	if _, err := os.Stat(target); errors.Is(err, os.ErrNotExist) {
		if err := fsutil.WriteFile(target, []byte(memfile.Header+"\n"), m.store.FilePerm()); err != nil {
			return res, err
		}
		res.Created = true
	}
	if m.repo == nil {
		return res, nil
	}
	res.ExcludeFile = filepath.Join(m.repo.CommonDir, "info", "exclude")
	res.Layout, res.LayoutWhy, res.RelFile = string(m.repo.Layout), m.repo.LayoutWhy, m.repo.RelFile()
	added, err := m.exclude()
	if err != nil {
		return res, err
	}
	res.Excluded = append(res.Excluded, added...)
	m.heal(true)
	res.Tracked = trackedIn(m.repo)
	if o.MergeDriver {
		if res.MergeDriver, err = m.setupMergeDriver(o.Executable); err != nil {
			return res, err
		}
	}
	res.MergeDriverSet = m.mergeDriverSet()
	return res, nil
}

// attributeLine routes the tracked memory file of the layout to memsync's
// merge driver.
func attributeLine(r *worktree.Repo) string { return r.RelFile() + " merge=memsync" }

// setupMergeDriver sets merge.memsync.* in the repository's git config and
// the attribute line in the common info/attributes (idempotent).
func (m *Memory) setupMergeDriver(bin string) (*MergeDriver, error) {
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("the merge driver needs memsync's path: %w", err)
		}
	}
	r := m.repo
	d := &MergeDriver{Driver: shellQuote(bin) + " merge-driver %O %A %B %P",
		Attributes: filepath.Join(r.CommonDir, "info", "attributes"), Line: attributeLine(r)}
	for k, v := range map[string]string{"merge.memsync.name": "memsync: merge memories.md by entry", "merge.memsync.driver": d.Driver} {
		if _, err := gitcmd.Output(r.CommonDir, "--git-dir="+r.CommonDir, "config", k, v); err != nil {
			return nil, err
		}
	}
	old, err := os.ReadFile(d.Attributes)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for l := range strings.Lines(string(old)) {
		if strings.TrimSpace(l) == d.Line {
			return d, nil
		}
	}
	data := string(old)
	if data != "" && !strings.HasSuffix(data, "\n") {
		data += "\n"
	}
	if err := os.MkdirAll(filepath.Dir(d.Attributes), 0o755); err != nil {
		return nil, err
	}
	return d, fsutil.WriteFile(d.Attributes, []byte(data+d.Line+"\n"), 0o644)
}

// mergeDriverSet tells whether the attribute line routes the memory file to
// memsync's merge driver (in info/attributes or the primary's .gitattributes).
func (m *Memory) mergeDriverSet() bool {
	if m.repo == nil {
		return false
	}
	files := []string{filepath.Join(m.repo.CommonDir, "info", "attributes")}
	if m.repo.Primary != "" {
		files = append(files, filepath.Join(m.repo.Primary, ".gitattributes"))
	}
	for _, f := range files {
		// .gitattributes is the branch's: bounded, never a link out of the
		// worktree (git itself refuses to follow one).
		data, _ := fsutil.ReadWithin(f, filepath.Dir(f), 1<<20)
		if strings.Contains(string(data), "merge=memsync") {
			return true
		}
	}
	return false
}

// shellQuote quotes a path for the shell git runs a merge driver with.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// trackedIn tells whether the primary worktree's index tracks the memory
// file (asking git: init and doctor are no hot paths).
func trackedIn(r *worktree.Repo) bool {
	if r.Primary == "" {
		return false
	}
	_, err := gitcmd.Output(r.Primary, "ls-files", "--error-unmatch", "--", r.RelFile())
	return err == nil
}

// SetLayout chooses where the memory of the repository containing dir
// lives, in its git config (memsync.layout, shared by every worktree of the
// clone): "agent" for memsync's own <worktree>/.agent/memories.md, "ralph"
// for ralph-orchestrator's <worktree>/.ralph/agent/memories.md (v2.3.0 on).
// Open the memory after it. Without the setting, Open works the layout out
// from the primary worktree (the layout whose memory file is there).
// Another name is a *ConfigError.
func SetLayout(ctx context.Context, dir, layout string) error {
	if _, err := worktree.ParseLayout(layout); err != nil {
		return &ConfigError{err}
	}
	r, err := worktree.Discover(dir)
	if err != nil {
		return err
	}
	_, err = gitcmd.OutputContext(ctx, r.CommonDir, "--git-dir="+r.CommonDir, "config", worktree.LayoutKey, layout)
	return err
}
