package memsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
)

// benchRepo is the memory of a repository of files committed files (40 lines each,
// src/dNN/fNNNN.go) with its memory opened.
func benchRepo(b *testing.B, files int) *Memory {
	b.Helper()
	dir := testgit.Isolate(b)
	b.Setenv("MEMSYNC_GLOBAL_DIR", b.TempDir())
	testgit.Git(b, dir, "init", "-q", "-b", "main")
	for i := range files {
		var s strings.Builder
		fmt.Fprintf(&s, "package d%02d\n\n", i%50)
		for l := 3; l <= 40; l++ {
			fmt.Fprintf(&s, "var v%d_%d = %d\n", i, l, i*l)
		}
		p := filepath.Join(dir, benchPath(i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	testgit.Git(b, dir, "add", "-A")
	testgit.Git(b, dir, "commit", "-qm", "files")
	m, err := Open(dir, Options{NoAccessLog: true})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func benchPath(i int) string { return fmt.Sprintf("src/d%02d/f%04d.go", i%50, i) }

// benchCheck is a repository of 2,000 files and a memory of 1,000 entries,
// each citing lines of another file, checked once (the cache filled).
func benchCheck(b *testing.B) *Memory {
	m := benchRepo(b, 2000)
	ctx := context.Background()
	for i := range 1000 {
		spec := fmt.Sprintf("%s:%d-%d", benchPath(2*i), 10+i%20, 12+i%20)
		if _, err := m.AddWith(ctx, Entry{Content: fmt.Sprintf("fact number %d about the value", i)}, AddOptions{Cite: []string{spec}, NoAutoCite: true}); err != nil {
			b.Fatal(err)
		}
	}
	res, err := m.Check(ctx, CheckOptions{})
	if err != nil || len(res.Citations) != 1000 || len(res.Stale) != 0 {
		b.Fatalf("check: %d citations, %d stale, %v", len(res.Citations), len(res.Stale), err)
	}
	return m
}

// BenchmarkCheck1000 is 'memsync check' (less the process start) of 1,000
// cited entries in a repository of 2,000 files, as it runs again and
// again: the files git's index says are unchanged are not read (the
// findings are cached by blob ID). Target: 50 ms.
func BenchmarkCheck1000(b *testing.B) {
	m := benchCheck(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.Check(ctx, CheckOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheck1000Cold is BenchmarkCheck1000 without the cache: every
// cited file is read and fingerprinted.
func BenchmarkCheck1000Cold(b *testing.B) {
	m := benchCheck(b)
	ctx := context.Background()
	cache := filepath.Join(m.store.StateDir, "cite-cache")
	for b.Loop() {
		if err := os.Remove(cache); err != nil {
			b.Fatal(err)
		}
		if _, err := m.Check(ctx, CheckOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAddCite is one Add whose content names a tracked file with a
// line ("see src/d07/f0007.go:12"), in a repository of 2,000 files: auto
// cites it (reads the git index and the file) or, with NoAutoCite, not.
// The difference is what automatic citation costs an add.
func BenchmarkAddCite(b *testing.B) {
	for _, auto := range []bool{true, false} {
		b.Run(fmt.Sprintf("auto=%v", auto), func(b *testing.B) {
			m := benchRepo(b, 2000)
			ctx := context.Background()
			i := 0
			for b.Loop() {
				i++
				e, err := m.AddWith(ctx, Entry{Content: fmt.Sprintf("value %d: see %s:12", i, benchPath(i%2000))}, AddOptions{NoAutoCite: !auto})
				if err != nil || (len(e.Citations) == 1) != auto {
					b.Fatalf("%+v, %v", e.Citations, err)
				}
			}
		})
	}
}

// BenchmarkInjectMarks is one Inject over 1,000 cited entries, without a
// staleness record (as before check existed) and with one that marks 100
// of them stale: the marks must cost inject nothing to speak of.
func BenchmarkInjectMarks(b *testing.B) {
	for _, stale := range []bool{false, true} {
		b.Run(fmt.Sprintf("stale=%v", stale), func(b *testing.B) {
			m := benchRepo(b, 100)
			ctx := context.Background()
			for i := range 1000 {
				spec := fmt.Sprintf("%s:%d", benchPath(i%100), 3+i%30)
				if _, err := m.AddWith(ctx, Entry{Content: fmt.Sprintf("the retry loop number %d times out when the cache is cold", i)}, AddOptions{Cite: []string{spec}}); err != nil {
					b.Fatal(err)
				}
			}
			if stale {
				for i := range 10 { // 10 files of 100 change: 100 entries are stale
					if err := os.WriteFile(filepath.Join(m.WorkTree(), benchPath(i)), []byte("changed\n"), 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
			res, err := m.Check(ctx, CheckOptions{})
			if err != nil || (len(res.Stale) == 100) != stale {
				b.Fatalf("%d stale, %v", len(res.Stale), err)
			}
			for b.Loop() {
				if _, err := m.Inject(ctx, "Why does the retry loop time out when the cache is cold?", InjectOptions{Mode: "auto", Budget: new(2000)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
