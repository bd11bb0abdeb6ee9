package memsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/memsync/memsync/hooks"
	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/internal/termsafe"
	"github.com/memsync/memsync/internal/words"
	"github.com/memsync/memsync/lock"
	"github.com/memsync/memsync/worktree"
)

// HookOptions bound a hook run.
type HookOptions struct {
	Stderr  io.Writer     // for the one warning line (os.Stderr when nil)
	Timeout time.Duration // the whole run; 10s when 0
	// LockTimeout bounds the wait for the memory lock, at most 3s (a hook
	// holds up git); 0 is MEMSYNC_LOCK_TIMEOUT where it is set, else 3s.
	LockTimeout time.Duration
	// Background runs a hook that only snapshots (hooks.Detached) as the
	// background child of memsync's hook script, which git does not wait
	// for. A worktree's background hooks wait in line with room for one:
	// one that comes while another waits to start ends at once, as that
	// one's snapshot is taken after it came; one whose turn does not come
	// (the one before it never ends) says so. The warning goes to the
	// memory's state dir (hooks.log), which the next Open in the
	// repository (not a hook's own) reports through Options.Warn, as git's
	// detached gc leaves gc.log for the next one.
	Background bool
}

// HookBackgroundArg comes before the hook's name when memsync's hook
// script runs it in the background ('memsync hook --background NAME
// ARGS...'): see HookOptions.Background.
const HookBackgroundArg = hooks.BackgroundArg

// RunHook is the handler of git hook name, called with git's arguments in
// dir ("" is the working directory, as git runs hooks); the scripts
// 'memsync hooks install' writes run it. It never fails: trouble (no
// repository, a damaged memory file, a lock timeout, running out of time)
// is one warning line on Stderr, and the git command stands. It never
// writes HEAD, nor the index but for the skip-worktree bit of a new
// worktree's tracked ralph memory file it links, and the git it spawns
// ignores the variables git sets for hooks.
//
//   - post-commit, post-merge, post-rewrite, post-applypatch (git am): snapshot the memory (no commit
//     when it is unchanged, so a rebase of many commits snapshots once).
//   - post-checkout with an all-zero old HEAD (git worktree add): link the new
//     worktree's memory file (.agent/memories.md, or in ralph's layout
//     .ralph/agent/memories.md and the lock ralph opens beside it) to the
//     shared memory.
//   - post-merge (from ORIG_HEAD to HEAD) and post-checkout of a branch: check
//     the entries citing the files that changed (Check with Paths), so list,
//     search and inject mark what became stale without checking themselves.
//
// Every hook first heals the memory links (worktree.Heal, through Open): a
// branch switch that brought a tracked memory file has its entries folded
// into the memory and the link put back; a link git clean or stash removed
// is put back. What it repaired is the warning line.
//
// Other names do nothing. The work is bounded by Timeout and ctx (the lock
// wait too): a hook timeout returns only after its work stopped or is safely
// abandoned (hooks.Run): a snapshot stops before it moves the ref, a ref
// update under way is let finish, every other write is atomic. Nothing is
// left running or latched: the next snapshot of the process works as usual.
func RunHook(ctx context.Context, dir, name string, args []string, o HookOptions) {
	if o.LockTimeout <= 0 {
		var env Options
		if env.fromEnv(os.Getenv) == nil {
			o.LockTimeout = env.LockTimeout
		}
	}
	if o.LockTimeout <= 0 || o.LockTimeout > hooks.DefaultLockTimeout {
		o.LockTimeout = hooks.DefaultLockTimeout
	}
	if !o.Background || !hooks.Detached(name) {
		handle := func(ctx context.Context) string { return hookWork(ctx, dir, name, args, o.LockTimeout, nil) }
		hooks.Run(ctx, name, handle, hooks.Options{Stderr: o.Stderr, Timeout: o.Timeout})
		return
	}
	r, err := worktree.Discover(dir)
	if err != nil {
		return // no repository: no memory to snapshot, and nowhere to say so
	}
	// The commit the hook is for, read before the wait for its turn: the
	// next git command may move HEAD meanwhile.
	prov := history.Open(r, store.Open(r.Home)).CurrentProvenance(name)
	handle := func(ctx context.Context) string { return hookWork(ctx, dir, name, args, o.LockTimeout, &prov) }
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = hooks.DefaultTimeout
	}
	done, ok, err := hookTurn(ctx, r.GitDir, 2*(timeout+hooks.Grace)) // the one running ends within its time
	if err != nil {
		saveHookWarnings(r, fmt.Sprintf("memsync: warning: %s hook: snapshot skipped: %v; 'memsync snapshot' takes it", name, err))
	}
	if !ok {
		return
	}
	defer done()
	var said bytes.Buffer
	hooks.Run(ctx, name, handle, hooks.Options{Stderr: &said, Timeout: o.Timeout})
	if said.Len() > 0 {
		saveHookWarnings(r, said.String())
	}
}

