package memsync

import (
	"path/filepath"

	"github.com/memsync/memsync/hooks"
)

// HookStatus is what Hooks found: the hooks folder git runs, each hook's
// state, and the hook managers in use (the JSON of 'memsync hooks status').
type HookStatus struct {
	Dir      string        `json:"dir"`
	Hooks    []Hook        `json:"hooks"`
	Managers []HookManager `json:"managers"`
	// Recorded tells that 'memsync hooks install' ran in the repository
	// and no uninstall since.
	Recorded bool `json:"recorded"`
}

// Hook is one git hook's state, and what InstallHooks or UninstallHooks
// did to it.
type Hook struct {
	Name string `json:"name"`
	Path string `json:"path"` // memsync's script, or the manager's file holding memsync's lines
	// State is "missing" (no hook of that name), "installed" (memsync's
	// script, or memsync's lines in a hook manager's file), "chained"
	// (memsync's script, running the hook that was there first) or
	// "foreign" (another hook: install chains it, or goes into its manager).
	State   string `json:"state"`
	Manager string `json:"manager,omitempty"` // the hook manager memsync runs through: husky, lefthook, pre-commit
	Runs    bool   `json:"runs"`              // git runs memsync for this hook in this worktree
	Action  string `json:"action,omitempty"`  // installed, updated, unchanged, restored, removed, kept
	// Outdated tells memsync's script as an older memsync wrote it (a
	// snapshot hook git waits for, say): InstallHooks writes today's.
	Outdated bool `json:"outdated,omitempty"`
	// Chained is, for a chained hook, the hook that runs first (the one
	// that was there before memsync's).
	Chained string `json:"-"`
}

// HookManager is a hook manager that runs the worktree's hooks.
type HookManager struct {
	Name   string `json:"name"`   // husky, lefthook or pre-commit
	Config string `json:"config"` // where memsync goes: husky's folder, lefthook's local config, the hooks folder
}

func hookStatusOf(st *hooks.Status) *HookStatus {
	out := &HookStatus{Dir: st.Dir, Hooks: hooksOf(st.Hooks), Recorded: st.Recorded}
	if st.Hooks == nil {
		out.Hooks = nil
	}
	if st.Managers != nil {
		out.Managers = make([]HookManager, len(st.Managers))
		for i, m := range st.Managers {
			out.Managers[i] = HookManager(m)
		}
	}
	return out
}

// hooksOf converts hooks' states (an empty list for none).
func hooksOf(hs []hooks.Hook) []Hook {
	out := make([]Hook, len(hs))
	for i, h := range hs {
		out[i] = Hook{Name: h.Name, Path: h.Path, State: h.State, Manager: h.Manager, Runs: h.Runs, Action: h.Action, Outdated: h.Outdated}
		if h.State == hooks.StateChained {
			out[i].Chained = filepath.Base(h.Path) + hooks.OrigSuffix
		}
	}
	return out
}
