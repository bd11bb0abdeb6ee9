package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync/history"
	"github.com/memsync/memsync/hooks"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/merge"
	"github.com/memsync/memsync/worktree"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "one health report for the whole setup; --fix repairs what it can",
		Description: "Checks the memory file and the archive (git conflict markers, NUL bytes, bad\n" +
			"UTF-8, duplicate IDs), every worktree's link to the memory, the git hooks, the\n" +
			"recorded conflicts, a lock on refs/memsync/snapshots left by a killed snapshot\n" +
			"(--fix removes it), and whether git tracks .agent/memories.md. With --fix, a file\n" +
			"with git conflict markers is merged by entry: its two sides are parsed, an entry\n" +
			"on either side is kept, the same entry on both sides is one entry, and an entry\n" +
			"that differs keeps ours and records theirs for 'memsync conflicts'; entries that\n" +
			"repeat an earlier entry's ID get new IDs. The damaged file is kept as\n" +
			"memories.md.bak-<hash>, one backup per distinct content; damage --fix cannot\n" +
			"repair (NUL bytes, markers that do not pair up) is for an edit by hand, which\n" +
			"doctor names. Worktree problems are repaired as by\n" +
			"'memsync worktree doctor --fix'. Exits 1 while problems remain.",
		Flags:  []cli.Flag{&cli.BoolFlag{Name: "fix", Usage: "repair what can be repaired"}},
		Action: runDoctor,
	}
}

// Statuses of a doctor check.
const (
	checkOK      = "ok"
	checkProblem = "problem"
	checkFixed   = "fixed"
	checkInfo    = "info"
)

type checkJSON struct {
	Check  string `json:"check"`  // memory, archive, worktree, hooks, history, conflicts, tracked
	Status string `json:"status"` // ok, problem, fixed, info
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	Backup string `json:"backup,omitempty"`

	canFix bool // doctor --fix repairs this problem
}

type doctorJSON struct {
	OK     bool        `json:"ok"`
	Checks []checkJSON `json:"checks"`
}

func runDoctor(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("doctor takes no arguments")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	fix := c.Bool("fix")
	var checks []checkJSON
	unsafe := s.store.PathProblems()
	for _, file := range []struct {
		name, path string
		update     func(func(*memfile.File) error) error
	}{{"memory", s.store.Path(), s.store.Update}, {"archive", s.store.ArchivePath(), s.store.UpdateArchive}} {
		if ch, ok := pathCheck(file.name, file.path, unsafe); ok {
			checks = append(checks, ch)
			continue
		}
		ch, err := s.checkFile(file.name, file.path, fix, file.update)
		if err != nil {
			return err
		}
		checks = append(checks, ch)
	}
	checks = append(checks, s.checkLock(unsafe))
	temps, err := s.checkTemps(fix, len(unsafe) == 0)
	if err != nil {
		return err
	}
	checks = append(checks, temps)
	if s.repo != nil {
		more, err := s.checkRepo(fix)
		if err != nil {
			return err
		}
		checks = append(checks, more...)
	}
	rs, err := merge.LoadLog(s.conflictLog())
	if err != nil {
		return err
	}
	if n := len(rs); n > 0 {
		checks = append(checks, checkJSON{Check: "conflicts", Status: checkProblem,
			Detail: fmt.Sprintf("%d recorded conflict%s", n, plural(n, "", "s")),
			Fix:    "see them: memsync conflicts; settle each: memsync resolve ID --ours|--theirs|--edit"})
	} else {
		checks = append(checks, checkJSON{Check: "conflicts", Status: checkOK, Detail: "no recorded conflicts"})
	}
	left, fixable := 0, false
	for _, ch := range checks {
		if ch.Status == checkProblem {
			left++
			fixable = fixable || ch.canFix
		}
	}
	if s.json {
		if err := s.printJSON(doctorJSON{OK: left == 0, Checks: checks}); err != nil {
			return err
		}
	} else {
		for _, ch := range checks {
			fmt.Fprintf(s.stdout, "%-9s %-7s %s\n", ch.Check, ch.Status, ch.Detail)
			if ch.Status == checkProblem && ch.Fix != "" {
				fmt.Fprintf(s.stdout, "          fix: %s\n", ch.Fix)
			}
			if ch.Backup != "" {
				fmt.Fprintf(s.stdout, "          backup: %s\n", ch.Backup)
			}
		}
	}
	if left > 0 {
		msg := fmt.Sprintf("%d problem(s) left", left)
		if !fix && fixable {
			return withHint(errors.New(msg), "run 'memsync doctor --fix' to repair what can be repaired")
		}
		return errors.New(msg)
	}
	return nil
}

