package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/memfile"
)

// BenchmarkConcurrentWriters8 and 16: that many writer processes at once,
// each making 100 adds one after another, with the real memsync binary and,
// in turn, with the shell baseline of the same lock protocol, flock(1) +
// printf >> file, each from an empty memory. Reports both sides' throughput
// (adds/s) and each add's p50 and p99 (ms, the whole process), and memsync's
// ratios to the baseline (x-throughput, x-p99). Every add must arrive,
// exactly once. Targets: x-throughput ≥ 0.8, x-p99 ≤ 1.5.
func BenchmarkConcurrentWriters8(b *testing.B)  { benchWriters(b, 8, 100) }
func BenchmarkConcurrentWriters16(b *testing.B) { benchWriters(b, 16, 100) }

func benchWriters(b *testing.B, workers, adds int) {
	if _, err := exec.LookPath("flock"); err != nil {
		b.Skip("flock(1) not installed")
	}
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	names := []string{"flock-printf", "memsync"}
	sides := []func(repo string, i, j int) []string{
		func(repo string, i, j int) []string {
			file := filepath.Join(repo, ".agent", "memories.md")
			return []string{"flock", "-w", "10", file + ".lock", "sh", "-c",
				fmt.Sprintf(`printf '\n## Pattern: worker %d\n- Tags: w%d\n- Date: 2026-11-22\n- Content: worker %d learned thing %d\n' >> %s`, i, i, i, j, file)}
		},
		func(_ string, i, j int) []string {
			return []string{bin, "add", fmt.Sprintf("worker %d learned thing %d", i, j), "-t", "pattern", "--tags", fmt.Sprintf("w%d", i)}
		},
	}
	walls := make([]time.Duration, len(sides))
	each := make([][]time.Duration, len(sides))
	b.ResetTimer()
	for range b.N {
		for k, side := range sides {
			b.StopTimer()
			repo := newRepo(b, env)
			if err := os.MkdirAll(filepath.Join(repo, ".agent"), 0o755); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			wall, times := writeAtOnce(b, env, repo, workers, adds, side)
			b.StopTimer()
			walls[k] += wall
			each[k] = append(each[k], times...)
			checkAllArrived(b, names[k], repo, workers, adds)
			b.StartTimer()
		}
	}
	b.StopTimer()
	rate := make([]float64, len(sides))
	p99 := make([]float64, len(sides))
	for k, ts := range each {
		slices.Sort(ts)
		rate[k] = float64(len(ts)) / walls[k].Seconds()
		p99[k] = ms(ts[len(ts)*99/100])
		b.ReportMetric(rate[k], "adds/s-"+names[k])
		b.ReportMetric(ms(ts[len(ts)/2]), "ms-p50-"+names[k])
		b.ReportMetric(p99[k], "ms-p99-"+names[k])
	}
	b.ReportMetric(rate[1]/rate[0], "x-throughput")
	b.ReportMetric(p99[1]/p99[0], "x-p99")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// writeAtOnce starts workers writers in repo at once; writer i runs the
// command line add(repo, i, j) for j = 0..adds-1, one after another. It
// returns the time until the last one finished and each command's time.
func writeAtOnce(b *testing.B, env []string, repo string, workers, adds int, add func(repo string, i, j int) []string) (time.Duration, []time.Duration) {
	var wg sync.WaitGroup
	times := make([][]time.Duration, workers)
	errs := make(chan error, workers)
	start := time.Now()
	for i := range workers {
		wg.Go(func() {
			for j := range adds {
				args := add(repo, i, j)
				cmd := exec.Command(args[0], args[1:]...)
				var out bytes.Buffer
				cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = repo, env, &out, &out
				t0 := time.Now()
				if err := cmd.Run(); err != nil {
					errs <- fmt.Errorf("writer %d add %d: %w\n%s", i, j, err, out.String())
					return
				}
				times[i] = append(times[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	return wall, slices.Concat(times...)
}

// checkAllArrived fails unless every writer's every add is in repo's memory
// (the active file or, past the max count, the archive) exactly once.
func checkAllArrived(b *testing.B, name, repo string, workers, adds int) {
	var all []memfile.Entry
	for _, p := range []string{".agent/memories.md", ".agent/archive/memories.md"} {
		data, err := os.ReadFile(filepath.Join(repo, p))
		if err != nil && !os.IsNotExist(err) {
			b.Fatal(err)
		}
		all = append(all, memfile.Parse(data).Entries...)
	}
	count := map[string]int{}
	for _, e := range all {
		count[e.Content]++
	}
	for i := range workers {
		for j := range adds {
			if c := count[fmt.Sprintf("worker %d learned thing %d", i, j)]; c != 1 {
				b.Fatalf("%s: worker %d add %d is there %d times, want once", name, i, j, c)
			}
		}
	}
	if len(all) != workers*adds {
		b.Fatalf("%s: %d entries, want %d", name, len(all), workers*adds)
	}
}
