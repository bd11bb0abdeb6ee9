// Package hooks installs memsync's git hooks and runs them.
//
// The scripts are thin: they run the hook that was there before (kept beside
// them as "<name>.memsync-orig", with its exit status kept), then
// `memsync hook NAME ARGS...`. The kept hook runs as git would have run it:
// a shell script (sh, bash, dash, ksh, or no "#!" line) is read by its own
// shell with "$0" still the hook's path, so hook managers that dispatch on
// their name or folder (husky v9's .husky/_/h runs .husky/$(basename "$0"),
// pre-commit's script finds its folder from "$0") work unchanged; any other
// program is executed as NAME.memsync-orig. They go into the folder git really uses for the
// repository: core.hooksPath when set (relative to the worktree's top, as git
// takes it), else the common git dir's hooks/. Uninstalling puts back exactly
// what was there.
//
// Run bounds a hook's handler (the work is memsync.RunHook's): it never
// fails a git command, returns within a time bound once the handler has
// stopped, and reports trouble as one warning line.
package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/gitconfig"
	"github.com/memsync/memsync/worktree"
)

// Names returns the hooks memsync installs (a fresh slice each call).
func Names() []string {
	return []string{"post-commit", "post-merge", "post-rewrite", "post-checkout"}
}

// Marker is the comment line that identifies memsync's hook scripts.
const Marker = "# memsync hook: installed by 'memsync hooks install'; 'memsync hooks uninstall' restores what was here."

// OrigSuffix is appended to the name of a hook that memsync's script chains.
const OrigSuffix = ".memsync-orig"