// checkFile reports a memory file's damage and, with fix, repairs what a
// rewrite through the store repairs: git conflict markers are merged by entry
// and entries that repeat an earlier entry's ID get new IDs. What it cannot
// repair gets the step to take by hand, never "doctor --fix" again.
func (s *session) checkFile(name, path string, fix bool, update func(func(*memfile.File) error) error) (checkJSON, error) {
	ch := checkJSON{Check: name, Status: checkOK}
	target, err := s.store.Resolve(path)
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
	ch.Detail = fmt.Sprintf("%s: %d entr%s", path, len(f.Entries), plural(len(f.Entries), "y", "ies"))
	if len(f.Problems) == 0 {
		return ch, nil
	}
	ch.Status = checkProblem
	ch.Detail = fmt.Sprintf("%s: %d problem(s), first at line %d: %s", path, len(f.Problems), f.Problems[0].Line, f.Problems[0].Msg)
	marked, dups := memfile.HasConflictMarkers(data), len(memfile.DuplicateIDs(f))
	switch {
	case marked:
		ch.Fix, ch.canFix = "memsync doctor --fix merges the two sides of the conflict by entry (nothing is lost; a backup is kept)", true
	case dups > 0:
		ch.Fix, ch.canFix = fmt.Sprintf("memsync doctor --fix gives the %d entr%s that repeat an earlier entry's ID new IDs (a backup is kept)", dups, plural(dups, "y", "ies")), true
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
	if _, err := os.Stat(memfile.BackupPath(target, data)); err == nil {
		ch.Backup = memfile.BackupPath(target, data)
	}
	now, err := os.ReadFile(target)
	if err != nil {
		return ch, err
	}
	g := memfile.Parse(now)
	ch.canFix = false
	switch {
	case memfile.HasConflictMarkers(now):
		ch.Detail = path + ": the conflict markers are not well-formed; merge the file by hand"
		ch.Fix = byHand(path, g.Problems[0].Line, ch.Backup)
	case len(g.Problems) > 0:
		ch.Detail = fmt.Sprintf("%s: %d problem(s) left, first at line %d: %s", path, len(g.Problems), g.Problems[0].Line, g.Problems[0].Msg)
		ch.Fix = byHand(path, g.Problems[0].Line, ch.Backup)
	case marked:
		ch.Status, ch.Detail = checkFixed, fmt.Sprintf("%s: merged the two sides of the conflict by entry: %d entries", path, len(g.Entries))
	default:
		ch.Status, ch.Detail = checkFixed, fmt.Sprintf("%s: gave %d entr%s a new ID: %d entries", path, dups, plural(dups, "y", "ies"), len(g.Entries))
	}
	return ch, nil
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
func pathCheck(name, path string, unsafe []error) (checkJSON, bool) {
	for _, err := range unsafe {
		var pe *memfile.PathError
		if errors.As(err, &pe) && (pe.Path == path || pe.Other == path) {
			return checkJSON{Check: name, Status: checkProblem, Detail: err.Error(), Fix: pe.Fix()}, true
		}
	}
	return checkJSON{}, false
}

// checkLock reports the lock file: resolved inside the memory home, no alias
// of a memory file.
func (s *session) checkLock(unsafe []error) checkJSON {
	lp := s.store.Path() + ".lock"
	if ch, ok := pathCheck("lock", lp, unsafe); ok {
		return ch
	}
	if _, err := s.store.Resolve(s.store.Path()); err != nil {
		return checkJSON{Check: "lock", Status: checkInfo, Detail: "not checked: it lies beside the memory file, whose path is unsafe"}
	}
	if real, err := s.store.LockPath(); err == nil {
		lp = real
	}
	if ch, ok := pathCheck("lock", lp, unsafe); ok {
		return ch
	}
	return checkJSON{Check: "lock", Status: checkOK, Detail: lp}
}

// checkTemps reports the temp files that killed rewrites left in the memory
// home; with fix (and only where every path is safe) it removes them under
// the writers' lock.
func (s *session) checkTemps(fix, safe bool) (checkJSON, error) {
	ch := checkJSON{Check: "temp", Status: checkOK, Detail: "no temp files left by interrupted writes"}
	stale, err := s.store.StaleTemps()
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
	ch.Detail = fmt.Sprintf("%d temp file%s left by interrupted writes (%d bytes), e.g. %s", len(stale), plural(len(stale), "", "s"), size, stale[0])
	if !fix || !safe {
		return ch, nil
	}
	removed, err := s.store.RemoveStaleTemps()
	if err != nil {
		return ch, err
	}
	ch.Status = checkFixed
	ch.Detail = fmt.Sprintf("removed %d temp file%s left by interrupted writes", len(removed), plural(len(removed), "", "s"))
	return ch, nil
}

// checkRepo reports the worktrees, the hooks and a tracked memory file.
func (s *session) checkRepo(fix bool) ([]checkJSON, error) {
	var out []checkJSON
	findings, err := worktree.Doctor(s.repo)
	if err != nil {
		return nil, err
	}
	driver := mergeDriverSet(s.repo)
	trackedSeen := false
	for _, f := range findings {
		ch := checkJSON{Check: "worktree", Status: checkProblem, Detail: fmt.Sprintf("%s: %s: %s", f.Worktree.Path, f.Worktree.Status.State, f.Worktree.Status.Detail), Fix: f.Fix}
		if f.Worktree.Status.Tracked {
			trackedSeen = true
			if driver { // tracked on purpose, merged by memsync's merge driver
				ch.Status, ch.Fix = checkInfo, ""
				ch.Detail = f.Worktree.Path + ": .agent/memories.md is tracked by git, merged by memsync's merge driver"
			}
		}
		ch.canFix = f.Fixable
		if fix && f.Fixable {
			res, err := worktree.Repair(s.repo, f, s.stderr, s.stderr)
			if err != nil {
				ch.Detail += " (repair failed: " + err.Error() + ")"
			} else {
				ch.Status, ch.Detail, ch.Backup = checkFixed, f.Worktree.Path+": "+res.Message, res.Backup
			}
		}
		out = append(out, ch)
	}
	if len(findings) == 0 {
		out = append(out, checkJSON{Check: "worktree", Status: checkOK, Detail: "every worktree shares the memory"})
	}
	if st, err := hooks.Report(s.repo); err == nil {
		n := 0
		for _, h := range st.Hooks {
			if h.State == hooks.StateInstalled || h.State == hooks.StateChained {
				n++
			}
		}
		ch := checkJSON{Check: "hooks", Status: checkOK, Detail: fmt.Sprintf("%d of %d hooks installed in %s", n, len(st.Hooks), st.Dir)}
		switch {
		case n == 0:
			ch.Status, ch.Detail = checkInfo, "no hooks installed: no snapshots after commits (memsync hooks install)"
		case n < len(st.Hooks):
			ch.Status, ch.Fix = checkProblem, "memsync hooks install"
		}
		out = append(out, ch)
		for _, m := range st.Managers {
			out = append(out, checkJSON{Check: "hooks", Status: checkInfo, Detail: m.Name + " manages hooks here (" + m.Config + "); see memsync hooks status"})
		}
	}
	if ch, err := s.checkRefLock(fix); err != nil {
		return nil, err
	} else if ch != nil {
		out = append(out, *ch)
	}
	if !trackedSeen && !driver && tracked(s.repo.Primary) {
		out = append(out, checkJSON{Check: "tracked", Status: checkProblem, Detail: ".agent/memories.md is tracked by git on this branch",
			Fix: "git rm --cached .agent/memories.md && git commit (memsync keeps history on refs/memsync/snapshots; or keep it tracked with the merge driver: memsync init --merge-driver)"})
	}
	return out, nil
}

// checkRefLock reports the snapshot ref's lock file left by a killed
// snapshot (it blocks every later one) and, with fix, removes it; nil when
// there is none.
func (s *session) checkRefLock(fix bool) (*checkJSON, error) {
	h := history.Open(s.repo, s.store)
	path, err := h.StaleRefLock(false)
	if err != nil || path == "" {
		return nil, err
	}
	ch := &checkJSON{Check: "history", Status: checkProblem,
		Detail: fmt.Sprintf("%s is older than %s and no process holds it: every snapshot fails on it", path, history.StaleRefLockAge),
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
