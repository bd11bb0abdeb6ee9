package history

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRefsUnder: packed refs and loose refs under a prefix, the loose one
// winning; a ".lock" is no ref yet.
func TestRefsUnder(t *testing.T) {
	h, _ := testRepo(t)
	const a, b, c = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222", "3333333333333333333333333333333333333333"
	common := h.Repo.CommonDir
	write(t, filepath.Join(common, "packed-refs"), "# pack-refs with: peeled fully-peeled sorted\n"+
		a+" refs/memsync/x/one\n"+a+" refs/memsync/x/two\n"+a+" refs/heads/main\n")
	write(t, filepath.Join(common, "refs", "memsync", "x", "two"), b+"\n")
	write(t, filepath.Join(common, "refs", "memsync", "x", "three.lock"), c+"\n")
	refs, err := h.RefsUnder("refs/memsync/x/")
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 2 || refs["refs/memsync/x/one"] != a || refs["refs/memsync/x/two"] != b {
		t.Fatalf("refs: %v", refs)
	}
}

// TestRefsUnderHostile: a loose ref that is a link to a device that never
// ends, or a pipe no one writes, and a packed-refs that is a pipe, are
// errors naming the file, found at once: nothing is read without bound or
// waited on. The reads run in a child process, killed past 1 GB of memory
// or 20 s, so a regression fails the test, not the machine.
func TestRefsUnderHostile(t *testing.T) {
	if os.Getenv("MEMSYNC_REFS_HOSTILE_CHILD") != "" {
		refsUnderHostile(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRefsUnderHostile$", "-test.v")
	cmd.Env = append(os.Environ(), "MEMSYNC_REFS_HOSTILE_CHILD=1")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	for watching := true; watching; {
		select {
		case err = <-done:
			watching = false
		case <-time.After(5 * time.Millisecond):
			if rss := residentKB(cmd.Process.Pid); rss > 1<<20 {
				_ = cmd.Process.Kill()
				t.Fatalf("the child read without bound: %d MB resident", rss>>10)
			}
		}
	}
	if err != nil || !strings.Contains(out.String(), "--- PASS: TestRefsUnderHostile") {
		t.Fatalf("the child: %v\n%s", err, out.String())
	}
}

// residentKB is the resident memory of process pid in KB (VmRSS), 0 when
// it cannot be read.
func residentKB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

func refsUnderHostile(t *testing.T) {
	h, _ := testRepo(t)
	common := h.Repo.CommonDir
	dir := filepath.Join(common, "refs", "memsync", "x")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if _, err := h.RefsUnder("refs/memsync/x/"); err == nil || !strings.Contains(err.Error(), zero) {
		t.Fatalf("a ref linked to /dev/zero: %v", err)
	}
	if err := os.Remove(zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.RefsUnder("refs/memsync/x/"); err == nil || !strings.Contains(err.Error(), fifo) {
		t.Fatalf("a ref that is a pipe: %v", err)
	}
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	packed := filepath.Join(common, "packed-refs")
	if err := syscall.Mkfifo(packed, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.RefsUnder("refs/memsync/x/"); err == nil || !strings.Contains(err.Error(), packed) {
		t.Fatalf("packed-refs that is a pipe: %v", err)
	}
}
