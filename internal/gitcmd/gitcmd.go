// Package gitcmd runs the user's git: the one place memsync spawns it, with
// the variables git sets for hooks removed so the git we start looks at the
// repository we name, not the hook's.
package gitcmd

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// localVars are the repository-local variables git exports to hooks
// (git rev-parse --local-env-vars).
var localVars = []string{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
	"GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
	"GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
	"GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
}

// Env is the process environment without git's repository-local variables.
func Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !isLocal(name) {
			env = append(env, kv)
		}
	}
	return env
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
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, Env()
	return cmd
}

// Output runs git in dir and returns its stdout; on failure the error holds
// git's stderr.
func Output(dir string, args ...string) (string, error) {
	cmd := Command(dir, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
