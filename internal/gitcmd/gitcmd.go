// Package gitcmd runs the user's git: the one place memsync spawns it (every
// git process of the module starts from Command), with the variables git
// sets for hooks removed so the git we start looks at the repository we
// name, not the hook's, and with a fixed environment for what memsync reads
// back: LC_ALL=C (git's messages in English, which memsync matches) and
// GIT_TERMINAL_PROMPT=0 (a credential prompt never hangs a hook, an MCP call
// or a library caller: git fails instead).
package gitcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// localVars are the repository-local variables git exports to hooks
// (git rev-parse --local-env-vars).
var localVars = []string{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
	"GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
	"GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
	"GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
}

// fixed are the variables every git memsync starts runs with.
var fixed = []string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0"}

// Env is the process environment without git's repository-local variables,
// with the fixed variables (LC_ALL=C, GIT_TERMINAL_PROMPT=0) in place of the
// caller's values.
func Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !isLocal(name) && name != "LC_ALL" && name != "GIT_TERMINAL_PROMPT" {
			env = append(env, kv)
		}
	}
	return append(env, fixed...)
}

func isLocal(name string) bool {
	if strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
		return true
	}
	for _, v := range localVars {
		if name == v {
			return true
		}
	}
	return false
}

// Command returns git with args, to run in dir, with the scrubbed environment.
func Command(dir string, args ...string) *exec.Cmd {
	return CommandContext(context.Background(), dir, args...)
}

// CommandContext is Command for a git that is ended when ctx is done before
// it exits. git runs in a session, and so a process group, of its own, and
// the end is for the whole group: SIGTERM (git removes its lock files),
// SIGKILL killDelay later for what is still running, so nothing git started
// (ssh, a hook, a credential helper) is left behind. A terminal's ^C goes to
// memsync alone, which cancels ctx; and as with GIT_TERMINAL_PROMPT=0, no
// process git starts has a terminal to prompt on (ssh asking for a key's
// passphrase fails at once instead of waiting: use an ssh agent).
func CommandContext(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = dir, Env()
	ownGroup(cmd)
	// Wait returns even when a process of the group holds git's pipes.
	cmd.WaitDelay = killDelay + time.Second
	return cmd
}

// killDelay is how long a cancelled git's process group has between
// SIGTERM and SIGKILL.
const killDelay = 2 * time.Second

// Output runs git in dir and returns its stdout; when git fails the error
// is an *Error holding git's stderr.
func Output(dir string, args ...string) (string, error) {
	return OutputContext(context.Background(), dir, args...)
}

// OutputContext is Output for a git that is killed when ctx is done before
// it exits (the error then wraps ctx's error).
func OutputContext(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := CommandContext(ctx, dir, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	switch {
	case err != nil && ctx.Err() != nil:
		return string(out), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), ctx.Err(), strings.TrimSpace(stderr.String()))
	case err != nil:
		return string(out), Wrap(args, err, stderr.String())
	}
	return string(out), nil
}

// Error is a git that ran and failed: its arguments, its exit status and
// what it wrote on stderr, when the caller kept no stream for it. git's exit
// status is git's: the CLI exits with its own codes.
type Error struct {
	Args   []string // git's arguments
	Code   int      // git's exit status; -1 when a signal ended it
	Stderr string   // "" when git's stderr went to the caller's stream
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("git %s failed (exit status %d)", e.Command(), e.Code)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

// Command is the git command that failed as a person would type it, less
// the options memsync puts before git's command (--git-dir=…, -c NAME=VALUE).
func (e *Error) Command() string {
	args := e.Args
	for {
		switch {
		case len(args) > 1 && strings.HasPrefix(args[0], "--git-dir="):
			args = args[1:]
		case len(args) > 2 && args[0] == "-c":
			args = args[2:]
		default:
			return strings.Join(args, " ")
		}
	}
}

// Wrap returns err, the error of running git with args, as an *Error when
// git ran and exited non-zero (stderr: what it wrote there, "" when that
// went elsewhere); any other error (nil too) is returned as it is.
func Wrap(args []string, err error, stderr string) error {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return err
	}
	return &Error{Args: args, Code: ee.ExitCode(), Stderr: stderr}
}
