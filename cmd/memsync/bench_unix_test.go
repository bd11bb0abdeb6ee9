package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/memfile"
)

// The BenchmarkUnix* benchmarks are the whole-process comparison of memsync
// with the Unix commands that do the least of the same job (scripts/bench-unix
// runs them and prints the table of docs/performance.md): each memsync
// command and its baseline run in turn, b.N rounds, on a generated memory of
// about 1k or 30k entries. Each reports the median milliseconds (ms-NAME),
// the ratio of each median to the baseline's (x-NAME) and the peak resident
// set of any run (MB-NAME, getrusage's ru_maxrss, as /usr/bin/time -v).

// unixSizes are the generated memories: about 1k entries (400 KB) and 30k
// entries (12 MB).
var unixSizes = []struct {
	name string
	size int
}{{"1k", 412_000}, {"30k", 12_310_000}}

// unixEnv is the test environment with the caps raised, so that neither
// size cap nor entry cap archives anything: the baselines do not either.
func unixEnv(b *testing.B) []string {
	return append(testGitEnv(b), "MEMSYNC_MAX_BYTES=67108864", "MCP_MEMORY_MAX_ENTRIES=1000000")
}

// runTimed runs a command and returns how long it took; its output is read
// and dropped.
func runTimed(tb testing.TB, env []string, dir string, argv ...string) time.Duration {
	tb.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		tb.Fatalf("%v: %v\n%s%s", argv, err, out.String(), errOut.String())
	}
	return d
}

// peakRSS is the peak resident set of one run of a command in bytes, as
// /usr/bin/time reports it (getrusage's ru_maxrss of a child forked from a
// small process: one forked from the test binary would count the test's
// own pages), or -1 without /usr/bin/time.
func peakRSS(tb testing.TB, env []string, dir string, argv ...string) int64 {
	tb.Helper()
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return -1
	}
	report := filepath.Join(tb.TempDir(), "rss")
	runTimed(tb, env, dir, append([]string{"/usr/bin/time", "-f", "%M", "-o", report}, argv...)...)
	kb, err := strconv.ParseInt(strings.TrimSpace(readFile(tb, report)), 10, 64)
	if err != nil {
		tb.Fatal(err)
	}
	return kb << 10
}

// compare runs the commands (argument lists) in turn, b.N rounds, the first
// one the baseline, then each once more for its peak resident set. args
// gives a command's arguments in round i.
func compare(b *testing.B, env []string, dir string, names []string, args []func(i int) []string) {
	b.Helper()
	times := make([][]time.Duration, len(args))
	b.ResetTimer()
	for i := range b.N {
		for k, a := range args {
			times[k] = append(times[k], runTimed(b, env, dir, a(i)...))
		}
	}
	b.StopTimer()
	var base float64
	for k, ts := range times {
		m := medianMS(ts)
		b.ReportMetric(m, "ms-"+names[k])
		if rss := peakRSS(b, env, dir, args[k](b.N)...); rss >= 0 {
			b.ReportMetric(float64(rss)/(1<<20), "MB-"+names[k])
		}
		if k == 0 {
			base = m
		} else {
			b.ReportMetric(m/base, "x-"+names[k])
		}
	}
}

func medianMS(ts []time.Duration) float64 {
	ts = slices.Clone(ts)
	slices.Sort(ts)
	return float64(ts[len(ts)/2]) / float64(time.Millisecond)
}

// quantileMS is the q-quantile of ts (nearest rank), in milliseconds.
func quantileMS(ts []time.Duration, q float64) float64 {
	ts = slices.Clone(ts)
	slices.Sort(ts)
	return float64(ts[min(len(ts)-1, int(q*float64(len(ts))))]) / float64(time.Millisecond)
}

// BenchmarkUnixAdd: `memsync add` against flock(1) + printf >> file, the
// same lock protocol in the shell.
func BenchmarkUnixAdd(b *testing.B) {
	if _, err := exec.LookPath("flock"); err != nil {
		b.Skip("flock(1) not installed")
	}
	bin := memsyncBinary(b)
	env := unixEnv(b)
	for _, sz := range unixSizes {
		b.Run(sz.name, func(b *testing.B) {
			_, file := repoWithMemory(b, env, sz.size)
			repo, _ := repoWithMemory(b, env, sz.size)
			runTimed(b, env, repo, bin, "list") // the first command builds the state dir
			compare(b, env, repo, []string{"flock-printf", "add"}, []func(int) []string{
				func(i int) []string {
					return []string{"flock", file + ".lock", "sh", "-c",
						fmt.Sprintf(`printf '\n## Solution: CI Timeout\n- Tags: ci\n- Date: 2026-11-22\n- Content: Increase CI timeout to %d seconds\n' >> %s`, 600+i, file)}
				},
				func(i int) []string {
					// New content each time: identical content is a duplicate, not an append.
					return []string{bin, "add", fmt.Sprintf("Raise CI timeout to %d seconds", 600+i), "-t", "solution", "--tags", "ci"}
				},
			})
		})
	}
}

