package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memsync/memsync/memfile"
)

// History reads and history size (issue 25). Run with the binary of
// another revision for the figures before (scripts/bench-baseline REV):
//
//	BENCHES='^Benchmark(Log|GitDir)' scripts/bench-baseline main 3

// snapshotHistory makes a repository whose memory of about size bytes has
// n snapshots taken by bin, each after one appended entry.
func snapshotHistory(b *testing.B, env []string, bin string, n, size int) string {
	b.Helper()
	repo, file := repoWithMemory(b, env, size)
	for i := range n {
		appendEntry(b, file, i)
		runProcess(b, env, repo, bin, "snapshot")
	}
	return repo
}

// benchLog times `memsync log` and `memsync log -n 20` over n snapshots of
// a memory of size bytes, side by side with git log printing the same
// commits' messages. Targets: log of 300 snapshots ≤ 100 ms, of 2,000 ≤
// 500 ms; log -n 20 ≤ 30 ms at any length and size.
func benchLog(b *testing.B, n, size int, all bool) {
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	repo := snapshotHistory(b, env, bin, n, size)
	names := []string{"git-log", "log-n20"}
	runs := []func(int) time.Duration{
		func(int) time.Duration {
			return runProcess(b, env, repo, "git", "log", "--format=%H %P %ct%n%B", "refs/memsync/snapshots")
		},
		func(int) time.Duration { return runProcess(b, env, repo, bin, "log", "-n", "20") },
	}
	if all {
		names = append(names, "log")
		runs = append(runs, func(int) time.Duration { return runProcess(b, env, repo, bin, "log") })
	}
	sideBySide(b, names, runs)
	b.ReportMetric(dirMB(b, filepath.Join(repo, ".git")), "MB-git")
}

func BenchmarkLog300(b *testing.B)  { benchLog(b, 300, 330<<10, true) }
func BenchmarkLog2000(b *testing.B) { benchLog(b, 2000, 330<<10, true) }

// BenchmarkLog10MB: log -n 20 of 30 snapshots of a 10 MB memory.
func BenchmarkLog10MB(b *testing.B) { benchLog(b, 30, 10<<20, false) }

// dirMB is the size of the files under dir in MB.
func dirMB(tb testing.TB, dir string) float64 {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			total += fi.Size()
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return float64(total) / (1 << 20)
}

// benchGitDir makes n commits with memsync's hooks installed, each after
// one `memsync add`, over a memory of about 1,000 entries (the default
// cap: the adds archive the oldest), and reports the size of .git with no
// gc run by hand (MB-git) and the median commit (ms-commit), each commit's
// background snapshot done before the next add. Targets: 300 commits ≤ 2
// MB, 2,000 ≤ 10 MB.
func benchGitDir(b *testing.B, n int) {
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	for range b.N {
		repo, _ := repoWithMemory(b, env, 330<<10)
		runProcess(b, env, repo, bin, "init")
		runProcess(b, env, repo, bin, "hooks", "install")
		times := make([]time.Duration, n)
		for i := range n {
			runProcess(b, env, repo, bin, "add", fmt.Sprintf("lesson %d: retry the upstream with backoff", i), "-t", "pattern", "--tags", "bench")
			times[i] = runProcess(b, env, repo, "git", "commit", "-q", "--allow-empty", "-m", fmt.Sprint("change ", i))
			waitNoProcessIn(b, repo, time.Minute) // its snapshot, in the background: one per commit, as commits minutes apart make
		}
		b.ReportMetric(dirMB(b, filepath.Join(repo, ".git")), "MB-git")
		b.ReportMetric(median(times), "ms-commit")
	}
}

// median is the median of ts in milliseconds.
func median(ts []time.Duration) float64 {
	slices.Sort(ts)
	return float64(ts[len(ts)/2]) / float64(time.Millisecond)
}

func BenchmarkGitDir300(b *testing.B)  { benchGitDir(b, 300) }
func BenchmarkGitDir2000(b *testing.B) { benchGitDir(b, 2000) }

// BenchmarkLogEntries300: over 300 snapshots of a 330 KB memory, each
// after one appended entry, `memsync log` beside log --stat (read from the
// snapshots' records), log --stat -n 20, log -p -n 20 (every snapshot's
// file compared with its parent's) and log ID of an entry the first
// snapshot added (every snapshot passed over from its record).
func BenchmarkLogEntries300(b *testing.B) {
	bin := memsyncBinary(b)
	env := testGitEnv(b)
	repo := snapshotHistory(b, env, bin, 300, 330<<10)
	data, err := os.ReadFile(filepath.Join(repo, ".agent", "memories.md"))
	if err != nil {
		b.Fatal(err)
	}
	id := memfile.Parse(data).Entries[0].ID
	var runs []func(int) time.Duration
	for _, args := range [][]string{{"log"}, {"log", "--stat"}, {"log", "--stat", "-n", "20"}, {"log", "-p", "-n", "20"}, {"log", id}} {
		runs = append(runs, func(int) time.Duration { return runProcess(b, env, repo, bin, args...) })
	}
	sideBySide(b, []string{"log", "log-stat", "log-stat-n20", "log-p-n20", "log-ID"}, runs)
}