// hookTurn waits for a background hook's turn in the worktree whose git
// dir is gitDir: false when another hook waits for its turn already (it
// snapshots after this one came, so this one has nothing to add), or when
// the one running does not end within wait (err says so: the hooks that
// left their turn to this one are not snapshotted either). done ends the turn.
// Where the line's lock files cannot be used (a repository shared with
// other users who made them), hooks do not wait in line: each snapshots,
// as in the foreground.
func hookTurn(ctx context.Context, gitDir string, wait time.Duration) (done func(), ok bool, err error) {
	queued, err := lock.TryExclusive(filepath.Join(gitDir, "memsync-hook-queue.lock"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil // the repository is gone (a test's temp dir): nothing to snapshot
	case err != nil:
		return func() {}, true, nil
	}
	if queued == nil {
		return nil, false, nil
	}
	defer func() { _ = queued.Release() }() // once running: the next hook may queue
	running, err := lock.Exclusive(ctx, filepath.Join(gitDir, "memsync-hook-run.lock"), wait)
	switch {
	case errors.Is(err, lock.ErrTimeout):
		return nil, false, fmt.Errorf("the hook before it did not end: %w", err)
	case ctx.Err() != nil:
		return nil, false, ctx.Err()
	case err != nil:
		return func() {}, true, nil
	}
	return func() { _ = running.Release() }, true, nil
}

// hookLogName is the file in the state dir where background hooks leave
// their warnings, and maxHookLog bounds it: the first warnings say the
// most.
const (
	hookLogName = "hooks.log"
	maxHookLog  = 64 << 10
	hookLogAt   = " (in the background at " // before the time each line of the log ends with
)

// saveHookWarnings appends the warning lines hooks.Run wrote for a
// background hook to the state dir's hook log. It makes no folder above
// the state dir (a repository removed meanwhile stays removed) and writes
// only into a regular file (not through a link, nor into a pipe).
func saveHookWarnings(r *worktree.Repo, said string) {
	perm := r.Shared.Dir(0o755)
	state := filepath.Join(r.CommonDir, "memsync", "state")
	for _, d := range []string{filepath.Dir(state), state} {
		if err := os.Mkdir(d, perm.Perm()); err == nil {
			_ = os.Chmod(d, perm)
		} else if !errors.Is(err, fs.ErrExist) {
			return
		}
	}
	var b strings.Builder
	at := time.Now().Format("2006-01-02 15:04:05")
	for _, line := range strings.Split(strings.TrimSpace(said), "\n") {
		fmt.Fprintf(&b, "%s%s%s)\n", strings.TrimPrefix(line, "memsync: warning: "), hookLogAt, at)
	}
	f, err := fsutil.OpenFile(filepath.Join(state, hookLogName), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, r.Shared.File(0o644))
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() <= maxHookLog {
		_, _ = f.WriteString(b.String())
	}
}

// reportHookWarnings says, through Warn, what background hooks left in the
// state dir's hook log, once: the first Open to take the log reports it
// (not a hook's own: see Options.inHook). A log that is not a regular file
// of at most twice maxHookLog is dropped unread.
func (m *Memory) reportHookWarnings() {
	path := filepath.Join(m.store.StateDir, hookLogName)
	taken := path + "." + strconv.Itoa(os.Getpid())
	if os.Rename(path, taken) != nil {
		return
	}
	defer func() { _ = os.Remove(taken) }()
	f, err := fsutil.OpenFile(taken, os.O_RDONLY|syscall.O_NONBLOCK, 0) // not through a link
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	b, err := fsutil.ReadOpen(f, taken, 2*maxHookLog)
	if err != nil {
		return
	}
	for _, line := range repeatsOnce(strings.Split(strings.TrimSpace(termsafe.Text(string(b))), "\n")) {
		m.warn(line)
	}
}

// repeatsOnce returns the hook log's lines with each warning once, in the
// order they first came: a warning that came again (every hook of a
// rebase refused the same secret, or waited for the same lock) is one line
// that says how many times and from when to when.
func repeatsOnce(lines []string) []string {
	type seen struct {
		line, first, last string
		n                 int
	}
	var order []string
	by := map[string]*seen{}
	for _, line := range lines {
		if line == "" {
			continue
		}
		msg, at := line, ""
		if i := strings.LastIndex(line, hookLogAt); i >= 0 && strings.HasSuffix(line, ")") {
			msg, at = line[:i], line[i+len(hookLogAt):len(line)-1]
		}
		if s := by[msg]; s != nil {
			s.n++
			s.last = at
			continue
		}
		by[msg] = &seen{line: line, first: at, last: at, n: 1}
		order = append(order, msg)
	}
	out := make([]string, 0, len(order))
	for _, msg := range order {
		s := by[msg]
		switch {
		case s.n == 1:
			out = append(out, s.line)
		case s.first == "":
			out = append(out, fmt.Sprintf("%s (%d times)", s.line, s.n))
		case s.first == s.last:
			out = append(out, fmt.Sprintf("%s (in the background, %d times, at %s)", msg, s.n, s.first))
		default:
			out = append(out, fmt.Sprintf("%s (in the background, %d times, from %s to %s)", msg, s.n, s.first, s.last))
		}
	}
	return out
}

// hookWork does the hook's work and returns the warning to print, if any;
// a snapshot records prov (nil: HEAD as it is now).
func hookWork(ctx context.Context, dir, name string, args []string, lockTimeout time.Duration, prov *history.Provenance) string {
	if d, ok := ctx.Deadline(); ok {
		lockTimeout = min(lockTimeout, time.Until(d)) // the lock wait ends with the hook's time
	}
	if err := ctx.Err(); err != nil || lockTimeout <= 0 {
		return "no time left"
	}
	switch name {
	case "post-commit", "post-merge", "post-rewrite", "post-applypatch", "post-checkout":
	default:
		return ""
	}
	var said []string
	m, err := Open(dir, Options{LockTimeout: lockTimeout, Warn: func(msg string) { said = append(said, msg) }, inHook: true})
	if err != nil {
		return err.Error()
	}
	defer func() { _ = m.Close() }()
	warning := func(s string) string {
		if s != "" {
			said = append(said, s)
		}
		return strings.Join(said, "; ")
	}
	if name == "post-checkout" {
		if len(args) < 1 || strings.Trim(args[0], "0") != "" {
			if len(args) == 3 && args[2] == "1" && args[0] != args[1] {
				checkWarning(ctx, m, args[0], args[1], warning)
			}
			return warning("") // a branch switch or a file checkout: Open healed the links
		}
		r := m.repo
		if _, err := os.Stat(m.Path()); err != nil || !r.IsSecondary() {
			return "" // the primary, or a repository without memory
		}
		said = said[:0] // a new worktree: its first link is no repair
		if err := m.beforeWrite(); err != nil {
			return warning("link the new worktree's memory: " + err.Error() + " (run 'memsync worktree doctor')")
		}
		return warning("")
	}
	res, err := m.snapshot(ctx, "", name, false, prov)
	if errors.Is(err, history.ErrMassRemoval) {
		return warning("snapshot skipped: " + err.Error() + "; see 'memsync diff', then put them back (memsync rollback '~0') or keep the removal ('memsync snapshot --accept-removal')")
	}
	if se := new(history.SecretError); errors.As(err, &se) {
		return warning("snapshot skipped: " + err.Error() + "; " + secretSnapshotHint(se.ID))
	}
	if err != nil {
		return warning("snapshot skipped: " + err.Error())
	}
	if n := len(res.problems); n > 0 {
		return warning(fmt.Sprintf("%s has %d problem(s) (first: %s); snapshotted as it is; 'memsync list' shows them",
			m.Path(), n, res.problems[0]))
	}
	if name == "post-merge" {
		checkWarning(ctx, m, "ORIG_HEAD", "HEAD", warning)
	}
	return warning("")
}

// checkWarning checks the entries citing files changed from one commit to
// another (Memory.checkChanged), so readers mark what became stale; a
// failure is a warning.
func checkWarning(ctx context.Context, m *Memory, from, to string, warning func(string) string) {
	if err := m.checkChanged(ctx, from, to); err != nil {
		warning("check of the cited code skipped: " + err.Error())
	}
}

// HooksResult is what InstallHooks and UninstallHooks did: the hooks
// folder and each script (the JSON of 'memsync hooks install|uninstall').
type HooksResult struct {
	Dir   string `json:"dir"`
	Hooks []Hook `json:"hooks"`
}

// InstallHooksOptions set up InstallHooks.
type InstallHooksOptions struct {
	// Executable is the memsync binary the scripts run; "" is this program
	// (os.Executable).
	Executable string
	// Force installs also into a hooks folder in the worktree that git
	// status shows (the change shows there, and the scripts name this
	// machine's memsync).
	Force bool
}

// InstallHooks installs the git hook scripts, which run the memsync
// command as 'memsync hook NAME'; a hook that was there is kept and runs
// first. A hooks folder in the worktree that git status shows is refused
// (KindRefused, with the folder in the result) unless o.Force.
func (m *Memory) InstallHooks(ctx context.Context, o InstallHooksOptions) (HooksResult, error) {
	if m.repo == nil {
		return HooksResult{}, ErrGlobalLayer
	}
	if err := ctx.Err(); err != nil {
		return HooksResult{}, err
	}
	// The worktrees post-checkout links must stay out of git status.
	if err := m.beforeWrite(); err != nil {
		return HooksResult{}, err
	}
	bin := o.Executable
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return HooksResult{}, err
		}
	}
	dir, hs, err := hooks.Install(m.repo, bin)
	if errors.Is(err, hooks.ErrInWorktree) && o.Force {
		m.warn(err.Error() + "; installing anyway (--force): git status will show these changes, and the scripts name this machine's memsync")
		dir, hs, err = hooks.InstallForce(m.repo, bin)
	}
	if errors.Is(err, hooks.ErrInWorktree) {
		err = &hooksInWorktreeError{dir, err}
	}
	return hooksResult(dir, hs), err
}

