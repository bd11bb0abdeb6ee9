package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestOneShotGC: a one-shot command runs with no garbage collection (list
// --json of 1k entries allocates far less than the limit), unless GOGC or
// GOMEMLIMIT is set: then the runtime collects as they say.
func TestOneShotGC(t *testing.T) {
	bin := memsyncBinary(t)
	var env []string
	for _, kv := range testGitEnv(t) {
		if !hasAnyPrefix(kv, "GOGC=", "GOMEMLIMIT=", "GODEBUG=") { // the test's own
			env = append(env, kv)
		}
	}
	env = append(env, "GODEBUG=gctrace=1")
	repo, _ := repoWithMemory(t, env, 412_000)
	gcs := func(extra ...string) int {
		t.Helper()
		cmd := exec.Command(bin, "list", "--json")
		cmd.Dir, cmd.Env = repo, slices.Concat(env, extra)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("memsync list --json %v: %v\n%s", extra, err, stderr.String())
		}
		n := 0
		for line := range strings.Lines(stderr.String()) {
			if strings.HasPrefix(line, "gc ") {
				n++
			}
		}
		return n
	}
	if n := gcs(); n != 0 {
		t.Errorf("list --json of 1k entries: %d garbage collections, want none", n)
	}
	if n := gcs("GOGC=10"); n == 0 {
		t.Errorf("GOGC=10: no garbage collection; the user's GOGC must win")
	}
	if n := gcs("GOMEMLIMIT=2MiB"); n == 0 {
		t.Errorf("GOMEMLIMIT=2MiB: no garbage collection; the user's GOMEMLIMIT must win")
	}
}