// Dir returns the folder git runs the repository's hooks from:
// core.hooksPath (a relative value is taken relative to the worktree's top,
// or to the git dir in a bare repository, as git does; "~/" is the home
// directory), else <CommonDir>/hooks. core.hooksPath is read from the
// system, global, repository and worktree config files, as git reads them
// for this worktree (without includes); no git is spawned.
func Dir(r *worktree.Repo) string {
	base := r.WorkTree
	if base == "" {
		base = r.GitDir
	}
	p, ok := gitconfig.Effective(r.CommonDir, r.GitDir).Path("core.hooksPath")
	if !ok {
		return filepath.Join(r.CommonDir, "hooks")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// Script is the hook script for hook name that runs the memsync binary bin
// (an absolute path; when it is gone, memsync is looked up on PATH, and when
// that fails too the script says so in one line and exits 0). orig is the
// content of the hook it chains (nil: none), which tells how to run it (see
// chainCommand).
func Script(name, bin string, orig []byte) string {
	return `#!/bin/sh
` + Marker + `
bin=` + shellQuote(bin) + `
memsync=$bin
[ -x "$memsync" ] || memsync=$(command -v memsync 2>/dev/null) || memsync=
if [ ! -x "$0` + OrigSuffix + `" ] && [ -n "$memsync" ]; then
	exec "$memsync" hook ` + name + ` "$@" </dev/null
fi
status=0
if [ -x "$0` + OrigSuffix + `" ]; then
	` + chainCommand(orig) + ` || status=$?
fi
if [ -n "$memsync" ]; then
	"$memsync" hook ` + name + ` "$@" </dev/null
else
	echo "memsync: ` + name + ` hook skipped: memsync not found at $bin nor on PATH" >&2
fi
exit $status
`
}

// shells are the interpreters whose scripts chainCommand runs by reading
// them with ". FILE", which keeps "$0" and the arguments.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "ksh": true, "mksh": true, "ash": true}

// chainCommand is the command line in the hook script that runs the kept
// hook (at "$0.memsync-orig") with git's arguments. A shell script is read
// by its own interpreter (with the "#!" line's argument) through
// `SHELL [ARG] -c '. "$0.memsync-orig"' "$0" "$@"`: "$0" in the script is
// the hook's own path, as when git ran it, and "exit" ends only that shell.
// A file without a "#!" line that is text is a sh script, as git and sh
// take it. Anything else (python, node, a binary) is executed directly.
func chainCommand(orig []byte) string {
	direct := `"$0` + OrigSuffix + `" "$@"`
	if orig == nil {
		return direct
	}
	var argv []string
	first, _, _ := bytes.Cut(orig, []byte("\n"))
	switch {
	case bytes.HasPrefix(first, []byte("#!")):
		line := strings.TrimSpace(strings.TrimSuffix(string(first[2:]), "\r"))
		if strings.ContainsFunc(line, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return direct // a NUL or control byte: no argument of ours can hold it; the kernel reads the line
		}
		interp, arg, _ := strings.Cut(line, " ")
		arg = strings.TrimSpace(arg)
		base := filepath.Base(interp)
		switch {
		case base == "env" && shells[arg]:
			argv = []string{interp, arg} // #!/usr/bin/env bash
		case shells[base] && !strings.ContainsAny(arg, " \t"):
			argv = []string{interp} // #!/bin/sh, #!/bin/sh -e
			if arg != "" {
				argv = append(argv, arg)
			}
		default:
			return direct
		}
	case bytes.IndexByte(orig, 0) >= 0 || len(orig) == 0:
		return direct // a binary
	default:
		argv = []string{"/bin/sh"}
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ") + ` -c '. "$0` + OrigSuffix + `"' "$0" "$@"`
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// State of one hook in the hooks folder.
const (
	StateMissing   = "missing"   // no hook of that name
	StateInstalled = "installed" // memsync's script
	StateChained   = "chained"   // memsync's script, running the previous hook first
	StateForeign   = "foreign"   // another hook (install chains it)
)

// Hook is one hook's state, and what an operation did to it.
type Hook struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	State  string `json:"state"`
	Action string `json:"action,omitempty"` // installed, updated, unchanged, restored, removed, kept
}

// ErrInWorktree is returned when the hooks folder (core.hooksPath) is inside the worktree,
// and installing would change what git status shows: a tracked hook
// modified, or scripts holding this machine's path to memsync added where
// git does not ignore them.
var ErrInWorktree = errors.New("the hooks folder is inside the worktree")

// Install writes memsync's script for every hook in Names() into the hooks
// folder, running bin. A hook already there is moved aside (a hard link,
// then the script renamed over the name, so the name never goes missing)
// and chained. Installing again changes nothing, unless bin changed.
//
// When the hooks folder is inside the worktree, Install writes nothing and
// returns an error wrapping ErrInWorktree if a file it would write is
// tracked by git or not ignored (it would show in git status); a folder git
// ignores (husky's .husky/_) is fine. InstallForce installs anyway.
func Install(r *worktree.Repo, bin string) (string, []Hook, error) {
	return install(r, bin, false)
}

// InstallForce is Install, also into a hooks folder whose files git status
// shows.
func InstallForce(r *worktree.Repo, bin string) (string, []Hook, error) {
	return install(r, bin, true)
}

func install(r *worktree.Repo, bin string, force bool) (string, []Hook, error) {
	dir := Dir(r)
	type step struct {
		h      Hook
		script []byte
	}
	var plan []step
	var writes []string // the files the plan writes
	for _, name := range Names() {
		h := inspect(dir, name)
		orig, err := os.ReadFile(h.Path + OrigSuffix) // a hook chained already
		if h.State == StateForeign {
			orig, err = os.ReadFile(h.Path) // the hook install will chain
		}
		if err != nil {
			orig = nil
		}
		script := []byte(Script(name, bin, orig))
		switch h.State {
		case StateInstalled, StateChained:
			h.Action = "updated"
			if cur, err := os.ReadFile(h.Path); err == nil && bytes.Equal(cur, script) {
				h.Action = "unchanged"
			}
		case StateForeign:
			if _, err := os.Lstat(h.Path + OrigSuffix); err == nil {
				return dir, nil, fmt.Errorf("hooks: %s exists, and so does %s: move one of them away first", h.Path, h.Path+OrigSuffix)
			}
			h.Action = "installed"
			writes = append(writes, h.Path+OrigSuffix)
		default:
			h.Action = "installed"
		}
		if h.Action != "unchanged" {
			writes = append(writes, h.Path)
		}
		plan = append(plan, step{h, script})
	}
	if !force {
		if err := checkUnseen(r, dir, writes); err != nil {
			return dir, nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return dir, nil, err
	}
	var out []Hook
	for _, st := range plan {
		h := st.h
		switch h.Action {
		case "unchanged":
			out = append(out, h)
			continue
		case "installed":
			if h.State == StateForeign {
				if err := os.Link(h.Path, h.Path+OrigSuffix); err != nil {
					if err := os.Rename(h.Path, h.Path+OrigSuffix); err != nil {
						return dir, out, fmt.Errorf("hooks: keep %s: %w", h.Path, err)
					}
				}
			}
		}
		if err := fsutil.WriteFile(h.Path, st.script, 0o755); err != nil {
			return dir, out, fmt.Errorf("hooks: write %s: %w", h.Path, err)
		}
		if err := os.Chmod(h.Path, 0o755); err != nil { // whatever the umask
			return dir, out, err
		}
		out = append(out, inspectAction(dir, h.Name, h.Action))
	}
	return dir, out, nil
}

// checkUnseen returns an error wrapping ErrInWorktree when one of paths
// (files in the hooks folder dir) is inside the worktree and tracked by git,
// or not ignored: writing it would show in git status.
func checkUnseen(r *worktree.Repo, dir string, paths []string) error {
	if r.WorkTree == "" || len(paths) == 0 {
		return nil
	}
	inside := func(base string) bool {
		rel, err := filepath.Rel(base, dir)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	if !inside(r.WorkTree) || inside(r.GitDir) || inside(r.CommonDir) {
		return nil // outside the worktree, or in the git dir git status never shows
	}
	var rels []string
	for _, p := range paths {
		rel, err := filepath.Rel(r.WorkTree, p)
		if err != nil {
			return err
		}
		rels = append(rels, filepath.ToSlash(rel))
	}
	tracked, err := gitList(r.WorkTree, nil, append([]string{"--literal-pathspecs", "ls-files", "-z", "--"}, rels...)...)
	if err != nil {
		return err
	}
	ignored, err := gitList(r.WorkTree, rels, "check-ignore", "--no-index", "-z", "--stdin")
	if err != nil {
		return err
	}
	var why []string
	for _, p := range rels {
		switch {
		case tracked[p]:
			why = append(why, p+" is tracked")
		case !ignored[p]:
			why = append(why, p+" would be untracked")
		}
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%w (%s), and git status would show memsync's scripts there: %s", ErrInWorktree, dir, strings.Join(why, ", "))
}

// gitList runs git in dir with paths NUL-separated on its stdin, and
// returns the NUL-separated paths it prints; an exit status of 1
// (check-ignore: none ignored) is an empty list.
func gitList(dir string, paths []string, args ...string) (map[string]bool, error) {
	cmd := gitcmd.Command(dir, args...)
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee interface{ ExitCode() int }
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 1) {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	set := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			set[p] = true
		}
	}
	return set, nil
}

// Uninstall removes memsync's scripts and puts back the hooks they chained,
// byte for byte and with their mode (they are renamed back). A hook that is
// not memsync's is left alone.
func Uninstall(r *worktree.Repo) (string, []Hook, error) {
	dir := Dir(r)
	var out []Hook
	for _, name := range Names() {
		h := inspect(dir, name)
		switch h.State {
		case StateChained:
			if err := os.Rename(h.Path+OrigSuffix, h.Path); err != nil {
				return dir, out, fmt.Errorf("hooks: restore %s: %w", h.Path, err)
			}
			h.Action = "restored"
		case StateInstalled:
			if err := os.Remove(h.Path); err != nil {
				return dir, out, fmt.Errorf("hooks: remove %s: %w", h.Path, err)
			}
			h.Action = "removed"
		case StateForeign:
			h.Action = "kept"
		default:
			continue
		}
		out = append(out, inspectAction(dir, name, h.Action))
	}
	return dir, out, nil
}

// Manager is a hook manager that owns a repository's hooks, and what to add
// to its configuration so that it runs memsync.
type Manager struct {
	Name   string `json:"name"`
	Config string `json:"config"` // its configuration file or folder
	Add    string `json:"add"`    // what to add there
}

// Status is what Status found.
type Status struct {
	Dir      string    `json:"dir"`
	Hooks    []Hook    `json:"hooks"`
	Managers []Manager `json:"managers"`
}

// Report tells what is installed where, and which hook managers (husky,
// lefthook, pre-commit) the worktree uses, with the lines to add to them.
func Report(r *worktree.Repo) (*Status, error) {
	dir := Dir(r)
	s := &Status{Dir: dir, Managers: managers(r.WorkTree)}
	for _, name := range Names() {
		s.Hooks = append(s.Hooks, inspect(dir, name))
	}
	return s, nil
}

func inspectAction(dir, name, action string) Hook {
	h := inspect(dir, name)
	h.Action = action
	return h
}

// inspect tells the state of one hook.
func inspect(dir, name string) Hook {
	h := Hook{Name: name, Path: filepath.Join(dir, name), State: StateMissing}
	data, err := os.ReadFile(h.Path)
	if _, lerr := os.Lstat(h.Path); lerr != nil {
		return h
	}
	if err != nil || !bytes.Contains(data, []byte(Marker)) {
		h.State = StateForeign
		return h
	}
	h.State = StateInstalled
	if _, err := os.Lstat(h.Path + OrigSuffix); err == nil {
		h.State = StateChained
	}
	return h
}

// managers finds the hook managers configured in the worktree top.
func managers(top string) []Manager {
	out := []Manager{}
	if top == "" {
		return out
	}
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(top, name)); return err == nil }
	if exists(".husky") {
		out = append(out, Manager{Name: "husky", Config: ".husky/",
			Add: `add the line  memsync hook NAME "$@"  to .husky/NAME for NAME in ` + strings.Join(Names(), ", ")})
	}
	for _, f := range []string{"lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml"} {
		if exists(f) {
			var b strings.Builder
			for _, n := range Names() {
				fmt.Fprintf(&b, "%s:\n  commands:\n    memsync:\n      run: memsync hook %s {0}\n", n, n)
			}
			out = append(out, Manager{Name: "lefthook", Config: f, Add: b.String()})
			break
		}
	}
	if exists(".pre-commit-config.yaml") {
		out = append(out, Manager{Name: "pre-commit", Config: ".pre-commit-config.yaml",
			Add: "- repo: local\n  hooks:\n    - id: memsync\n      name: memsync\n      entry: memsync hook post-commit\n" +
				"      language: system\n      always_run: true\n      pass_filenames: false\n      stages: [post-commit]\n" +
				"# then: pre-commit install --hook-type post-commit"})
	}
	return out
}
