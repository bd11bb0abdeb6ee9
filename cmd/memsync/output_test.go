package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/memfile"
)

// recorder is a stream's destination that keeps each write apart.
type recorder struct {
	name   string
	writes *[]string
}

func (r recorder) Write(p []byte) (int, error) {
	*r.writes = append(*r.writes, r.name+":"+string(p))
	return len(p), nil
}

// TestOutputOrderAndWrites: lines written to stdout and stderr in turn
// reach their files in the order written, runs of one stream in one write,
// and what is left goes out at flush.
func TestOutputOrderAndWrites(t *testing.T) {
	var writes []string
	o := newOutput(recorder{"out", &writes}, recorder{"err", &writes})
	for _, w := range []struct {
		s    *stream
		text string
	}{{&o.stderr, "warning 1\n"}, {&o.stderr, "warning 2\n"}, {&o.stdout, "result 1\n"}, {&o.stdout, "result 2\n"}, {&o.stderr, "error\n"}} {
		if _, err := w.s.Write([]byte(w.text)); err != nil {
			t.Fatal(err)
		}
	}
	o.flush()
	want := []string{"err:warning 1\nwarning 2\n", "out:result 1\nresult 2\n", "err:error\n"}
	if fmt.Sprint(writes) != fmt.Sprint(want) {
		t.Fatalf("writes %q, want %q", writes, want)
	}
}

// TestOutputWrittenWhileWaiting: what a command printed reaches the file
// within outputDelay though the command has not finished (a lock wait, the
// network), with no flush.
func TestOutputWrittenWhileWaiting(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close(); _ = w.Close() }()
	o := newOutput(w, w)
	start := time.Now()
	if _, err := o.stderr.Write([]byte("memsync: warning: waiting\n")); err != nil {
		t.Fatal(err)
	}
	if err := r.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Skip("pipe without deadlines:", err)
	}
	buf := make([]byte, 100)
	n, err := r.Read(buf)
	if err != nil {
		t.Fatalf("nothing written while the command waits: %v", err)
	}
	if got := string(buf[:n]); got != "memsync: warning: waiting\n" || time.Since(start) < outputDelay/2 {
		t.Fatalf("read %q after %v", got, time.Since(start))
	}
}

// TestListFewWrites: `memsync list` of 1000 entries writes its 1000 lines in
// a handful of writes, not one per line (run, in this process, with stdout
// a recorder).
func TestListFewWrites(t *testing.T) {
	env := testGitEnv(t)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("MEMSYNC_GLOBAL_DIR", t.TempDir())
	// The test process keeps its garbage collector: a GOGC of the user's
	// stops run from tuning it for a one-shot command (tuneOneShot).
	t.Setenv("GOGC", "100")
	repo, _ := repoWithMemory(t, env, 330<<10)
	for _, args := range [][]string{{"list"}, {"list", "--json"}} {
		var writes []string
		var stderr bytes.Buffer
		if code := run(append([]string{"memsync", "-C", repo}, args...), nil, recorder{"out", &writes}, &stderr); code != 0 {
			t.Fatalf("memsync %v: exit %d\n%s", args, code, stderr.String())
		}
		size := 0
		for _, w := range writes {
			size += len(w) - len("out:")
		}
		if size < 50<<10 || len(writes) > size/outputMax+2 {
			t.Fatalf("memsync %v: %d bytes in %d writes", args, size, len(writes))
		}
	}
}

// TestWarningsBeforeResult: with stdout and stderr one pipe (a terminal
// showing both), the warnings about a damaged memory come before the list,
// as memsync printed them, and the list is whole.
func TestWarningsBeforeResult(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	var b strings.Builder
	b.WriteString(memfile.Header + "\n")
	for i := range 300 {
		fmt.Fprintf(&b, "\n## Pattern: lesson %d\n- Tags: a\n- Date: 2026-01-01\n- Content: learned %d\n", i, i)
	}
	b.WriteString("\n<<<<<<< HEAD\n## Pattern: ours\n- Content: y\n=======\n## Pattern: theirs\n- Content: z\n>>>>>>> b\n")
	if err := os.MkdirAll(filepath.Join(repo, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".agent", "memories.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(memsyncBinary(t), "list")
	cmd.Dir, cmd.Env = repo, env
	var both bytes.Buffer
	cmd.Stdout, cmd.Stderr = &both, &both // one pipe, as a terminal
	if err := cmd.Run(); err != nil {
		t.Fatalf("memsync list: %v\n%s", err, both.String())
	}
	lines := strings.Split(strings.TrimSuffix(both.String(), "\n"), "\n")
	warnings := 0
	for warnings < len(lines) && strings.HasPrefix(lines[warnings], "memsync: warning: ") {
		warnings++
	}
	if warnings < 3 || len(lines) != warnings+302 {
		t.Fatalf("%d warnings first, then %d lines, want ≥ 3 then 302:\n%s", warnings, len(lines)-warnings, both.String())
	}
	for i, l := range lines[warnings:] {
		if !strings.HasPrefix(strings.TrimLeft(l, " "), fmt.Sprint(i+1)+"  ") {
			t.Fatalf("line %d of the list: %q", i+1, l)
		}
	}
}
