package lock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHelperWait is run as a separate process by the tests below: it waits
// for the exclusive lock, appends its MEMSYNC_LOCK_ID to MEMSYNC_LOCK_LOG
// while it holds it, and lets go.
func TestHelperWait(t *testing.T) {
	p := os.Getenv("MEMSYNC_LOCK_WAIT")
	if p == "" {
		t.Skip("helper process only")
	}
	l, err := Exclusive(context.Background(), p, time.Minute)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	f, err := os.OpenFile(os.Getenv("MEMSYNC_LOCK_LOG"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = fmt.Fprintln(f, os.Getenv("MEMSYNC_LOCK_ID"))
		_ = f.Close()
	}
	_ = l.Release()
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// locksOn lists the pids that hold a lock on the file at path and those
// queued for one, as /proc/locks shows them (the test is skipped where there
// is none).
func locksOn(t testing.TB, path string) (holders, waiters []int) {
	t.Helper()
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Skip("needs /proc/locks")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ino := strconv.FormatUint(fi.Sys().(*syscall.Stat_t).Ino, 10)
	for line := range strings.Lines(string(data)) {
		// "1: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF", a waiter with
		// "->" after the number.
		f := strings.Fields(line)
		waiting := len(f) > 1 && f[1] == "->"
		if waiting {
			f = slices.Delete(f, 1, 2)
		}
		if len(f) < 6 || !strings.HasSuffix(f[5], ":"+ino) {
			continue
		}
		pid, _ := strconv.Atoi(f[4])
		if waiting {
			waiters = append(waiters, pid)
		} else {
			holders = append(holders, pid)
		}
	}
	return holders, waiters
}

// waitFor polls cond until it holds, failing the test if it does not within
// 20 s: it waits for a state, it does not time one.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not so after 20 s: %s", what)
		}
	}
}

// queued says whether pid waits for a lock on path in the kernel.
func queued(t testing.TB, path string, pid int) bool {
	_, waiters := locksOn(t, path)
	return slices.Contains(waiters, pid)
}

// settle waits until every wait of this process has ended: none is queued
// for a lock and none holds one or a file open (a wait a caller gave up
// lets the lock go and closes its file once it has it; earlier tests leave
// some behind).
func settle(t testing.TB) {
	t.Helper()
	waitFor(t, "every wait of this process ended", func() bool {
		buf := make([]byte, 1<<20)
		return !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "lock.(*wait).block(")
	})
}

// openFiles counts this process's open file descriptors.
func openFiles(t testing.TB) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("needs /proc/self/fd")
	}
	return len(fds)
}

// TestWaitersWakeInTurn: writers that queue for a held lock get it in the
// order they came once it is let go. Retrying on a timer gave it to
// whichever retried first after the release.
func TestWaitersWakeInTurn(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "memories.md.lock")
	log := filepath.Join(dir, "order")
	_, release := holdInOtherProcess(t, p)
	const n = 6
	var cmds []*exec.Cmd
	for i := range n {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWait$")
		cmd.Env = append(os.Environ(), "MEMSYNC_LOCK_WAIT="+p, "MEMSYNC_LOCK_LOG="+log, "MEMSYNC_LOCK_ID="+strconv.Itoa(i))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		waitFor(t, fmt.Sprintf("waiter %d queued for the lock", i), func() bool { return queued(t, p, cmd.Process.Pid) })
	}
	release()
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := range n {
		fmt.Fprintln(&want, i)
	}
	if string(got) != want.String() {
		t.Fatalf("waiters had the lock in the order\n%s\nwant the order they came\n%s", got, want.String())
	}
}

// TestTimeoutWhileQueued: a wait that times out while queued in flock(2)
// says which file and which process; once the holder lets go, the wait it
// left behind takes the lock and lets it go at once, closing its file, so
// another process can take the lock without waiting.
func TestTimeoutWhileQueued(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) not installed")
	}
	p := filepath.Join(t.TempDir(), "memories.md.lock")
	settle(t)
	before := openFiles(t)
	pid, release := holdInOtherProcess(t, p)
	_, err := Exclusive(context.Background(), p, 200*time.Millisecond)
	var te *TimeoutError
	if !errors.As(err, &te) || te.PID != pid || te.Path != p || !strings.Contains(err.Error(), p) {
		release()
		t.Fatalf("want a TimeoutError naming %s and pid %d, got %v", p, pid, err)
	}
	waitFor(t, "the wait that timed out queued for the lock", func() bool { return queued(t, p, os.Getpid()) })
	release()
	settle(t)
	if holders, waiters := locksOn(t, p); len(holders)+len(waiters) > 0 || openFiles(t) != before {
		t.Fatalf("after the wait ended: holders %v, waiters %v, %d files open (%d before)", holders, waiters, openFiles(t), before)
	}
	if out, err := exec.Command("flock", "-n", p, "true").CombinedOutput(); err != nil {
		t.Fatalf("flock -n on the released lock: %v\n%s", err, out)
	}
}

