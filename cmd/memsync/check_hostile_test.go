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
	f, err := os.OpenFile(filepath.Join(repo, ".agent", "memories.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "\n## many citations\n- ID: many00000001\n- Content: cites a lot\n- Cites: %s\n", strings.Join(cites, "; ")); err != nil {
		t.Fatal(err)
	}
	return repo
}

// TestCheckStopsOnSignal: SIGTERM during the check of one entry with many
// citations ends memsync promptly with 143, as every command does; check
// used to look at the signal only between entries and ran on for minutes.
func TestCheckStopsOnSignal(t *testing.T) {
	env := testGitEnv(t)
	repo := citingMemory(t, env, 3000)
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
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("check ran on for 5 s after SIGTERM")
	}
}
