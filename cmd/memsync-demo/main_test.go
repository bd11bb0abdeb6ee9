package main

import (
	"os/exec"
	"testing"
)

// TestDemo runs README's first command, the end-to-end demo, with fewer
// adds per writer: it fails when any step does (lost entries, a dirty
// git status, a worktree not linked, a failed snapshot).
func TestDemo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	if testing.Short() {
		t.Skip("builds memsync and runs some 50 processes")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Chdir("../..") // the demo builds ./cmd/memsync from the root of the clone
	if err := demo(false, 5); err != nil {
		t.Fatal(err)
	}
}