// TestCancelWhileQueued: cancelling the context of a wait queued in
// flock(2) ends it at once with the context's error, not a timeout.
func TestCancelWhileQueued(t *testing.T) {
	p := filepath.Join(t.TempDir(), "memories.md.lock")
	_, release := holdInOtherProcess(t, p)
	t.Cleanup(func() { release(); settle(t) })
	for _, shared := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			take := Exclusive
			if shared {
				take = Shared
			}
			_, err := take(ctx, p, time.Minute)
			errc <- err
		}()
		waitFor(t, "the wait queued for the lock", func() bool { return queued(t, p, os.Getpid()) })
		cancel()
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
				t.Fatalf("shared %v: want the context's error, got %v", shared, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("shared %v: still waiting 20 s after the cancel", shared)
		}
	}
}

// TestTimeoutsLeakNothing: a thousand waits that time out against a held
// lock leave at most one queued wait per lock mode (the next caller takes it
// over) and, once the lock is let go, no open file and no lock at all.
func TestTimeoutsLeakNothing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "memories.md.lock")
	settle(t)
	before := openFiles(t)
	_, release := holdInOtherProcess(t, p)
	held := openFiles(t) // and the pipes to the holder
	for i := range 1000 {
		take := Exclusive
		if i%2 == 1 {
			take = Shared
		}
		if _, err := take(context.Background(), p, time.Millisecond); !errors.Is(err, ErrTimeout) {
			release()
			t.Fatalf("wait %d: want a timeout, got %v", i, err)
		}
		if n := openFiles(t); n > held+2 {
			release()
			t.Fatalf("after %d timed-out waits %d files are open, %d before: the waits pile up", i+1, n, held)
		}
	}
	release()
	settle(t)
	if holders, waiters := locksOn(t, p); len(holders)+len(waiters) > 0 || openFiles(t) != before {
		t.Fatalf("after the waits ended: holders %v, waiters %v, %d files open (%d before)", holders, waiters, openFiles(t), before)
	}
}

// TestCallerTakesOverAGivenUpWait: after a wait timed out, the next caller
// for the same lock takes its place in the queue rather than queueing a
// second time, and has the lock once it is let go.
func TestCallerTakesOverAGivenUpWait(t *testing.T) {
	p := filepath.Join(t.TempDir(), "memories.md.lock")
	settle(t)
	before := openFiles(t)
	_, release := holdInOtherProcess(t, p)
	defer release()
	held := openFiles(t) // and the holder's pipes and pidfd
	if _, err := Exclusive(context.Background(), p, 50*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("want a timeout, got %v", err)
	}
	got := make(chan *Lock, 1)
	go func() {
		l, err := Exclusive(context.Background(), p, time.Minute)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	time.Sleep(20 * time.Millisecond) // not a timing: whenever it runs, it must not queue twice
	if _, waiters := locksOn(t, p); len(waiters) != 1 || openFiles(t) != held+1 {
		t.Fatalf("%d waits queued, %d files open (%d before): want the one wait taken over", len(waiters), openFiles(t), held)
	}
	release()
	l := <-got
	if holders, _ := locksOn(t, p); !slices.Equal(holders, []int{os.Getpid()}) {
		t.Fatalf("holders %v, want this process", holders)
	}
	_ = l.Release()
	if n := openFiles(t); n != before {
		t.Fatalf("%d files open after the release, %d before", n, before)
	}
}

// TestHelperRelay is run as a separate process by BenchmarkHandOff: for each
// line on stdin it says "waiting", waits for the exclusive lock, notes the
// time it had it, lets go and prints that time (Unix nanoseconds).
func TestHelperRelay(t *testing.T) {
	p := os.Getenv("MEMSYNC_LOCK_RELAY")
	if p == "" {
		t.Skip("helper process only")
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		fmt.Println("waiting")
		l, err := Exclusive(context.Background(), p, time.Minute)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		had := time.Now().UnixNano()
		_ = l.Release()
		fmt.Println(had)
	}
	os.Exit(0)
}

// BenchmarkHandOff: how long a writer in another process, waiting for the
// lock, takes to have it once this process lets it go (the time from just
// before Release to the moment the other has it, read from one system
// clock). Reports the median and 99th percentile in microseconds.
func BenchmarkHandOff(b *testing.B) {
	p := filepath.Join(b.TempDir(), "memories.md.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRelay$")
	cmd.Env = append(os.Environ(), "MEMSYNC_LOCK_RELAY="+p)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	out := bufio.NewScanner(stdout)
	line := func() string {
		if !out.Scan() {
			b.Fatalf("relay helper ended: %v", out.Err())
		}
		return out.Text()
	}
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		l, err := Exclusive(context.Background(), p, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := fmt.Fprintln(stdin); err != nil {
			b.Fatal(err)
		}
		if s := line(); s != "waiting" {
			b.Fatalf("relay helper: %q", s)
		}
		// Until the helper is queued in the kernel; a waiter that retries
		// on a timer never is, so at most 10 ms.
		for end := time.Now().Add(10 * time.Millisecond); time.Now().Before(end) && !queued(b, p, cmd.Process.Pid); {
			time.Sleep(50 * time.Microsecond)
		}
		released := time.Now().UnixNano()
		_ = l.Release()
		had, err := strconv.ParseInt(line(), 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Duration(had-released))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "µs-p50")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "µs-p99")
}

