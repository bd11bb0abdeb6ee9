package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitrepo"
)

// Uninstall removes all of memsync's hooks from the worktree r and the
// repository's hooks folders: its scripts (putting back the hooks they
// chained, byte for byte and with their mode: they are renamed back; also
// memsync's scripts a manager renamed NAME.old or NAME.legacy), its lines in
// .husky/NAME (a file that held only them is removed), its commands in
// lefthook-local.yml (the file too, when memsync created it), and its lines
// in info/exclude. A hook that is not memsync's is left alone, so the hook
// managers keep working.
func Uninstall(r *gitrepo.Repo) (string, []Hook, error) {
	dir := Dir(r)
	acts := map[string]string{}
	folders := []string{dir}
	if common := filepath.Join(r.CommonDir, "hooks"); common != dir {
		folders = append(folders, common)
	}
	for _, d := range folders {
		for _, name := range Names() {
			for _, q := range variants(d, name) {
				act, err := removeScript(q)
				if err != nil {
					return dir, nil, err
				}
				if act != "" {
					acts[name] = act
				}
			}
		}
	}
	if r.WorkTree != "" {
		hd := huskyDir(dir)
		if hd == "" {
			hd = filepath.Join(r.WorkTree, ".husky")
		}
		for _, name := range Names() {
			removed, err := removeBlock(r, hd, name)
			if err != nil {
				return dir, nil, err
			}
			if removed {
				acts[name] = "removed"
			}
		}
		names, err := uninstallLefthook(r)
		if err != nil {
			return dir, nil, err
		}
		for _, name := range names {
			acts[name] = "removed"
		}
	}
	if err := record(r, false); err != nil {
		return dir, nil, err
	}
	var out []Hook
	for _, name := range Names() {
		if act := acts[name]; act != "" {
			h := hookState(r, dir, name)
			h.Action = act
			out = append(out, h)
		}
	}
	return dir, out, nil
}

// removeScript removes memsync's script at q, putting back the hook it
// chained; a kept hook at q.memsync-orig whose script is gone is put back
// too. It returns what it did ("" nothing).
func removeScript(q string) (string, error) {
	orig := q + OrigSuffix
	switch {
	case isOurs(q) && exists(orig), !exists(q) && exists(orig):
		if err := os.Rename(orig, q); err != nil {
			return "", fmt.Errorf("hooks: restore %s: %w", q, err)
		}
		return "restored", nil
	case isOurs(q):
		if err := os.Remove(q); err != nil {
			return "", fmt.Errorf("hooks: remove %s: %w", q, err)
		}
		return "removed", nil
	}
	return "", nil
}

// Manager is a hook manager that runs the worktree's hooks.
type Manager struct {
	Name   string `json:"name"`   // husky, lefthook or pre-commit
	Config string `json:"config"` // where memsync goes: husky's folder, lefthook's local config, the hooks folder
}

// Status is what Status found.
type Status struct {
	Dir      string    `json:"dir"`
	Hooks    []Hook    `json:"hooks"`
	Managers []Manager `json:"managers"`
	// Recorded tells that 'memsync hooks install' ran in the repository and
	// no uninstall since.
	Recorded bool `json:"recorded"`
}

// Report tells what is installed where, whether git runs it, and which
// hook managers (husky, lefthook, pre-commit) the worktree uses.
func Report(r *gitrepo.Repo) (*Status, error) {
	dir := Dir(r)
	s := &Status{Dir: dir, Managers: managers(r, dir)}
	for _, name := range Names() {
		s.Hooks = append(s.Hooks, hookState(r, dir, name))
	}
	s.Recorded = exists(recordPath(r))
	return s, nil
}

// NotRun returns the hooks memsync's install covers that git does not run
// memsync for in the worktree r (a hook manager moved or replaced
// memsync's script, or core.hooksPath now points at another folder), when
// 'memsync hooks install' ran in the repository (and no uninstall since) or
// memsync's scripts are in the common hooks folder; nil otherwise. It reads
// a few small files and spawns nothing: cheap enough for every command.
func NotRun(r *gitrepo.Repo) []string {
	dir := Dir(r)
	if !Installed(r) {
		return nil
	}
	seen, stamp := filepath.Join(r.CommonDir, "memsync", "state", "hooks.seen"), hooksStamp(r, dir)
	if old, err := fsutil.ReadFile(seen, 64<<10); err == nil && string(old) == stamp {
		return nil // the files the check reads are as they were when every hook ran
	}
	var out []string
	for _, name := range Names() {
		if !hookState(r, dir, name).Runs {
			out = append(out, name)
		}
	}
	if out == nil && os.MkdirAll(filepath.Dir(seen), 0o755) == nil {
		_ = fsutil.WriteFile(seen, []byte(stamp), 0o644)
	}
	return out
}

// hooksStamp names, by path, size, mode and time of change, every file
// hookState reads for the hooks in dir: when it is unchanged, so is what
// NotRun found. Stats only.
func hooksStamp(r *gitrepo.Repo, dir string) string {
	var b strings.Builder
	stat := func(p string) {
		b.WriteString(p)
		if fi, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, " %d %o %d", fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		}
		b.WriteByte('\n')
	}
	stat(recordPath(r))
	stat(filepath.Join(dir, "h")) // husky's dispatcher, when dir is husky's
	for _, name := range Names() {
		stat(filepath.Join(dir, name))
		stat(filepath.Join(dir, name+OrigSuffix))
		stat(filepath.Join(dir, name+".legacy"))     // pre-commit keeps the hook it replaced there
		stat(filepath.Join(filepath.Dir(dir), name)) // husky's .husky/NAME
	}
	if r.WorkTree != "" {
		for _, f := range []string{"lefthook-local.yml", ".lefthook-local.yml", "lefthook-local.yaml", ".lefthook-local.yaml"} {
			stat(filepath.Join(r.WorkTree, f))
		}
	}
	return b.String()
}

// Installed tells whether memsync's hooks are installed in the repository
// r: 'memsync hooks install' ran (and no uninstall since), or memsync's
// post-commit is in the common hooks folder. It reads a file or two and
// spawns nothing.
func Installed(r *gitrepo.Repo) bool {
	return exists(recordPath(r)) || isOurs(filepath.Join(r.CommonDir, "hooks", "post-commit"))
}

// managers finds the hook managers in use in the worktree.
func managers(r *gitrepo.Repo, dir string) []Manager {
	out := []Manager{}
	if hd := huskyDir(dir); hd != "" {
		out = append(out, Manager{Name: ManagerHusky, Config: hd})
	}
	lefthook, precommit := false, false
	for _, name := range Names() {
		p := filepath.Join(dir, name)
		lefthook = lefthook || isLefthook(p)
		precommit = precommit || isPreCommit(p)
	}
	if lefthook && r.WorkTree != "" {
		out = append(out, Manager{Name: ManagerLefthook, Config: lefthookLocal(r.WorkTree)})
	}
	if precommit {
		out = append(out, Manager{Name: ManagerPreCommit, Config: dir})
	}
	return out
}
