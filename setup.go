package memsync

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/memsync/memsync/internal/agents"
	"github.com/memsync/memsync/internal/textdiff"
	"github.com/memsync/memsync/worktree"
)

// SetupOptions choose what SetupAgent does.
type SetupOptions struct {
	Dir    string // in the repository of Dir ("" the working directory)
	Scope  string // "project", "local" or "user"; "" the agent's default, which changes no tracked file
	Remove bool   // take memsync's entries out instead
	Rules  bool   // also the marked section of the agent's rules file (tracked: only when asked)
	DryRun bool   // plan only: write nothing
	// Command starts memsync in the agent's files; "" is this memsync's
	// absolute path (the one on PATH when that is this binary), and
	// "memsync" in a project's shared files.
	Command string
}

// SetupChange is one file a setup changes, with its diff.
type SetupChange struct {
	Path   string `json:"path"`
	Action string `json:"action"` // "create", "update" or "remove"
	Diff   string `json:"diff"`
}

// SetupResult is what SetupAgent changed (or with DryRun would change).
type SetupResult struct {
	Agent   string        `json:"agent"`
	Title   string        `json:"title"`
	Scope   string        `json:"scope"`
	Command string        `json:"command"`
	Hooks   bool          `json:"hooks"` // the agent's context hooks are part of it
	Changes []SetupChange `json:"changes"`
	DryRun  bool          `json:"dry_run"`
	Todo    []string      `json:"todo"` // what the user still has to do
	// Excluded are the patterns added (or with DryRun to add) to
	// .git/info/exclude, so this user's files stay out of git.
	Excluded []string `json:"excluded"`
}

// ErrSetup is a bad agent or scope name (a usage error).
var ErrSetup = errors.New("setup")

// setupEnv is where the agents' files are for dir.
func setupEnv(dir, command string) (agents.Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return agents.Env{}, err
	}
	e := agents.Env{Home: home, GOOS: runtime.GOOS, Command: command, Fixed: command != "",
		ConfigHome: os.Getenv("XDG_CONFIG_HOME"), CodexHome: os.Getenv("CODEX_HOME"), ClaudeDir: os.Getenv("CLAUDE_CONFIG_DIR")}
	if e.ConfigHome == "" {
		e.ConfigHome = filepath.Join(home, ".config")
	}
	if e.CodexHome == "" {
		e.CodexHome = filepath.Join(home, ".codex")
	}
	if e.Command == "" {
		e.Command = selfCommand()
	}
	if r, err := worktree.Discover(dir); err == nil {
		e.Top = r.WorkTree
	}
	return e, nil
}

// selfCommand is the absolute path of this memsync: the one on PATH when
// that is this binary (a package manager's stable link, not the versioned
// file it points to), else the running executable.
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "memsync"
	}
	if p, err := exec.LookPath("memsync"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			a, errA := os.Stat(abs)
			b, errB := os.Stat(exe)
			if errA == nil && errB == nil && os.SameFile(a, b) {
				return abs
			}
		}
	}
	return exe
}

// SetupAgent merges memsync's MCP server (and the agent's context hooks,
// where it has them) into agent's own config file, or with Remove takes
// exactly memsync's entries out. Every other byte of the files stays; a
// file it cannot read is refused, naming it, and nothing is written.
// Running it twice changes nothing the second time.
func SetupAgent(agent string, o SetupOptions) (SetupResult, error) {
	a, err := agents.Find(agent)
	if err != nil {
		return SetupResult{}, setupError(err)
	}
	sc, err := a.Scope(o.Scope)
	if err != nil {
		return SetupResult{}, setupError(err)
	}
	e, err := setupEnv(o.Dir, o.Command)
	if err != nil {
		return SetupResult{}, err
	}
	p, err := agents.Setup(a, e, agents.Options{Scope: sc, Remove: o.Remove, Rules: o.Rules})
	if err != nil {
		return SetupResult{}, setupError(err)
	}
	res := SetupResult{Agent: a.Name, Title: a.Title, Scope: string(sc), Command: e.Command, Hooks: a.HasHooks(),
		DryRun: o.DryRun, Todo: p.Todo, Changes: []SetupChange{}}
	if sc == agents.Project && o.Command == "" {
		res.Command = "memsync"
	}
	for _, c := range p.Changes {
		ch := SetupChange{Path: c.Path, Action: "update"}
		switch {
		case !c.Existed:
			ch.Action = "create"
		case c.After == nil:
			ch.Action = "remove"
		}
		ch.Diff = unified(c.Path, c.Existed, c.After != nil, string(c.Before), string(c.After))
		res.Changes = append(res.Changes, ch)
	}
	if res.Todo == nil {
		res.Todo = []string{}
	}
	if p.Exclude == nil {
		p.Exclude = []string{}
	}
	res.Excluded = p.Exclude
	if o.DryRun {
		return res, nil
	}
	if err := p.Apply(); err != nil {
		return res, setupError(err)
	}
	if len(p.Exclude) > 0 {
		r, err := worktree.Discover(o.Dir)
		if err != nil {
			return res, err
		}
		added, err := worktree.EnsureExclude(r, p.Exclude)
		if err != nil {
			return res, err
		}
		res.Excluded = append([]string{}, added...)
	}
	return res, nil
}

// unified is a diff of a file from before to after with ---/+++ headers
// (/dev/null for a file made or removed).
func unified(path string, existed, remains bool, before, after string) string {
	from, to := "a"+path, "b"+path
	if !existed {
		from = "/dev/null"
	}
	if !remains {
		to = "/dev/null"
	}
	return fmt.Sprintf("--- %s\n+++ %s\n%s", from, to, textdiff.Lines(before, after))
}

// setupError gives the agents package's errors their kind.
func setupError(err error) error {
	var ue *agents.UsageError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue):
		return fmt.Errorf("%w: %s", ErrSetup, ue.Error())
	case errors.Is(err, agents.ErrNoRepo):
		return fmt.Errorf("%w: this scope's files are in a repository (%w)", worktree.ErrNotRepo, err)
	}
	return err
}

// SetupFileError is a config file SetupAgent cannot read or change (it
// changed nothing).
type SetupFileError = agents.FileError

// AgentStatus tells whether an agent is found on this machine and where
// memsync is wired into it.
type AgentStatus struct {
	Agent  string   `json:"agent"`
	Title  string   `json:"title"`
	Found  string   `json:"found"`  // why the agent seems used here ("" not found)
	Wired  []string `json:"wired"`  // the scopes whose files have memsync's server
	Scopes []string `json:"scopes"` // the agent's scopes, the default first
	File   string   `json:"file"`   // the file 'memsync setup AGENT' would change
	Error  string   `json:"error,omitempty"`
}

// Agents reports each agent memsync sets up, as seen from dir.
func Agents(dir string) ([]AgentStatus, error) {
	e, err := setupEnv(dir, "")
	if err != nil {
		return nil, err
	}
	var out []AgentStatus
	for _, a := range agents.All() {
		st := AgentStatus{Agent: a.Name, Title: a.Title, Found: a.Found(e), Wired: []string{}, File: a.ServerFile(e, a.Scopes[0])}
		for _, sc := range a.Scopes {
			st.Scopes = append(st.Scopes, string(sc))
			ok, err := a.Wired(e, sc)
			if err != nil {
				st.Error = err.Error()
			}
			if ok {
				st.Wired = append(st.Wired, string(sc))
			}
		}
		if st.Found == "" && len(st.Wired) > 0 {
			st.Found = a.ServerFile(e, agents.Scope(st.Wired[0])) + " sets up memsync"
		}
		out = append(out, st)
	}
	return out, nil
}
