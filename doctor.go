package memsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/memsync/memsync/hooks"
	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/internal/words"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/worktree"
)

// The statuses of a doctor check.
const (
	checkOK      = "ok"
	checkProblem = "problem"
	checkFixed   = "fixed" // a problem Doctor repaired
	checkInfo    = "info"
)

// Check is one finding of Doctor (docs/commands.md documents the JSON).
type Check struct {
	Check  string `json:"check"`  // memory, archive, lock, state, temp, layout, worktree, hooks, history, refspec, conflicts, tracked, agent
	Status string `json:"status"` // ok, problem, fixed (a problem Doctor repaired) or info
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`    // what repairs a problem, for people
	Backup string `json:"backup,omitempty"` // where a repair kept the old content
	// Fixable tells that Doctor with Fix repairs this problem.
	Fixable bool `json:"-"`
}

// DoctorReport is Doctor's health report (the JSON of `memsync doctor --json`).
type DoctorReport struct {
	OK     bool    `json:"ok"` // no problem is left
	Checks []Check `json:"checks"`
}

// Problems counts the checks that are problems, and tells whether Doctor
// with Fix would repair one of them.
func (r DoctorReport) Problems() (left int, fixable bool) {
	for _, ch := range r.Checks {
		if ch.Status == checkProblem {
			left++
			fixable = fixable || ch.Fixable
		}
	}
	return left, fixable
}

// DoctorOptions are Doctor's.
type DoctorOptions struct {
	// Fix repairs what can be repaired: git conflict markers (merged by
	// entry), duplicate IDs, entries not in the file's dialect (a file
	// ralph and memsync both wrote), temp files of interrupted writes, worktree
	// links (as WorktreeDoctor), a stale lock on the snapshot ref, a
	// snapshot ref that points at missing objects (reset to its newest
	// snapshot the repository holds), a remote's fetch refspec that maps
	// refs/memsync/ onto this clone's (a negative refspec added).
	Fix bool
}

// Doctor checks the whole setup: the memory file and the archive (git
// conflict markers, NUL bytes, bad UTF-8, duplicate IDs, unsafe paths), the
// lock file, temp files left by interrupted writes, every worktree's link to
// the memory, the git hooks, a stale lock on refs/memsync/snapshots,
// snapshot refs that point at objects the repository lacks, a remote's
// fetch refspec that maps refs/memsync/ onto this clone's, a memory file
// git tracks, the recorded conflicts, and, for each coding agent found on
// this machine, whether memsync is set up in it (info: not setting up an
// agent is no problem). Damage a repair
// cannot fix gets the edit to make by hand as its Fix.
func (m *Memory) Doctor(ctx context.Context, o DoctorOptions) (DoctorReport, error) {
	if err := ctx.Err(); err != nil {
		return DoctorReport{}, err
	}
	var checks []Check
	unsafe := m.store.PathProblems()
	for _, file := range []struct {
		name, path string
		update     func(func(*memfile.File) error) error
	}{{"memory", m.store.Path(), m.st(ctx).Update}, {"archive", m.store.ArchivePath(), m.st(ctx).UpdateArchive}} {
		if ch, ok, err := m.checkTorn(ctx, file.name, file.path, o.Fix); err != nil || ok {
			if err != nil {
				return DoctorReport{}, err
			}
			checks = append(checks, ch)
			continue
		}
		if ch, ok := pathCheck(file.name, file.path, unsafe); ok {
			checks = append(checks, ch)
			continue
		}
		ch, err := m.checkFile(file.name, file.path, o.Fix, file.update)
		if err != nil {
			return DoctorReport{}, err
		}
		checks = append(checks, ch)
	}
	checks = append(checks, m.checkLock(unsafe))
	state, err := m.checkState(ctx, o.Fix)
	if err != nil {
		return DoctorReport{}, err
	}
	checks = append(checks, state)
	temps, err := m.checkTemps(ctx, o.Fix, len(unsafe) == 0)
	if err != nil {
		return DoctorReport{}, err
	}
	checks = append(checks, temps)
	if m.repo != nil {
		more, err := m.checkRepo(ctx, o.Fix)
		if err != nil {
			return DoctorReport{}, err
		}
		checks = append(checks, more...)
	}
	rs, err := merge.LoadLog(m.conflictLog)
	if err != nil && state.Status != checkProblem {
		return DoctorReport{}, err
	}
	if n := len(rs); err != nil {
		checks = append(checks, Check{Check: "conflicts", Status: checkInfo, Detail: "not checked: the state folder, where they are recorded, is not memsync's"})
	} else if n > 0 {
		checks = append(checks, Check{Check: "conflicts", Status: checkProblem,
			Detail: fmt.Sprintf("%d recorded conflict%s", n, words.Plural(n, "", "s")),
			Fix:    "see them: memsync conflicts; settle each: memsync resolve ID --ours|--theirs|--edit"})
	} else {
		checks = append(checks, Check{Check: "conflicts", Status: checkOK, Detail: "no recorded conflicts"})
	}
	if m.repo != nil && m.repo.WorkTree != "" {
		checks = append(checks, agentChecks(m.repo.WorkTree)...)
	}
	r := DoctorReport{Checks: checks}
	left, _ := r.Problems()
	r.OK = left == 0
	return r, nil
}

// checkFile reports a memory file's damage and, with fix, repairs what a
// rewrite through the store repairs: git conflict markers are merged by entry
// and entries that repeat an earlier entry's ID get new IDs. What it cannot
// repair gets the step to take by hand, never "doctor --fix" again.
func (m *Memory) checkFile(name, path string, fix bool, update func(func(*memfile.File) error) error) (Check, error) {
	ch := Check{Check: name, Status: checkOK}
	target, err := m.store.Resolve(path)
	if err != nil {
		return ch, err
	}
	data, err := os.ReadFile(target)
	if errors.Is(err, os.ErrNotExist) {
		ch.Detail = path + ": none yet"
		return ch, nil
	}
	if err != nil {
		return ch, err
	}
	f := memfile.Parse(data)
	ch.Detail = fmt.Sprintf("%s: %d entr%s", path, len(f.Entries), words.Plural(len(f.Entries), "y", "ies"))
	if len(f.Problems) == 0 {
		return ch, nil
	}
	ch.Status = checkProblem
	ch.Detail = fmt.Sprintf("%s: %d problem(s), first at line %d: %s", path, len(f.Problems), f.Problems[0].Line, f.Problems[0].Msg)
	marked, dups := memfile.HasConflictMarkers(data), len(memfile.DuplicateIDs(f))
	mixed := 0
	for _, p := range f.Problems {
		if memfile.IsDialectProblem(p) {
			mixed++
		}
	}
	if mixed > 0 {
		var lines []string
		for _, p := range f.Problems {
			if memfile.IsDialectProblem(p) {
				lines = append(lines, fmt.Sprint(p.Line))
			}
		}
		ch.Detail = fmt.Sprintf("%s: holds both dialects: %d entr%s not in the file's dialect (%s), at line %s; first: %s", path, mixed, words.Plural(mixed, "y", "ies"), f.Dialect, strings.Join(lines, ", "), f.Problems[0].Msg)
	}
	switch {
	case marked:
		ch.Fix, ch.Fixable = "memsync doctor --fix merges the two sides of the conflict by entry (nothing is lost; a backup is kept)", true
	case dups > 0:
		ch.Fix, ch.Fixable = fmt.Sprintf("memsync doctor --fix gives the %d entr%s that repeat an earlier entry's ID new IDs (nothing else changes)", dups, words.Plural(dups, "y", "ies")), true
	case mixed == len(f.Problems):
		ch.Fix, ch.Fixable = fmt.Sprintf("memsync doctor --fix writes the %d entr%s in the file's dialect, %s (nothing is lost; a backup is kept)", mixed, words.Plural(mixed, "y", "ies"), f.Dialect), true
	default:
		ch.Fix = byHand(path, f.Problems[0].Line, "")
		return ch, nil
	}
	if !fix {
		return ch, nil
	}
	if err := update(func(*memfile.File) error { return nil }); err != nil {
		return ch, err
	}
	if _, err := os.Stat(store.BackupPath(target, data)); err == nil {
		ch.Backup = store.BackupPath(target, data)
	}
	now, err := os.ReadFile(target)
	if err != nil {
		return ch, err
	}
	g := memfile.Parse(now)
	ch.Fixable = false
	switch {
	case memfile.HasConflictMarkers(now):
		ch.Detail = path + ": the conflict markers are not well-formed; merge the file by hand"
		ch.Fix = byHand(path, g.Problems[0].Line, ch.Backup)
	case len(g.Problems) > 0:
		ch.Detail = fmt.Sprintf("%s: %d problem(s) left, first at line %d: %s", path, len(g.Problems), g.Problems[0].Line, g.Problems[0].Msg)
		ch.Fix = byHand(path, g.Problems[0].Line, ch.Backup)
	case marked:
		ch.Status, ch.Detail = checkFixed, fmt.Sprintf("%s: merged the two sides of the conflict by entry: %d entries", path, len(g.Entries))
	case mixed > 0:
		ch.Status, ch.Detail = checkFixed, fmt.Sprintf("%s: wrote %d entr%s in the file's dialect, %s: %d entries", path, mixed, words.Plural(mixed, "y", "ies"), g.Dialect, len(g.Entries))
	default:
		ch.Status, ch.Detail = checkFixed, fmt.Sprintf("%s: gave %d entr%s a new ID: %d entries", path, dups, words.Plural(dups, "y", "ies"), len(g.Entries))
	}
	return ch, nil
}

// checkTorn reports a memory file whose last entry is torn (memfile.Torn:
// an append cut off part-way), ok false when it is not. With fix it removes
// the torn entry, keeping the file in a backup, and reports the file as
// checkFile then finds it.
func (m *Memory) checkTorn(ctx context.Context, name, path string, fix bool) (Check, bool, error) {
	target, err := m.store.Resolve(path)
	if err != nil {
		return Check{}, false, nil // checkFile reports it
	}
	data, err := os.ReadFile(target)
	if err != nil {
		return Check{}, false, nil
	}
	at, line, torn := memfile.Torn(data)
	if !torn {
		return Check{}, false, nil
	}
	ch := Check{Check: name, Status: checkProblem, Fixable: true,
		Detail: fmt.Sprintf("%s: the last entry (line %d, byte %d on) is torn: an append cut it off part-way (a full disk, an I/O error, a crash)", path, line, at),
		Fix:    "memsync doctor --fix removes the torn entry (the whole file is kept in a backup); then add it again"}
	if !fix {
		return ch, true, nil
	}
	backup, line, err := m.st(ctx).CutTorn(path)
	if err != nil {
		return ch, true, err
	}
	update := m.st(ctx).Update
	if name == "archive" {
		update = m.st(ctx).UpdateArchive
	}
	after, err := m.checkFile(name, path, fix, update)
	if err != nil {
		return ch, true, err
	}
	if backup == "" { // no longer torn: another writer finished it
		return after, true, nil
	}
	removed := fmt.Sprintf("removed the torn last entry (line %d; the old file is in %s)", line, backup)
	if after.Status == checkOK {
		after.Status = checkFixed
	}
	after.Detail = removed + "; " + after.Detail
	if after.Backup == "" {
		after.Backup = backup
	}
	return after, true, nil
}

// byHand is the advice for damage memsync does not repair by itself: the
// edit to make, and how to check it.
func byHand(path string, line int, backup string) string {
	msg := fmt.Sprintf("edit %s by hand at line %d: keep the entries you want and delete the conflict marker lines (<<<<<<<, =======, >>>>>>>), NUL bytes or invalid text; then run 'memsync doctor'", path, line)
	if backup != "" {
		msg += " (the old content is in " + backup + ")"
	}
	return msg
}

// pathCheck reports the first unsafe path problem of the file at path (the
// file itself, or an alias of it), ok false when it has none.
func pathCheck(name, path string, unsafe []error) (Check, bool) {
	for _, err := range unsafe {
		var pe *store.PathError
		if errors.As(err, &pe) && (pe.Path == path || pe.Other == path) {
			return Check{Check: name, Status: checkProblem, Detail: err.Error(), Fix: pe.Fix()}, true
		}
	}
	return Check{}, false
}

// checkLock reports the lock file: resolved inside the memory home, no alias
// of a memory file.
func (m *Memory) checkLock(unsafe []error) Check {
	lp := m.store.Path() + ".lock"
	if ch, ok := pathCheck("lock", lp, unsafe); ok {
		return ch
	}
	if _, err := m.store.Resolve(m.store.Path()); err != nil {
		return Check{Check: "lock", Status: checkInfo, Detail: "not checked: it lies beside the memory file, whose path is unsafe"}
	}
	if real, err := m.store.LockPath(); err == nil {
		lp = real
	}
	if ch, ok := pathCheck("lock", lp, unsafe); ok {
		return ch
	}
	return Check{Check: "lock", Status: checkOK, Detail: lp}
}

// checkState reports memsync's state folder (<git dir>/memsync/state: the
// content and search indexes, the access, removal and conflict logs) when
// it is not a folder of its own: a symlink, which memsync would write its
// state through (out of the git dir, or into a device), or a file. With fix
// the link is removed (where it leads is left alone) or the file moved
// aside (kept as state.bak-STAMP), and a new folder made, under the
// writers' lock: the caches are rebuilt.
func (m *Memory) checkState(ctx context.Context, fix bool) (Check, error) {
	dir := m.store.StateDir
	ch := Check{Check: "state", Status: checkOK, Detail: dir}
	fi, err := os.Lstat(dir)
	switch {
	case dir == "" || errors.Is(err, os.ErrNotExist) || err == nil && fi.IsDir():
		return ch, nil
	case err != nil:
		return ch, err
	}
	what := "a file"
	if fi.Mode()&os.ModeSymlink != 0 {
		to, _ := os.Readlink(dir)
		what = "a symlink to " + to
	}
	ch.Status, ch.Detail = checkProblem, fmt.Sprintf("%s is %s, not a folder of memsync's own: its state would be written there", dir, what)
	ch.Fix = "memsync doctor --fix removes the link (or moves the file aside) and makes a new folder; the caches are rebuilt"
	if !fix {
		return ch, nil
	}
	err = m.st(ctx).WithLock(func() error {
		fi, err := os.Lstat(dir)
		switch {
		case err != nil || fi.IsDir():
			return err // made meanwhile
		case fi.Mode()&os.ModeSymlink != 0:
			err = os.Remove(dir)
		default:
			err = os.Rename(dir, dir+".bak-"+worktree.BackupStamp())
		}
		if err != nil {
			return err
		}
		return fsutil.MkdirAll(dir, m.store.DirPerm())
	})
	if err != nil {
		return ch, err
	}
	ch.Status, ch.Detail, ch.Fix = checkFixed, "replaced "+dir+" ("+what+") by a new folder", ""
	return ch, nil
}

// checkTemps reports the temp files that killed rewrites left in the memory
// home; with fix (and only where every path is safe) it removes them under
// the writers' lock.
func (m *Memory) checkTemps(ctx context.Context, fix, safe bool) (Check, error) {
	ch := Check{Check: "temp", Status: checkOK, Detail: "no temp files left by interrupted writes"}
	stale, err := m.store.StaleTemps()
	if err != nil || len(stale) == 0 {
		return ch, err
	}
	var size int64
	for _, p := range stale {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
		}
	}
	ch.Status, ch.Fix = checkProblem, "memsync doctor --fix removes them (no live process is writing them)"
	ch.Detail = fmt.Sprintf("%d temp file%s left by interrupted writes (%d bytes), e.g. %s", len(stale), words.Plural(len(stale), "", "s"), size, stale[0])
	if !fix || !safe {
		return ch, nil
	}
	removed, err := m.st(ctx).RemoveStaleTemps()
	if err != nil {
		return ch, err
	}
	ch.Status = checkFixed
	ch.Detail = fmt.Sprintf("removed %d temp file%s left by interrupted writes", len(removed), words.Plural(len(removed), "", "s"))
	return ch, nil
}

// checkRepo reports the worktrees, the hooks and a tracked memory file.
func (m *Memory) checkRepo(ctx context.Context, fix bool) ([]Check, error) {
	out := []Check{m.layoutCheck(), m.otherLayoutCheck(fix)}
	findings, err := worktree.Doctor(ctx, m.repo, m.st(ctx))
	if err != nil {
		return nil, err
	}
	driver := m.mergeDriverSet()
	trackedSeen := false
	for _, f := range findings {
		ch := Check{Check: "worktree", Status: checkProblem, Detail: fmt.Sprintf("%s: %s: %s", f.Worktree.Path, f.Worktree.Status.State, f.Worktree.Status.Detail), Fix: f.Fix}
		if f.Worktree.Status.Tracked && m.repo.Layout != worktree.LayoutRalph {
			trackedSeen = true
			if driver { // tracked on purpose, merged by memsync's merge driver
				ch.Status, ch.Fix = checkInfo, ""
				ch.Detail = f.Worktree.Path + ": .agent/memories.md is tracked by git, merged by memsync's merge driver"
			}
		}
		ch.Fixable = f.Fixable
		if fix && f.Fixable {
			res, err := m.repair(ctx, f)
			if err != nil {
				ch.Detail += " (repair failed: " + err.Error() + ")"
			} else {
				ch.Status, ch.Detail, ch.Backup = checkFixed, f.Worktree.Path+": "+res.Message, res.Backup
			}
		}
		out = append(out, ch)
	}
	if len(findings) == 0 {
		out = append(out, Check{Check: "worktree", Status: checkOK, Detail: "every worktree shares the memory"})
	}
	if st, err := hooks.Report(m.repo); err == nil {
		n := 0
		var old []string
		for _, h := range st.Hooks {
			if h.State == hooks.StateInstalled || h.State == hooks.StateChained {
				n++
			}
			if h.Outdated {
				old = append(old, h.Name)
			}
		}
		ch := Check{Check: "hooks", Status: checkOK, Detail: fmt.Sprintf("%d of %d hooks installed in %s", n, len(st.Hooks), st.Dir)}
		switch msg := m.HooksNotRun(); {
		case msg != "":
			ch.Status, ch.Detail, ch.Fix = checkProblem, msg, "memsync hooks install"
		case n == 0:
			ch.Status, ch.Detail = checkInfo, "no hooks installed: no snapshots after commits (memsync hooks install)"
		case n < len(st.Hooks):
			ch.Status, ch.Fix = checkProblem, "memsync hooks install"
		case len(old) > 0:
			ch.Status, ch.Fix = checkProblem, "memsync hooks install"
			ch.Detail += "; written by an older memsync: " + strings.Join(old, ", ")
		}
		out = append(out, ch)
		for _, mg := range st.Managers {
			out = append(out, Check{Check: "hooks", Status: checkInfo, Detail: mg.Name + " manages hooks here (" + mg.Config + "); memsync hooks install goes through it; see memsync hooks status"})
		}
	}
	if ch, err := m.checkRefLock(ctx, fix); err != nil {
		return nil, err
	} else if ch != nil {
		out = append(out, *ch)
	}
	damaged, err := m.checkHistory(ctx, fix)
	if err != nil {
		return nil, err
	}
	out = append(out, damaged...)
	out = append(out, m.checkRefspecs(ctx, fix)...)
	if m.repo.Layout == worktree.LayoutRalph {
		if trackedIn(m.repo) {
			ch := Check{Check: "tracked", Status: checkInfo, Detail: m.repo.RelFile() + " is tracked by git (ralph's default): linked worktrees keep skip-worktree on it; merged by memsync's merge driver"}
			if !driver {
				ch.Detail = m.repo.RelFile() + " is tracked by git (ralph's default): linked worktrees keep skip-worktree on it; set up the merge driver so merges go by entry: memsync init --merge-driver"
			}
			out = append(out, ch)
		}
	} else if !trackedSeen && !driver && trackedIn(m.repo) {
		out = append(out, Check{Check: "tracked", Status: checkProblem, Detail: ".agent/memories.md is tracked by git on this branch",
			Fix: "git rm --cached .agent/memories.md && git commit (memsync keeps history on refs/memsync/snapshots; or keep it tracked with the merge driver: memsync init --merge-driver)"})
	}
	return out, nil
}

// layoutCheck says which file is the memory and why.
func (m *Memory) layoutCheck() Check {
	r := m.repo
	what := "memsync's layout"
	if r.Layout == worktree.LayoutRalph {
		what = "ralph-orchestrator's layout, shared with ralph under its lock " + m.Path() + ".lock"
	}
	where := "kept in the git dir, where git clean, stash and checkout never reach; every worktree's " + r.RelFile() + " links to it, the primary's " + r.WorktreeFile(r.Primary) + " too"
	switch {
	case r.Bare:
		where = "in the git dir of a bare repository; every worktree's " + r.RelFile() + " links to it"
	case r.InWorktree:
		where = "the primary worktree's file, which its branches track (git config " + worktree.HomeKey + "=worktree)"
	}
	return Check{Check: "layout", Status: checkInfo,
		Detail: fmt.Sprintf("the memory is %s, %s (%s): %s; git config %s=agent|ralph chooses (memsync init --layout)", m.Path(), where, what, r.LayoutWhy, worktree.LayoutKey)}
}

// otherLayoutCheck reports a memory file of the other layout in the
// primary worktree (its entries are not served: the layout is pinned) and,
// with fix, folds its entries into the memory and moves it aside.
func (m *Memory) otherLayoutCheck(fix bool) Check {
	path := worktree.OtherLayoutFile(m.repo)
	if path == "" {
		return Check{Check: "layout", Status: checkOK, Detail: "no memory file of the other layout in the primary worktree"}
	}
	ch := Check{Check: "layout", Status: checkProblem, Fixable: true,
		Detail: otherLayoutMessage(m.repo, path),
		Fix:    "memsync doctor --fix folds its entries into the memory and moves the file aside (or choose that layout: memsync init --layout)"}
	if fix {
		res, err := worktree.FoldOther(m.repo, m.store, path)
		if err != nil {
			ch.Detail += " (fold failed: " + err.Error() + ")"
			return ch
		}
		ch.Status, ch.Backup = checkFixed, res.Backup
		ch.Detail = fmt.Sprintf("folded %d entr%s of %s into the memory; the file is kept as %s", res.Added, words.Plural(res.Added, "y", "ies"), path, res.Backup)
	}
	return ch
}

// otherLayoutMessage says what a file of the other layout at path is.
func otherLayoutMessage(r *worktree.Repo, path string) string {
	return fmt.Sprintf("%s is a memory file of the other layout; this repository's memory is %s (git config %s), so its entries are not served", path, r.RelFile(), worktree.LayoutKey)
}

// checkRefLock reports the snapshot ref's lock file left by a killed
// snapshot (it blocks every later one) and, with fix, removes it; nil when
// there is none.
func (m *Memory) checkRefLock(ctx context.Context, fix bool) (*Check, error) {
	h := history.Open(m.repo, m.st(ctx)) // the caller checked m.repo
	path, err := h.StaleRefLock(false)
	if err != nil || path == "" {
		return nil, err
	}
	ch := &Check{Check: "history", Status: checkProblem,
		Detail: fmt.Sprintf("%s is older than %s and no process holds it: a killed snapshot left it (the next snapshot removes it too)", path, history.StaleRefLockAge),
		Fix:    "memsync doctor --fix removes it"}
	if !fix {
		return ch, nil
	}
	if path, err = h.StaleRefLock(true); err != nil {
		ch.Detail += " (removing it failed: " + err.Error() + ")"
	} else if path != "" {
		ch.Status, ch.Detail = checkFixed, "removed "+path+", left by a killed snapshot"
	}
	return ch, nil
}

// checkHistory reports each snapshot ref (refs/memsync/snapshots, a
// remote's refs/memsync/remotes/NAME/snapshots) that points at objects the
// repository lacks and, with fix, repairs it (history.Repair), saying what
// history lost; nothing when every ref is whole.
func (m *Memory) checkHistory(ctx context.Context, fix bool) ([]Check, error) {
	h := history.Open(m.repo, m.st(ctx)) // the caller checked m.repo
	damaged, err := h.Damaged(ctx)
	if err != nil {
		return nil, err
	}
	var out []Check
	for _, d := range damaged {
		ch := Check{Check: "history", Status: checkProblem, Fixable: true,
			Detail: fmt.Sprintf("%s points at %s, whose objects the repository lacks (%s); every snapshot fails until it is repaired", d.Ref, words.Short(d.Commit), d.Why),
			Fix:    "memsync doctor --fix moves it back to the newest whole snapshot (or rebuilds it from the live memory)"}
		if fix {
			res, err := h.Repair(ctx, d, h.CurrentProvenance(""))
			if err != nil {
				ch.Detail += " (repair failed: " + err.Error() + ")"
			} else {
				ch.Status, ch.Detail = checkFixed, repairMessage(res)
			}
		}
		out = append(out, ch)
	}
	return out, nil
}

// repairMessage says what a history repair did and what history lost.
func repairMessage(r *history.RepairResult) string {
	lost := "the snapshots after it are lost from history"
	switch {
	case r.Dropped == 1:
		lost = "1 snapshot is lost from history"
	case r.Dropped > 1:
		lost = fmt.Sprintf("%d snapshots are lost from history", r.Dropped)
	}
	var msg string
	switch {
	case r.Deleted:
		return fmt.Sprintf("%s pointed at %s, whose objects are gone, and no whole snapshot was left: deleted it (the next memsync sync fetches it again)", r.Ref, words.Short(r.Commit))
	case r.Rebuilt:
		msg = fmt.Sprintf("%s pointed at %s, whose objects are gone, and no whole snapshot was left: made a new root snapshot %s of the live memory; all earlier history is lost", r.Ref, words.Short(r.Commit), words.Short(r.To))
	default:
		msg = fmt.Sprintf("%s pointed at %s, whose objects are gone: moved it back to %s, the newest whole snapshot (found in its %s); %s", r.Ref, words.Short(r.Commit), words.Short(r.To), r.From, lost)
		if r.Snapshot != "" {
			msg += fmt.Sprintf("; the live memory is snapshotted on top as %s", words.Short(r.Snapshot))
		}
	}
	return msg + "; the live memory is unchanged"
}

// agentChecks tell, for each agent found on this machine, whether its
// config has memsync's server (SetupAgent).
func agentChecks(dir string) []Check {
	list, err := Agents(dir)
	if err != nil {
		return []Check{{Check: "agent", Status: checkInfo, Detail: "agents not checked: " + err.Error()}}
	}
	var out []Check
	for _, a := range list {
		switch {
		case a.Found == "":
		case a.Error != "":
			out = append(out, Check{Check: "agent", Status: checkInfo, Detail: a.Title + ": " + a.Error})
		case len(a.Wired) > 0:
			out = append(out, Check{Check: "agent", Status: checkOK, Detail: a.Title + ": memsync is set up (" + strings.Join(a.Wired, ", ") + " scope)"})
		default:
			out = append(out, Check{Check: "agent", Status: checkInfo, Detail: a.Title + " (" + a.Found + "): memsync is not set up; 'memsync setup " + a.Agent + "' wires it"})
		}
	}
	return out
}
