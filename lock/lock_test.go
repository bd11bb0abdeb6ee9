package lock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHelperHold is run as a separate process by the tests below: it takes
// the exclusive lock, says so on stdout, and holds it until stdin closes.
func TestHelperHold(t *testing.T) {
	p := os.Getenv("MEMSYNC_LOCK_HOLD")
	if p == "" {
		t.Skip("helper process only")
	}
	l, err := Exclusive(context.Background(), p, time.Second)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("held")
	buf := make([]byte, 1)
	_, _ = os.Stdin.Read(buf)
	_ = l.Release()
	os.Exit(0)
}

func holdInOtherProcess(t *testing.T, path string) (pid int, release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHold$")
	cmd.Env = append(os.Environ(), "MEMSYNC_LOCK_HOLD="+path)
	return startHolder(t, cmd)
}

// startHolder starts cmd, a process that prints "held" once it holds a lock
// and keeps it until its standard input closes (release).
func startHolder(t *testing.T, cmd *exec.Cmd) (pid int, release func()) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "held" {
		t.Fatalf("%s did not take the lock: %q %v", cmd.Path, buf, err)
	}
	return cmd.Process.Pid, func() { _ = stdin.Close(); _ = cmd.Wait() }
}

func TestTimeoutNamesFileAndHolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "memories.md.lock")
	pid, release := holdInOtherProcess(t, p)
	defer release()

	_, err := Exclusive(context.Background(), p, 150*time.Millisecond)
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, ErrTimeout) {
		t.Fatalf("want TimeoutError, got %v", err)
	}
	if te.PID != pid {
		t.Fatalf("holder pid %d, want %d", te.PID, pid)
	}
	msg := err.Error()
	if !strings.Contains(msg, p) || !strings.Contains(msg, fmt.Sprint(pid)) {
		t.Fatalf("message %q lacks lock path or pid", msg)
	}
	if _, err := Shared(context.Background(), p, 50*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("shared lock while a writer holds it: %v", err)
	}
}

// TestReleaseLetsNextIn: while another process holds the lock we cannot
// take it; once it lets go we can, and then a third process cannot, until
// we let go too.
func TestReleaseLetsNextIn(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	_, release := holdInOtherProcess(t, p)
	if l, err := Exclusive(context.Background(), p, 100*time.Millisecond); !errors.Is(err, ErrTimeout) {
		_ = l.Release()
		release()
		t.Fatalf("took the lock while another process held it: %v", err)
	}
	release()
	l, err := Exclusive(context.Background(), p, 5*time.Second)
	if err != nil {
		t.Fatalf("the lock was released, yet: %v", err)
	}
	other := func() (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHold$")
		cmd.Env = append(os.Environ(), "MEMSYNC_LOCK_HOLD="+p)
		out, err := cmd.Output() // stdin is empty: a helper that gets the lock lets go at once
		return string(out), err
	}
	if out, err := other(); err == nil || !strings.Contains(out, "timed out") {
		t.Fatalf("another process took the lock we hold: %q %v", out, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if out, err := other(); err != nil || !strings.HasPrefix(out, "held") {
		t.Fatalf("another process could not take the released lock: %q %v", out, err)
	}
}

func TestSharedLocksCoexist(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	a, err := Shared(context.Background(), p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Release() }()
	b, err := Shared(context.Background(), p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = b.Release()
	if _, err := Exclusive(context.Background(), p, 50*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("exclusive while a reader holds the lock: %v", err)
	}
}

// TestTimeoutNamesOnlyALiveHolder: the lock file still records the pid of a
// memsync that finished, while flock(1) holds the lock: the message must not
// name the finished process.
func TestTimeoutNamesOnlyALiveHolder(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) not installed")
	}
	p := filepath.Join(t.TempDir(), "memories.md.lock")
	gone, release := holdInOtherProcess(t, p)
	release() // the helper recorded its pid and exited
	if b, _ := os.ReadFile(p); !strings.Contains(string(b), fmt.Sprint(gone)) {
		t.Fatalf("lock file %q does not record the helper's pid %d", b, gone)
	}
	cmd := exec.Command("flock", p, "sh", "-c", "echo held; cat")
	_, releaseFlock := startHolder(t, cmd)
	defer releaseFlock()

	_, err := Exclusive(context.Background(), p, 100*time.Millisecond)
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("want TimeoutError, got %v", err)
	}
	if te.PID == gone || strings.Contains(err.Error(), fmt.Sprintf("pid %d", gone)) {
		t.Fatalf("names the finished process %d: %v", gone, err)
	}
	if te.PID != 0 && te.PID != cmd.Process.Pid {
		t.Fatalf("names pid %d, which is not flock's %d: %v", te.PID, cmd.Process.Pid, err)
	}
	if _, err := os.Stat("/proc/locks"); err == nil && te.PID != cmd.Process.Pid {
		t.Fatalf("with /proc/locks the holder is known to be flock (pid %d): %v", cmd.Process.Pid, err)
	}
	if te.PID == 0 && !strings.Contains(err.Error(), "held by another process") {
		t.Fatalf("message %q", err)
	}
}

// TestLockNeverFollowsOrTruncates: a lock path that is a symlink is refused
// (the caller resolves it first), nothing is created at its target, and a
// lock file's content past the pid is left as it was.
func TestLockNeverFollowsOrTruncates(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	p := filepath.Join(dir, "memories.md.lock")
	if err := os.Symlink(victim, p); err != nil {
		t.Fatal(err)
	}
	if _, err := Exclusive(context.Background(), p, 50*time.Millisecond); err == nil || errors.Is(err, ErrTimeout) {
		t.Fatalf("exclusive through a symlink: %v", err)
	}
	if _, err := Shared(context.Background(), p, 50*time.Millisecond); err == nil || errors.Is(err, ErrTimeout) {
		t.Fatalf("shared through a symlink: %v", err)
	}
	if _, err := os.Lstat(victim); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the symlink's target was created: %v", err)
	}

	_ = os.Remove(p)
	long := "1\nwritten by another tool, longer than any pid\n"
	if err := os.WriteFile(p, []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Exclusive(context.Background(), p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Release()
	b, _ := os.ReadFile(p)
	if len(b) != len(long) || !strings.HasSuffix(string(b), "longer than any pid\n") {
		t.Fatalf("lock file truncated or grown: %q", b)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if strings.TrimSpace(first) != fmt.Sprint(os.Getpid()) {
		t.Fatalf("first line %q, want this pid %d", first, os.Getpid())
	}
}

// A done context ends the wait at once, with the context's error rather
// than a timeout.
func TestContextEndsWait(t *testing.T) {
	p := filepath.Join(t.TempDir(), "memories.md.lock")
	_, release := holdInOtherProcess(t, p)
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := Exclusive(ctx, p, time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimeout) {
		t.Fatalf("want the context's deadline, got %v", err)
	}
	if _, err := Shared(ctx, p, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shared with a done context: %v", err)
	}
}
