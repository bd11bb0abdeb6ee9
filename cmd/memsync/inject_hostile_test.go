package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestInjectPromptBounded: a prompt on standard input that never ends
// (/dev/zero, a loop engine piping the wrong file) is refused once it
// passes 16 MiB (exit 2, saying so), within a memory limit of 1 GiB; it
// used to be read whole, and memsync ran out of memory (fatal error).
func TestInjectPromptBounded(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsyncIn(t, env, repo, "add", "the pool size is ten")
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer zero.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	name, argv := memsyncBinary(t), []string{"inject", "-"}
	if p, err := exec.LookPath("prlimit"); err == nil {
		name, argv = p, append([]string{"--as=1073741824", "--", memsyncBinary(t)}, argv...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Dir, cmd.Env, cmd.Stdin = repo, env, zero
	out, err := cmd.CombinedOutput()
	if code := exitStatus(err); code != exitUsage || !strings.Contains(string(out), "the prompt on standard input is over 16 MiB") {
		t.Fatalf("inject - < /dev/zero: exit %d\n%.1000s", code, out)
	}
}