// TestHelperWriter is run as a separate process by BenchmarkContended: it
// takes the exclusive lock MEMSYNC_LOCK_WRITES times, each time appending a
// line to MEMSYNC_LOCK_LOG under it and syncing it, and prints how long each
// wait took (ns).
func TestHelperWriter(t *testing.T) {
	p := os.Getenv("MEMSYNC_LOCK_WRITER")
	if p == "" {
		t.Skip("helper process only")
	}
	n, _ := strconv.Atoi(os.Getenv("MEMSYNC_LOCK_WRITES"))
	out := bufio.NewWriter(os.Stdout)
	for i := range n {
		start := time.Now()
		l, err := Exclusive(context.Background(), p, time.Minute)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		waited := time.Since(start)
		f, err := os.OpenFile(os.Getenv("MEMSYNC_LOCK_LOG"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			if _, err = fmt.Fprintln(f, os.Getpid(), i); err == nil {
				err = f.Sync()
			}
			_ = f.Close()
		}
		_ = l.Release()
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Fprintln(out, waited.Nanoseconds())
	}
	_ = out.Flush()
	os.Exit(0)
}

// BenchmarkContended8 and 16: that many processes at once, each taking the
// writers' lock 100 times to append a line, as memsync writers do without
// the rest of their work. Reports lock hand-overs per second and the median
// and 99th percentile wait for the lock (µs); every line must arrive.
func BenchmarkContended8(b *testing.B)  { benchContended(b, 8, 100) }
func BenchmarkContended16(b *testing.B) { benchContended(b, 16, 100) }

func benchContended(b *testing.B, workers, writes int) {
	var waits []time.Duration
	var wall time.Duration
	for range b.N {
		dir := b.TempDir()
		p, log := filepath.Join(dir, "memories.md.lock"), filepath.Join(dir, "log")
		cmds := make([]*exec.Cmd, workers)
		outs := make([]*strings.Builder, workers)
		start := time.Now()
		for i := range cmds {
			cmds[i] = exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
			cmds[i].Env = append(os.Environ(), "MEMSYNC_LOCK_WRITER="+p, "MEMSYNC_LOCK_LOG="+log, "MEMSYNC_LOCK_WRITES="+strconv.Itoa(writes))
			outs[i] = new(strings.Builder)
			cmds[i].Stdout, cmds[i].Stderr = outs[i], os.Stderr
			if err := cmds[i].Start(); err != nil {
				b.Fatal(err)
			}
		}
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				b.Fatalf("writer %d: %v\n%s", i, err, outs[i])
			}
		}
		wall += time.Since(start)
		for _, out := range outs {
			for line := range strings.Lines(out.String()) {
				ns, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
				if err != nil {
					b.Fatalf("writer said %q", line)
				}
				waits = append(waits, time.Duration(ns))
			}
		}
		data, err := os.ReadFile(log)
		if err != nil {
			b.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n != workers*writes {
			b.Fatalf("%d lines, want %d", n, workers*writes)
		}
	}
	slices.Sort(waits)
	b.ReportMetric(float64(len(waits))/wall.Seconds(), "locks/s")
	b.ReportMetric(float64(waits[len(waits)/2].Microseconds()), "µs-p50-wait")
	b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds()), "µs-p99-wait")
}
