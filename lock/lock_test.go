package lock

import (
	"errors"
	"fmt"
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
	l, err := Exclusive(p, time.Second)
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
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || !strings.HasPrefix(string(buf), "held") {
		t.Fatalf("helper did not take the lock: %q %v", buf, err)
	}
	return cmd.Process.Pid, func() { _ = stdin.Close(); _ = cmd.Wait() }
}

func TestTimeoutNamesFileAndHolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "memories.md.lock")
	pid, release := holdInOtherProcess(t, p)
	defer release()

	_, err := Exclusive(p, 150*time.Millisecond)
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
	if _, err := Shared(p, 50*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("shared lock while a writer holds it: %v", err)
	}
}

// TestReleaseLetsNextIn: while another process holds the lock we cannot
// take it; once it lets go we can, and then a third process cannot, until
// we let go too.
func TestReleaseLetsNextIn(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	_, release := holdInOtherProcess(t, p)
	if l, err := Exclusive(p, 100*time.Millisecond); !errors.Is(err, ErrTimeout) {
		_ = l.Release()
		release()
		t.Fatalf("took the lock while another process held it: %v", err)
	}
	release()
	l, err := Exclusive(p, 5*time.Second)
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
	a, err := Shared(p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Release() }()
	b, err := Shared(p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = b.Release()
	if _, err := Exclusive(p, 50*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("exclusive while a reader holds the lock: %v", err)
	}
}
