package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// citingMemory is a repository whose memory has one entry with n stale
// citations of lines of big.txt, a file of a million lines (13 MB): what
// a memory from a clone may hold.
func citingMemory(t *testing.T, env []string, n int) string {
	t.Helper()
	repo := newRepo(t, env)
	memsyncIn(t, env, repo, "add", "an entry before the citations")
	var b strings.Builder
	for i := range 1_100_000 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	if err := os.WriteFile(filepath.Join(repo, "big.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cites := make([]string, n)
	for i := range cites {
		cites[i] = fmt.Sprintf("big.txt:%d-%d #0123456789abcdef", i+1, i+1)
	}
	appendCites(t, repo, "many00000001", strings.Join(cites, "; "))
	return repo
}

// appendCites appends an entry with the ID id and the Cites bullet cites
// to repo's memory, as a hand or another tool would.
func appendCites(t *testing.T, repo, id, cites string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(repo, ".agent", "memories.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "\n## many citations\n- ID: %s\n- Content: cites a lot\n- Cites: %s\n", id, cites); err != nil {
		t.Fatal(err)
	}
}

// TestCheckStopsOnSignal: SIGTERM during the check of one entry with many
// citations (of files gone since commits git has to be asked about, one
// by one) ends memsync promptly with 143, as every command does; check
// used to look at the signal only between entries and ran on.
func TestCheckStopsOnSignal(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsyncIn(t, env, repo, "add", "an entry before the citations")
	cites := make([]string, 50000)
	for i := range cites {
		cites[i] = fmt.Sprintf("gone%d.go @%040x #0123456789abcdef", i, i+1)
	}
	appendCites(t, repo, "many00000001", strings.Join(cites, "; "))
	cmd := exec.Command(memsyncBinary(t), "check")
	cmd.Dir, cmd.Env = repo, env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if code := exitStatus(err); code != 143 {
			t.Errorf("check after SIGTERM: exit %d, want 143", code)
		}
	case <-time.After(time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("check ran on for 1 s after SIGTERM (then killed: %v)", <-done)
	}
}

// TestCheckManyCitationsBounded: one entry citing lines of a 13 MB file
// 3,000 times is checked in seconds: the file is read once, and the search
// for moved lines stops at the check's bound of work (the reason says so).
// Each citation used to read the file anew and search all of it: minutes.
func TestCheckManyCitationsBounded(t *testing.T) {
	env := testGitEnv(t)
	repo := citingMemory(t, env, 3000)
	start := time.Now()
	out, code := runBounded(t, env, repo, "check")
	if took := time.Since(start); code != 0 || took > 10*time.Second {
		t.Fatalf("check: exit %d after %v\n%.2000s", code, took, out)
	}
	if !strings.Contains(out, "1 entries, 3000 citations: 0 fresh, 0 moved, 0 renamed, 3000 stale") ||
		!strings.Contains(out, "big.txt line 3000 changed (not looked for elsewhere in the file: this check hashed ") {
		t.Errorf("check:\n%.2000s", out)
	}
}