// readBench compares memsync commands that read the memory (each one's
// arguments in args) with a baseline command that reads its file.
func readBench(b *testing.B, baseline []string, names []string, args ...[]string) {
	bin := memsyncBinary(b)
	env := unixEnv(b)
	for _, sz := range unixSizes {
		b.Run(sz.name, func(b *testing.B) {
			repo, file := repoWithMemory(b, env, sz.size)
			runTimed(b, env, repo, bin, "list")
			runs := []func(int) []string{func(int) []string { return append(slices.Clone(baseline), file) }}
			for _, a := range args {
				runs = append(runs, func(int) []string { return append([]string{bin}, a...) })
			}
			compare(b, env, repo, names, runs)
		})
	}
}

// BenchmarkUnixSearch: `memsync search` against grep -ci.
func BenchmarkUnixSearch(b *testing.B) {
	readBench(b, []string{"grep", "-ci", "retry"}, []string{"grep", "search"},
		[]string{"search", "retry timeout", "--limit", "10"})
}

// BenchmarkUnixInject: `memsync inject --budget 2000` against grep -ci.
func BenchmarkUnixInject(b *testing.B) {
	readBench(b, []string{"grep", "-ci", "retry"}, []string{"grep", "inject"},
		[]string{"inject", "--budget", "2000", "Why does the retry loop time out when the cache is cold?"})
}

// BenchmarkUnixList: `memsync list` and `list --json` against cat.
func BenchmarkUnixList(b *testing.B) {
	readBench(b, []string{"cat"}, []string{"cat", "list", "list-json"},
		[]string{"list"}, []string{"list", "--json"})
}

// BenchmarkUnixWriters: 8 and 16 concurrent writers × 100 adds each, memsync
// add against flock(1) + printf, each round into a fresh memory of about 1k
// entries. Reports throughput (adds/s-NAME, median of the rounds), the
// latency of one add (p50-ms-NAME, p99-ms-NAME, over every add of every
// round) and checks that no add was lost.
func BenchmarkUnixWriters(b *testing.B) {
	if _, err := exec.LookPath("flock"); err != nil {
		b.Skip("flock(1) not installed")
	}
	bin := memsyncBinary(b)
	env := unixEnv(b)
	const adds = 100
	for _, writers := range []int{8, 16} {
		b.Run(fmt.Sprint(writers), func(b *testing.B) {
			sides := []struct {
				name string
				argv func(file string, w, j int) []string
			}{
				{"flock-printf", func(file string, w, j int) []string {
					return []string{"flock", file + ".lock", "sh", "-c",
						fmt.Sprintf(`printf '\n## Fix: writer %d\n- Tags: bench\n- Date: 2026-11-22\n- Content: learned %d\n' >> %s`, w, j, file)}
				}},
				{"memsync", func(_ string, w, j int) []string {
					return []string{bin, "add", fmt.Sprintf("writer %d learned %d in round", w, j), "--tags", "bench"}
				}},
			}
			perAdd := make([][]time.Duration, len(sides)) // per round: wall time per add
			lat := make([][]time.Duration, len(sides))
			b.ResetTimer()
			for range b.N {
				for k, side := range sides {
					b.StopTimer()
					repo, file := repoWithMemory(b, env, unixSizes[0].size)
					runTimed(b, env, repo, bin, "list")
					before := len(memfile.Parse([]byte(readFile(b, file))).Entries)
					b.StartTimer()
					var mu sync.Mutex
					var wg sync.WaitGroup
					start := time.Now()
					for w := range writers {
						wg.Go(func() {
							for j := range adds {
								d := runTimed(b, env, repo, side.argv(file, w, j)...)
								mu.Lock()
								lat[k] = append(lat[k], d)
								mu.Unlock()
							}
						})
					}
					wg.Wait()
					perAdd[k] = append(perAdd[k], time.Since(start)/time.Duration(writers*adds))
					if got, want := len(memfile.Parse([]byte(readFile(b, file))).Entries), before+writers*adds; got != want {
						b.Fatalf("%s: %d entries after the writers, want %d", side.name, got, want)
					}
				}
			}
			b.StopTimer()
			for k, side := range sides {
				b.ReportMetric(1000/medianMS(perAdd[k]), "adds/s-"+side.name)
				b.ReportMetric(quantileMS(lat[k], 0.50), "p50-ms-"+side.name)
				b.ReportMetric(quantileMS(lat[k], 0.99), "p99-ms-"+side.name)
			}
		})
	}
}
