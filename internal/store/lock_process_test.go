package store

import (
	"bufio"
	"fmt"
	"github.com/memsync/memsync/memfile"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/memsync/memsync/lock"
)

// TestMain lets the test binary run as a helper process of
// TestStoreLockAcrossProcesses (MEMFILE_HELPER set), else runs the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("MEMFILE_HELPER"); mode != "" {
		if err := storeHelper(mode, os.Getenv("MEMFILE_HOME")); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// storeHelper is one writer process: "append:N" appends N entries and prints
// their IDs; "rewrite" updates, archives, restores and gcs in turn until its
// stdin closes, and prints how many rewrites it made.
func storeHelper(mode, home string) error {
	s := &Store{Home: home}
	if n, ok := strings.CutPrefix(mode, "append:"); ok {
		count, err := strconv.Atoi(n)
		if err != nil {
			return err
		}
		for i := range count {
			e, err := s.Append(s.NewEntry("pattern", "", fmt.Sprintf("appended by %d, number %d", os.Getpid(), i), nil))
			if err != nil {
				return err
			}
			fmt.Println(e.ID)
		}
		return nil
	}
	stop := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stop) }()
	for n := 0; ; n++ {
		select {
		case <-stop:
			fmt.Println(n)
			return nil
		default:
		}
		var err error
		switch n % 4 {
		case 0:
			err = s.Update(func(f *memfile.File) error {
				if len(f.Entries) > 0 {
					f.Entries[len(f.Entries)/2].Content += " (edited)"
				}
				return nil
			})
		case 1:
			_, err = s.Move(ToArchive, func(f *memfile.File) ([]int, error) {
				if len(f.Entries) == 0 {
					return nil, nil
				}
				return []int{0}, nil
			})
		case 2:
			_, err = s.Move(ToActive, func(f *memfile.File) ([]int, error) {
				if len(f.Entries) == 0 {
					return nil, nil
				}
				return []int{len(f.Entries) - 1}, nil
			})
		case 3:
			_, err = s.GC(Limits{MaxEntries: 8, TTL: -1}, false)
		}
		if err != nil {
			return err
		}
	}
}

// TestStoreLockAcrossProcesses: two processes append while a third rewrites
// the files (update, archive, restore, gc) and an outside tool appends under
// flock(1), as the lock package documents. Every appended entry is in the
// active file or the archive afterwards, exactly once. Without the store's
// lock a rewrite drops the appends made while it ran.
func TestStoreLockAcrossProcesses(t *testing.T) {
	flockBin, err := exec.LookPath("flock")
	if err != nil && runtime.GOOS != "linux" {
		t.Skip("needs flock(1) from util-linux, which this system does not have")
	}
	if err != nil {
		t.Fatal("this test needs flock(1) (util-linux) on PATH")
	}
	s := newStore(t)
	mustAppend(t, s, "the first entry")
	target, err := s.Resolve(s.Path())
	if err != nil {
		t.Fatal(err)
	}

	helper := func(mode string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MEMFILE_HELPER="+mode, "MEMFILE_HOME="+s.Home)
		cmd.Stderr = os.Stderr
		return cmd
	}
	rewriter := helper("rewrite")
	rewriterIn, err := rewriter.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var rewrites strings.Builder
	rewriter.Stdout = &rewrites
	if err := rewriter.Start(); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	want := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 2 {
		wg.Go(func() {
			cmd := helper("append:40")
			out, err := cmd.Output()
			if err != nil {
				errs <- fmt.Errorf("appender: %w", err)
				return
			}
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			mu.Lock()
			defer mu.Unlock()
			for sc.Scan() {
				want[sc.Text()]++
			}
		})
	}
	wg.Go(func() {
		for i := range 20 {
			e := s.NewEntry("fix", "", fmt.Sprintf("from flock(1), number %d", i), nil)
			cmd := exec.Command(flockBin, "-w", "10", lock.PathFor(target), "sh", "-c", `printf '\n%s' "$1" >> "$2"`, "sh", memfile.RenderEntry(&e, memfile.Orch), target)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("flock writer: %w\n%s", err, out)
				return
			}
			mu.Lock()
			want[e.ID]++
			mu.Unlock()
		}
	})
	wg.Wait()
	_ = rewriterIn.Close()
	if err := rewriter.Wait(); err != nil {
		t.Fatalf("rewriter: %v", err)
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rewrote, _ := strconv.Atoi(strings.TrimSpace(rewrites.String()))
	t.Logf("%d rewrites ran alongside the appends", rewrote)
	if len(want) != 100 {
		t.Fatalf("%d distinct appended IDs, want 100", len(want))
	}

	act, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	arc, err := s.LoadArchive()
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Problems)+len(arc.Problems) > 0 {
		t.Fatalf("damaged files: %v %v", act.Problems, arc.Problems)
	}
	got := map[string]int{}
	for _, e := range append(act.Entries, arc.Entries...) {
		got[e.ID]++
	}
	lost := 0
	for id := range want {
		switch got[id] {
		case 1:
		case 0:
			lost++
		default:
			t.Errorf("entry %s is there %d times", id, got[id])
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d appended entries lost (%d rewrites ran)", lost, len(want), rewrote)
	}
}
