package gitcmd

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func TestEnvDropsLocalVars(t *testing.T) {
	t.Setenv("GIT_DIR", "/elsewhere/.git")
	t.Setenv("GIT_INDEX_FILE", "/elsewhere/index")
	t.Setenv("GIT_CONFIG_KEY_0", "core.bare")
	t.Setenv("GIT_AUTHOR_NAME", "kept")
	env := strings.Join(Env(), "\n")
	for _, v := range []string{"GIT_DIR=", "GIT_INDEX_FILE=", "GIT_CONFIG_KEY_0="} {
		if strings.Contains(env, v) {
			t.Fatalf("%s not scrubbed", v)
		}
	}
	if !strings.Contains(env, "GIT_AUTHOR_NAME=kept") {
		t.Fatal("GIT_AUTHOR_NAME dropped")
	}
}

func TestOutputIgnoresHookGitDir(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	if _, err := Output(dir, "init", "-q", "."); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_DIR", "/nonexistent/.git")
	out, err := Output(dir, "rev-parse", "--git-dir")
	if err != nil || strings.TrimSpace(out) != ".git" {
		t.Fatalf("%q %v", out, err)
	}
	if _, err := Output(dir, "no-such-command"); err == nil || !strings.Contains(err.Error(), "no-such-command") {
		t.Fatalf("error lacks git's message: %v", err)
	}
}

// TestEnvFixesLocaleAndPrompt: git runs in the C locale (memsync reads its
// English messages) and never prompts for credentials, whatever the caller's
// environment says; the git spawned sees exactly one value of each.
func TestEnvFixesLocaleAndPrompt(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	t.Setenv("LC_ALL", "de_DE.UTF-8")
	t.Setenv("GIT_TERMINAL_PROMPT", "1")
	n := map[string]int{}
	for _, kv := range Env() {
		n[kv]++
		if strings.HasPrefix(kv, "LC_ALL=") || strings.HasPrefix(kv, "GIT_TERMINAL_PROMPT=") {
			n["set"]++
		}
	}
	if n["LC_ALL=C"] != 1 || n["GIT_TERMINAL_PROMPT=0"] != 1 || n["set"] != 2 {
		t.Fatalf("env: %v", n)
	}
	// The git process sees them: an alias runs a shell that prints them.
	out, err := Output(t.TempDir(), "-c", `alias.showenv=!echo "$LC_ALL $GIT_TERMINAL_PROMPT"`, "showenv")
	if err != nil || strings.TrimSpace(out) != "C 0" {
		t.Fatalf("%q %v", out, err)
	}
}

// A git started for a context that is done is not run to its end: the error
// says why.
func TestOutputContextHonoursCancel(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := OutputContext(ctx, t.TempDir(), "version"); !errors.Is(err, context.Canceled) {
		t.Fatalf("git ran for a cancelled context: %v", err)
	}
}

// TestErrorCommand: a failed git command is named as a person would type
// it, without the options memsync puts before it.
func TestErrorCommand(t *testing.T) {
	e := &Error{Args: []string{"--git-dir=/r/.git", "-c", "remote.origin.fetch=+a:b", "-c", "x=y", "push", "-c", "origin"}}
	if got := e.Command(); got != "push -c origin" {
		t.Fatalf("Command() = %q", got)
	}
}
