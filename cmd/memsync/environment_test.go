package main

import (
	"slices"
	"strings"
	"testing"
)

// TestEnvironmentReadByTheLibrary: the variables memsync.Open reads
// (MEMSYNC_LOCK_TIMEOUT, MEMSYNC_SYNC_TIMEOUT, MEMSYNC_MAX_BYTES, MEMSYNC_ROLE,
// MCP_MEMORY_*) are
// read there only: a bad value is a usage error (exit 2) that names the
// variable, with no advice about configuration files; a flag on the line
// wins over its variable; a bad role, from either, is a usage error before
// anything is opened.
func TestEnvironmentReadByTheLibrary(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	if _, stderr, code := memsyncRun(t, env, repo, "add", "kept"); code != 0 {
		t.Fatalf("add: exit %d: %s", code, stderr)
	}
	for _, kv := range []string{"MEMSYNC_LOCK_TIMEOUT=soon", "MEMSYNC_MAX_BYTES=-3", "MCP_MEMORY_MAX_ENTRIES=many", "MCP_MEMORY_TTL_DAYS=x", "MEMSYNC_SYNC_TIMEOUT=soon"} {
		name, _, _ := strings.Cut(kv, "=")
		_, stderr, code := memsyncRun(t, with(env, kv), repo, "list")
		if code != exitUsage || !strings.Contains(stderr, "environment: "+name) || strings.Contains(stderr, "hint:") {
			t.Errorf("%s: exit %d, stderr %q; want exit %d naming the variable, no hint", kv, code, stderr, exitUsage)
		}
	}
	// The flag wins over its variable: the variable is not read at all.
	bad := with(env, "MEMSYNC_LOCK_TIMEOUT=soon", "MCP_MEMORY_MAX_ENTRIES=many")
	if out, stderr, code := memsyncRun(t, bad, repo, "list", "--lock-timeout", "1s", "--max-entries", "5"); code != 0 || !strings.Contains(out, "kept") {
		t.Errorf("flags over bad variables: exit %d, %q %q", code, out, stderr)
	}
	if _, stderr, code := memsyncRun(t, with(env, "MEMSYNC_SYNC_TIMEOUT=soon"), repo, "sync", "--timeout", "1s"); strings.Contains(stderr, "environment:") {
		t.Errorf("sync --timeout over a bad MEMSYNC_SYNC_TIMEOUT: exit %d, %q", code, stderr)
	}
	// A role the variable names is checked as the flag's is, outside a
	// repository too (before discovery).
	outside := t.TempDir()
	for _, dir := range []string{repo, outside} {
		_, stderr, code := memsyncRun(t, with(env, "MEMSYNC_ROLE=root"), dir, "list")
		if code != exitUsage || !strings.Contains(stderr, `unknown role "root"`) || !strings.Contains(stderr, "hint: see 'memsync --help'") {
			t.Errorf("MEMSYNC_ROLE=root in %s: exit %d, %q", dir, code, stderr)
		}
	}
	if _, stderr, code := memsyncRun(t, with(env, "MEMSYNC_ROLE=worker"), repo, "delete", "1"); code != exitRefused {
		t.Errorf("MEMSYNC_ROLE=worker delete: exit %d, %q", code, stderr)
	}
	if _, stderr, code := memsyncRun(t, with(env, "MEMSYNC_ROLE=worker"), repo, "delete", "1", "--role", "owner"); code != 0 {
		t.Errorf("--role owner over MEMSYNC_ROLE=worker: exit %d, %q", code, stderr)
	}
}

// with is env and kv, in a new slice.
func with(env []string, kv ...string) []string { return append(slices.Clip(env), kv...) }
