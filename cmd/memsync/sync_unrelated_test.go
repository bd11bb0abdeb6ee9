package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSyncRefusesUnrelatedMemory: a clone whose origin is re-pointed at
// another project's remote (its own commits, its own memory) is refused
// by sync: exit 5, an error naming the remote's ref and this clone, a hint
// with --allow-unrelated, and neither memory changes. --allow-unrelated
// merges them. A fresh clone of the other project syncs its memory as ever.
func TestSyncRefusesUnrelatedMemory(t *testing.T) {
	env, root, remote := bareRemote(t)
	mine := filepath.Join(root, "mine")
	gitRun(t, env, root, "clone", "-q", remote, mine)
	own := strings.TrimSpace(memsyncIn(t, env, mine, "add", "a fact of this project"))
	memsyncIn(t, env, mine, "sync")

	other := filepath.Join(root, "other.git")
	gitRun(t, env, root, "init", "-q", "--bare", other)
	theirs := filepath.Join(root, "theirs")
	gitRun(t, env, root, "clone", "-q", other, theirs)
	gitRun(t, env, theirs, "commit", "-q", "--allow-empty", "-m", "another project")
	gitRun(t, env, theirs, "push", "-q", "origin", "HEAD")
	foreign := strings.TrimSpace(memsyncIn(t, env, theirs, "add", "a fact of another project"))
	memsyncIn(t, env, theirs, "sync")
	fresh := filepath.Join(root, "fresh")
	gitRun(t, env, root, "clone", "-q", other, fresh)
	if have := memsyncIn(t, env, fresh, "sync"); !homeIDs(t, env, fresh)[foreign] {
		t.Fatalf("a fresh clone's first sync did not take its remote's memory:\n%s", have)
	}

	gitRun(t, env, mine, "remote", "set-url", "origin", other)
	cmd := exec.Command(memsyncBinary(t), "sync")
	cmd.Dir, cmd.Env = mine, env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 5 {
		t.Fatalf("sync into another project's remote: %v, want exit 5\n%s", err, out)
	}
	for _, want := range []string{"unrelated", "refs/memsync/", "clone ", "--allow-unrelated"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	if have := homeIDs(t, env, mine); have[foreign] || !have[own] {
		t.Fatalf("the refused sync changed this memory: %v", have)
	}
	if have := snapshotIDs(t, env, other); have[own] {
		t.Fatalf("the refused sync pushed this memory into the other project's: %v", have)
	}

	memsyncIn(t, env, mine, "sync", "--allow-unrelated")
	if have := homeIDs(t, env, mine); !have[foreign] || !have[own] {
		t.Fatalf("--allow-unrelated did not merge both memories: %v", have)
	}
}
