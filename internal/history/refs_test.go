package history

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
// waited on. The reads run in a child process with 1 GB of address space
// and 20 s, so a regression fails the test, not the machine.
func TestRefsUnderHostile(t *testing.T) {
	if os.Getenv("MEMSYNC_REFS_HOSTILE_CHILD") != "" {
		refsUnderHostile(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRefsUnderHostile$", "-test.v")
	cmd.Env = append(os.Environ(), "MEMSYNC_REFS_HOSTILE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestRefsUnderHostile") {
		t.Fatalf("the child did not pass:\n%s", out)
	}
}

func refsUnderHostile(t *testing.T) {
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: 1 << 30, Max: 1 << 30}); err != nil {
		t.Fatal(err)
	}
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
