//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEditorLeavesNoFile: an editor that replaces the file it was given by
// a link to /dev/zero, by a pipe, or removes it: edit ends, bounded, with
// an error that says what the editor left and that nothing was changed
// (the link to /dev/zero used to be read whole: out of memory, a fatal
// error). An editor that writes more than an entry can hold is refused
// the same way.
func TestEditorLeavesNoFile(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	id := strings.TrimSpace(memsyncIn(t, env, repo, "add", "edit me, carefully"))
	for editor, want := range map[string]string{
		`ln -sf /dev/zero`:               "is not a regular file",
		`sh -c 'rm "$0" && mkfifo "$0"'`: "is not a regular file",
		`rm`:                             "the editor removed",
		`sh -c 'head -c 1000000 /dev/zero | tr "\0" x > "$0"'`: "larger than",
	} {
		out, code := runBounded(t, with(env, "EDITOR="+editor, "VISUAL="), repo, "edit", id)
		if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, "nothing was changed") {
			t.Errorf("EDITOR=%s: exit %d, want 1 and %q\n%.1000s", editor, code, want, out)
		}
	}
	if out := memsyncIn(t, env, repo, "show", id); !strings.Contains(out, "edit me, carefully") {
		t.Errorf("the entry after:\n%s", out)
	}
}

// TestEditorKeepsCtrlC: a ^C while the editor runs (SIGINT to the
// terminal's process group: memsync, the editor and whatever it runs, as
// in vim's :!make) is the editor's: the edit saved after it is kept. It
// used to cancel memsync, which then dropped the edit as interrupted (exit
// 130), and the shell memsync ran the editor through died of it.
func TestEditorKeepsCtrlC(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	id := strings.TrimSpace(memsyncIn(t, env, repo, "add", "the pool size is ten"))
	editor := filepath.Join(t.TempDir(), "editor")
	script := "#!/bin/sh\ntrap '' INT\nkill -INT 0\nsleep 0.3\nsed -i 's/is ten/is twenty/' \"$1\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, memsyncBinary(t), "edit", id)
	cmd.Dir, cmd.Env = repo, with(env, "EDITOR="+editor, "VISUAL=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group, as a terminal's job
	out, err := cmd.CombinedOutput()
	if code := exitStatus(err); code != 0 {
		t.Fatalf("edit with a ^C in the editor: exit %d\n%s", code, out)
	}
	if got := memsyncIn(t, env, repo, "show", id); !strings.Contains(got, "the pool size is twenty") {
		t.Errorf("the edit was not kept:\n%s", got)
	}
}

// TestEditorEndsOnSigterm: SIGTERM while the editor runs (a supervisor, a
// timeout) ends the editor and memsync exits 143 at once, the entry
// unchanged; memsync used to wait for the editor to end, however long.
func TestEditorEndsOnSigterm(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	id := strings.TrimSpace(memsyncIn(t, env, repo, "add", "the pool size is ten"))
	dir := t.TempDir()
	editor, pidFile := filepath.Join(dir, "editor"), filepath.Join(dir, "pid")
	script := "#!/bin/sh\necho $$ > " + pidFile + "\nexec sleep 60\n"
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(memsyncBinary(t), "edit", id)
	cmd.Dir, cmd.Env = repo, with(env, "EDITOR="+editor, "VISUAL=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var pid int
	for i := 0; i < 500 && pid == 0; i++ {
		time.Sleep(10 * time.Millisecond)
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid == 0 {
		t.Fatal("the editor did not start")
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if code := exitStatus(err); code != 143 {
			t.Errorf("edit after SIGTERM: exit %d, want 143", code)
		}
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("edit waited 5 s for its editor after SIGTERM (then killed: %v)", <-done)
	}
	if alive(pid) {
		t.Errorf("the editor %d still runs", pid)
	}
	if got := memsyncIn(t, env, repo, "show", id); !strings.Contains(got, "the pool size is ten") {
		t.Errorf("the entry after:\n%s", got)
	}
}
