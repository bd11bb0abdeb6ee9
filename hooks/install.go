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
// Hook managers are neighbours (see Install): memsync goes into husky's
// .husky/NAME, lefthook's lefthook-local.yml and pre-commit's NAME.legacy,
// the places each manager's own re-run keeps; NotRun tells, cheaply, when git
// no longer runs memsync's hooks.
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
	"github.com/memsync/memsync/internal/gitrepo"
)

// Names returns the hooks memsync installs (a fresh slice each call).
func Names() []string {
	return []string{"post-commit", "post-merge", "post-rewrite", "post-checkout", "post-applypatch"}
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
func Dir(r *gitrepo.Repo) string {
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
// chainCommand). memsync runs as call says.
func Script(name, bin string, orig []byte) string {
	alone := call("memsync", name, `"$@"`) + "\n\texit 0"
	return `#!/bin/sh
` + Marker + `
bin=` + shellQuote(bin) + `
memsync=$bin
[ -x "$memsync" ] || memsync=$(command -v memsync 2>/dev/null) || memsync=
if [ ! -x "$0` + OrigSuffix + `" ] && [ -n "$memsync" ]; then
	` + alone + `
fi
status=0
if [ -x "$0` + OrigSuffix + `" ]; then
	` + chainCommand(orig) + ` || status=$?
fi
if [ -n "$memsync" ]; then
	` + call("memsync", name, `"$@"`) + `
else
	echo "memsync: ` + name + ` hook skipped: memsync not found at $bin nor on PATH" >&2
fi
exit $status
`
}

// call is the shell command that runs the memsync whose path is in
// variable v for hook name with the arguments args, stdin closed; it never
// fails, whatever memsync does (a binary cut short by an upgrade under
// way, an older memsync on PATH): git checkout exits with post-checkout's
// status, and husky reads its hook files with sh -e, where a failure ends
// the user's own lines after memsync's. A hook
// that only snapshots (Detached) runs in the background, as git runs its
// automatic maintenance, its streams on /dev/null so that git's pipes
// close at once, and the hangup ignored from its start, set before the
// fork (git as a session's leader on a terminal hangs up its process
// group as it exits, maybe before the child ran a line; memsync takes a
// session of its own only once it runs) and put back after it for the
// lines that follow, unless MEMSYNC_HOOKS_WAIT is set (to anything but 0 or
// false): git's command then waits for it. The scripts, husky's lines and
// lefthook's command all run memsync through it.
func call(v, name, args string) string {
	wait := `"$` + v + `" hook ` + name + ` ` + args + ` </dev/null || :`
	if !Detached(name) {
		return wait
	}
	return `case ${MEMSYNC_HOOKS_WAIT:-} in '' | 0 | false) trap '' HUP; "$` + v + `" hook ` + BackgroundArg + ` ` + name + ` ` + args +
		` </dev/null >/dev/null 2>&1 & trap - HUP ;; *) ` + wait + ` ;; esac`
}

// Detached tells the hooks whose script runs memsync in the background:
// those that only snapshot the memory (post-commit, post-rewrite,
// post-applypatch), so that a commit does not wait for its snapshot.
// post-checkout links a new worktree's memory before git returns, and
// post-merge checks the code a merge changed (from ORIG_HEAD, which the
// next command may move): they run in the foreground.
func Detached(name string) bool {
	return name == "post-commit" || name == "post-rewrite" || name == "post-applypatch"
}

// BackgroundArg is the first argument of 'memsync hook' in the background
// (HookOptions.Background), before the hook's name.
const BackgroundArg = "--background"

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

// State of one hook.
const (
	StateMissing   = "missing"   // no hook of that name
	StateInstalled = "installed" // memsync's script, or memsync's lines in a hook manager's file
	StateChained   = "chained"   // memsync's script, running the previous hook first
	StateForeign   = "foreign"   // another hook (install chains it, or goes into its manager)
)

// Hook is one hook's state, and what an operation did to it.
type Hook struct {
	Name    string `json:"name"`
	Path    string `json:"path"` // memsync's script, or the manager's file holding memsync's lines
	State   string `json:"state"`
	Manager string `json:"manager,omitempty"` // the hook manager memsync runs through: husky, lefthook, pre-commit
	Runs    bool   `json:"runs"`              // git runs memsync for this hook in this worktree
	Action  string `json:"action,omitempty"`  // installed, updated, unchanged, restored, removed, kept
	// Outdated tells memsync's script as an older memsync wrote it (for
	// one, a snapshot hook git waits for): install writes today's.
	Outdated bool `json:"outdated,omitempty"`
}

// ErrInWorktree is returned when a file install would write is inside the
// worktree and would change what git status shows: a tracked hook (or
// hook manager's file) modified, or scripts holding this machine's path to
// memsync added where git does not ignore them.
var ErrInWorktree = errors.New("the hooks folder is inside the worktree")

// Install installs memsync's hook for every hook in Names(), running bin,
// where git runs it in the worktree r, so that the hook managers' own
// re-runs keep it:
//
//   - husky (core.hooksPath is husky's .husky/_, whose scripts husky
//     rewrites whenever it runs): memsync's lines go at the top of the
//     hook's file in .husky/ (.husky/NAME), which husky runs and never
//     rewrites. A file memsync creates there is listed in the common
//     info/exclude, so git status stays clean. A tracked .husky/NAME is
//     not modified (git status would show it, and a commit would carry it
//     to the team) unless force: that hook gets memsync's script in .husky/_,
//     which husky's next run replaces (the next memsync command says so).
//   - lefthook (its script is the hook): memsync's command goes into the
//     per-user lefthook-local.yml that lefthook merges over its config
//     (NAME: commands: memsync: run: ...), listed in info/exclude when memsync
//     creates it. lefthook's install renames every other script of a hook it
//     runs, so that is the only place it keeps.
//   - pre-commit (its script is the hook): memsync's script is NAME.legacy,
//     which pre-commit's script runs first, which pre-commit's install keeps
//     and its uninstall puts back as NAME.
//   - otherwise memsync's script is the hook, and a hook already there is
//     moved aside (a hard link, then the script renamed over the name, so
//     the name never goes missing) and chained.
//
// Installing again changes nothing, unless bin changed; what a manager's
// re-run or an older install left behind (a memsync script renamed
// NAME.old or NAME.legacy, a stale NAME.memsync-orig) is cleaned up, never
// a reason to fail.
//
// When memsync's script would go into a hooks folder inside the worktree,
// Install writes nothing and returns an error wrapping ErrInWorktree if a
// file it would write is tracked by git or not ignored (it would show in
// git status); a folder git ignores (husky's .husky/_) is fine.
// InstallForce installs anyway.
func Install(r *gitrepo.Repo, bin string) (string, []Hook, error) {
	return install(r, bin, false)
}

// InstallForce is Install, also into a hooks folder whose files git status
// shows, and into a tracked .husky/NAME.
func InstallForce(r *gitrepo.Repo, bin string) (string, []Hook, error) {
	return install(r, bin, true)
}

func install(r *gitrepo.Repo, bin string, force bool) (string, []Hook, error) {
	dir := Dir(r)
	done := map[string]Hook{}
	var scripts, lefthook, husky []string
	hdir := huskyDir(dir)
	for _, name := range Names() {
		if err := unchainManager(filepath.Join(dir, name)); err != nil {
			return dir, nil, err
		}
		switch {
		case hdir != "":
			husky = append(husky, name)
		case isLefthook(filepath.Join(dir, name)) && r.WorkTree != "":
			lefthook = append(lefthook, name)
		default:
			scripts = append(scripts, name)
		}
	}
	if len(husky) > 0 {
		hs, fallback, err := installHusky(r, hdir, dir, husky, bin, force)
		if err != nil {
			return dir, nil, err
		}
		for _, h := range hs {
			done[h.Name] = h
		}
		scripts = append(scripts, fallback...)
	}
	if r.WorkTree != "" {
		hs, err := installLefthook(r, dir, lefthook, bin, force)
		if err != nil {
			return dir, nil, err
		}
		for _, h := range hs {
			done[h.Name] = h
		}
	}
	hs, err := installScripts(r, dir, scripts, bin, force)
	if err != nil {
		return dir, nil, err
	}
	for _, h := range hs {
		done[h.Name] = h
	}
	if err := record(r, true); err != nil {
		return dir, nil, err
	}
	var out []Hook
	for _, name := range Names() {
		h := hookState(r, dir, name)
		h.Action = done[name].Action
		out = append(out, h)
	}
	return dir, out, nil
}

// target is where memsync's script for hook name goes in dir: NAME, or
// NAME.legacy when pre-commit's script is NAME.
func target(dir, name string) (string, string) {
	p := filepath.Join(dir, name)
	if isPreCommit(p) {
		return p + ".legacy", ManagerPreCommit
	}
	return p, ""
}

// isOurs tells memsync's script.
func isOurs(p string) bool { return contains(p, Marker) }

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// executable tells a file git runs as a hook.
func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// variants are the names a hook manager gives memsync's script of hook
// name when it moves it away: lefthook's NAME.old, pre-commit's
// NAME.legacy.
func variants(dir, name string) []string {
	p := filepath.Join(dir, name)
	return []string{p, p + ".legacy", p + ".old"}
}

// installScripts writes memsync's script for each of names into dir (at
// target), after cleaning up what managers and older installs left.
func installScripts(r *gitrepo.Repo, dir string, names []string, bin string, force bool) ([]Hook, error) {
	type step struct {
		h      Hook
		script []byte
		stale  []string // memsync's scripts elsewhere to remove
		orphan string   // a kept hook to adopt as target's .memsync-orig
		aside  string   // a stale .memsync-orig to move out of the way
	}
	var plan []step
	var writes []string
	for _, name := range names {
		p, _ := target(dir, name)
		h := Hook{Name: name, Path: p, State: scriptState(p)}
		st := step{h: h}
		orig := p + OrigSuffix
		for _, q := range variants(dir, name) {
			if q == p {
				continue
			}
			if isOurs(q) {
				st.stale = append(st.stale, q)
			}
			if exists(q+OrigSuffix) && !exists(orig) && st.orphan == "" && h.State != StateForeign && (!exists(q) || isOurs(q)) {
				st.orphan = q + OrigSuffix // its hook was moved away with memsync's script: it chains again
			}
		}
		if h.State == StateForeign && exists(orig) {
			st.aside = orig // a manager replaced memsync's script: the hook it had kept is stale
		}
		var kept []byte // what the script chains (nil: none, or unreadable: run directly)
		switch {
		case h.State == StateForeign:
			kept, _ = readHook(p)
		case st.orphan != "":
			kept, _ = readHook(st.orphan)
		default:
			kept, _ = readHook(orig)
		}
		st.script = []byte(Script(name, bin, kept))
		switch h.State {
		case StateInstalled, StateChained:
			st.h.Action = "updated"
			if cur, err := readHook(p); err == nil && bytes.Equal(cur, st.script) && st.orphan == "" {
				st.h.Action = "unchanged"
			}
		default:
			st.h.Action = "installed"
			if h.State == StateForeign {
				writes = append(writes, orig)
			}
		}
		if st.h.Action != "unchanged" {
			writes = append(writes, p)
		}
		plan = append(plan, st)
	}
	if !force {
		if err := checkUnseen(r, dir, writes); err != nil {
			return nil, err
		}
	}
	if len(plan) > 0 {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	var out []Hook
	for _, st := range plan {
		h := st.h
		for _, q := range st.stale {
			if err := os.Remove(q); err != nil {
				return out, fmt.Errorf("hooks: remove %s: %w", q, err)
			}
		}
		if st.aside != "" {
			if err := dropStaleOrig(h.Path, func(string) bool { return false }); err != nil {
				return out, err
			}
		}
		if st.orphan != "" {
			if err := os.Rename(st.orphan, h.Path+OrigSuffix); err != nil {
				return out, fmt.Errorf("hooks: keep %s: %w", st.orphan, err)
			}
		}
		if h.Action == "unchanged" {
			out = append(out, h)
			continue
		}
		if h.State == StateForeign {
			if err := os.Link(h.Path, h.Path+OrigSuffix); err != nil {
				if err := os.Rename(h.Path, h.Path+OrigSuffix); err != nil {
					return out, fmt.Errorf("hooks: keep %s: %w", h.Path, err)
				}
			}
		}
		if err := fsutil.WriteFile(h.Path, st.script, 0o755); err != nil {
			return out, fmt.Errorf("hooks: write %s: %w", h.Path, err)
		}
		if err := os.Chmod(h.Path, 0o755); err != nil { // whatever the umask
			return out, err
		}
		out = append(out, h)
	}
	return out, nil
}

// moveAside renames the stale kept hook p to the first free p.N, so it is
// neither run nor lost.
func moveAside(p string) error {
	for i := 1; ; i++ {
		q := fmt.Sprintf("%s.%d", p, i)
		if !exists(q) {
			if err := os.Rename(p, q); err != nil {
				return fmt.Errorf("hooks: move %s aside: %w", p, err)
			}
			return nil
		}
	}
}

// scriptState is the state of memsync's script at p.
func scriptState(p string) string {
	switch {
	case !exists(p):
		return StateMissing
	case !isOurs(p):
		return StateForeign
	case exists(p + OrigSuffix):
		return StateChained
	}
	return StateInstalled
}

// hookState tells hook name's state in the worktree r whose hooks folder is dir.
func hookState(r *gitrepo.Repo, dir, name string) Hook {
	p := filepath.Join(dir, name)
	if hd := huskyDir(dir); hd != "" {
		if f := filepath.Join(hd, name); hasBlock(f) {
			block := blockOf(f)
			return Hook{Name: name, Path: f, State: StateInstalled, Manager: ManagerHusky, Runs: executable(p),
				Outdated: block != huskyBlock(name, quotedAfter(block, "m="))}
		}
	}
	if isLefthook(p) && r.WorkTree != "" {
		cfg := lefthookLocal(r.WorkTree)
		if run, ok := lefthookRunOf(cfg, name); ok {
			return Hook{Name: name, Path: cfg, State: StateInstalled, Manager: ManagerLefthook, Runs: executable(p),
				Outdated: run != lefthookRun(name, quotedAfter(run, "m="))}
		}
		return Hook{Name: name, Path: p, State: StateForeign}
	}
	t, mgr := target(dir, name)
	h := Hook{Name: name, Path: t, State: scriptState(t)}
	if h.State == StateInstalled || h.State == StateChained {
		h.Manager = mgr
		h.Runs = executable(t) && executable(p)
		h.Outdated = outdated(t, name)
	} else if mgr != "" {
		h.Path, h.State = p, StateForeign
	}
	return h
}

// outdated tells memsync's script for hook name at p from what Script
// writes today for the memsync it names and the hook it chains.
func outdated(p, name string) bool {
	cur, err := readHook(p)
	if err != nil {
		return false
	}
	bin := quotedAfter(string(cur), "bin=")
	if bin == "" {
		return true // older than the bin= line
	}
	kept, _ := readHook(p + OrigSuffix) // nil: none
	return !bytes.Equal(cur, []byte(Script(name, bin, kept)))
}

// recordPath is the file that says memsync's hooks are installed in the
// repository (so that a memsync command can tell when git stopped running
// them).
func recordPath(r *gitrepo.Repo) string {
	return filepath.Join(r.CommonDir, "memsync", "hooks-installed")
}

func record(r *gitrepo.Repo, installed bool) error {
	p := recordPath(r)
	if !installed {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFile(p, []byte("memsync hooks install ran here; memsync hooks uninstall removes this file\n"), 0o644)
}

// checkUnseen returns an error wrapping ErrInWorktree when one of paths
// (files in the hooks folder dir) is inside the worktree and tracked by git,
// or not ignored: writing it would show in git status.
func checkUnseen(r *gitrepo.Repo, dir string, paths []string) error {
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
		return nil, gitcmd.Wrap(args, err, stderr.String())
	}
	set := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			set[p] = true
		}
	}
	return set, nil
}