// hooksInWorktreeError is InstallHooks' refusal of a hooks folder that git
// status shows: its hint (Classify) names the folder.
type hooksInWorktreeError struct {
	dir string
	err error
}

func (e *hooksInWorktreeError) Error() string { return e.err.Error() }
func (e *hooksInWorktreeError) Unwrap() error { return e.err }

// hint is the way out: have the tracked hooks run memsync, or --force.
func (e *hooksInWorktreeError) hint() string {
	return "nothing was changed; have your tracked hooks run memsync: add the line  memsync hook NAME \"$@\"  to " +
		e.dir + "/NAME for NAME in " + strings.Join(hooks.Names(), ", ") + " (and commit them); or install memsync's scripts there anyway: memsync hooks install --force"
}

// UninstallHooks removes memsync's hook scripts and puts back what was there.
func (m *Memory) UninstallHooks(ctx context.Context) (HooksResult, error) {
	if m.repo == nil {
		return HooksResult{}, ErrGlobalLayer
	}
	if err := ctx.Err(); err != nil {
		return HooksResult{}, err
	}
	dir, hs, err := hooks.Uninstall(m.repo)
	return hooksResult(dir, hs), err
}

// Hooks reports what is installed where, and the hook managers in use.
func (m *Memory) Hooks(ctx context.Context) (*HookStatus, error) {
	if m.repo == nil {
		return nil, ErrGlobalLayer
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := hooks.Report(m.repo)
	if err != nil {
		return nil, err
	}
	return hookStatusOf(st), nil
}

// HooksNotRun returns the warning for a repository where 'memsync hooks
// install' ran but git does not run memsync's hooks in this worktree (a
// hook manager replaced or moved them, or core.hooksPath now points
// elsewhere); "" when they run or were never installed. It reads a few
// small files and spawns no git: the CLI calls it on every command.
func (m *Memory) HooksNotRun() string {
	if m.repo == nil {
		return ""
	}
	names := hooks.NotRun(m.repo)
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("git does not run memsync's %s hook%s here (hooks folder %s): no snapshots after commits%s; fix: memsync hooks install",
		strings.Join(names, ", "), words.If(len(names) > 1, "s", ""), hooks.Dir(m.repo),
		words.If(slices.Contains(names, "post-checkout"), ", new worktrees not linked", ""))
}

func hooksResult(dir string, hs []hooks.Hook) HooksResult {
	return HooksResult{Dir: dir, Hooks: hooksOf(hs)}
}
