package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRalphKeepsCitations: in ralph-orchestrator's file, citations and
// supersede links are tags ralph lists and keeps (its delete of another
// entry rewrites the file), and memsync reads them back; check works there.
func TestRalphKeepsCitations(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := ralphRepo(t, env)
	if err := os.MkdirAll(filepath.Join(repo, "db dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "db dir", "pool,v2.go"), []byte("package db\n\nconst size = 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, env, repo, "add", "db dir")
	gitRun(t, env, repo, "commit", "-qm", "pool")
	first := runRalph(t, repo, "add", "first by ralph", "-t", "fix", "--format", "quiet")
	old := runMemsync(t, env, repo, "add", "-t", "fix", "the pool size is ten")
	cited := runMemsync(t, env, repo, "add", "-t", "fix", "--cite", "db dir/pool,v2.go:3", "--supersedes", old, "the pool size is a constant")

	seen := ralphList(t, repo)
	if len(seen) != 2 {
		t.Fatalf("ralph sees %d entries: %+v", len(seen), seen)
	}
	tags := seen[cited].Tags
	if !slices.ContainsFunc(tags, func(s string) bool { return strings.HasPrefix(s, "cites:db%2520dir/pool%252Cv2.go:3-3 @") }) ||
		!slices.Contains(tags, "supersedes:"+old) {
		t.Fatalf("ralph's tags of the cited entry: %q", tags)
	}

	runRalph(t, repo, "delete", first)
	got := memsyncList(t, env, repo)
	e, ok := got[cited]
	if len(got) != 1 || !ok || len(e.Citations) != 1 || e.Citations[0].Path != "db dir/pool,v2.go" || e.Citations[0].Start != 3 || e.Supersedes != old {
		t.Fatalf("after ralph's delete memsync reads: %+v", got)
	}
	if out := runMemsync(t, env, repo, "check"); !strings.Contains(out, "1 fresh") {
		t.Fatalf("check: %s", out)
	}
	if out := runMemsync(t, env, repo, "show", "--archive", old); !strings.Contains(out, "(superseded by "+cited+")") {
		t.Fatalf("show of the superseded entry: %s", out)
	}
}
