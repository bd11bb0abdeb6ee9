package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memsync/memsync/memfile"
)

// The whole-process benchmarks run each command and its baseline in turn,
// round after round, so both see the same machine load, and report medians.

// sideBySide runs the commands in turn, b.N rounds, and reports each one's
// median (ms-NAME) and the ratio of each median to the first one's (x-NAME).
func sideBySide(b *testing.B, names []string, runs []func(int) time.Duration) {
	times := make([][]time.Duration, len(runs))
	b.ResetTimer()
	for i := range b.N {
		for k, run := range runs {
			times[k] = append(times[k], run(i))
		}
	}
	b.StopTimer()
	medians := make([]float64, len(runs))
	for k, ts := range times {
		slices.Sort(ts)
		medians[k] = float64(ts[len(ts)/2]) / float64(time.Millisecond)
		b.ReportMetric(medians[k], "ms-"+names[k])
		if k > 0 {
			b.ReportMetric(medians[k]/medians[0], "x-"+names[k])
		}
	}
}

// runProcess runs a command and returns how long it took.
func runProcess(tb testing.TB, env []string, dir, name string, args ...string) time.Duration {
	tb.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		tb.Fatalf("%s %v: %v\n%s", name, args, err, out.String())
	}
	return d
}

// size30k is the size of a generated memory of 30,000 entries.
const size30k = 12_320_000

// repoWithMemory makes a repository whose memory is about size bytes of
// generated entries, and returns it and its memory file.
func repoWithMemory(tb testing.TB, env []string, size int) (repo, file string) {
	tb.Helper()
	repo = newRepo(tb, env)
	file = filepath.Join(repo, ".agent", "memories.md")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(file, memfile.GenerateFile(size, 1), 0o644); err != nil {
		tb.Fatal(err)
	}
	return repo, file
}

func appendEntry(tb testing.TB, file string, i int) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := fmt.Fprintf(f, "\n## Fix: change %d\n- Tags: bench\n- Date: 2026-11-22\n- Content: learned %d\n", i, i); err != nil {
		tb.Fatal(err)
	}
}
