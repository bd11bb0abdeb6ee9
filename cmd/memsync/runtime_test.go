package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/memfile"
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

// TestOneShotGCHandsBack: a one-shot command that keeps more than the
// limit (a sync of a 5 MB memory holds three versions of it) gets Go's
// defaults after its first collection, instead of collecting over and over
// at the limit (19 collections, twice the time, before).
func TestOneShotGCHandsBack(t *testing.T) {
	env, root, remote := bareRemote(t)
	env = slices.DeleteFunc(env, func(kv string) bool { return hasAnyPrefix(kv, "GOGC=", "GOMEMLIMIT=", "GODEBUG=") })
	env = append(env, "MEMSYNC_MAX_BYTES=67108864", "MCP_MEMORY_MAX_ENTRIES=1000000")
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	gitRun(t, env, root, "clone", "-q", remote, a)
	gitRun(t, env, root, "clone", "-q", remote, b)
	file := filepath.Join(a, ".agent", "memories.md")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, memfile.GenerateFile(5<<20, 3), 0o644); err != nil {
		t.Fatal(err)
	}
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	memsyncIn(t, env, a, "add", "the build cache lives in /var/cache/build")
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "add", "the retry budget is 300 ms")
	cmd := exec.Command(memsyncBinary(t), "sync")
	cmd.Dir, cmd.Env = b, slices.Concat(env, []string{"GODEBUG=gctrace=1"})
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("memsync sync: %v\n%s", err, stderr.String())
	}
	n := 0
	for line := range strings.Lines(stderr.String()) {
		if strings.HasPrefix(line, "gc ") {
			n++
		}
	}
	if n > 8 {
		t.Errorf("a sync of a 5 MB memory made %d garbage collections, want a few: the one-shot limit must give way after the first", n)
	}
}
