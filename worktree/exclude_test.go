package worktree

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
)

func exclReadFile(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestEnsureExcludeCreates(t *testing.T) {
	f := newDiscFixture(t)
	info := filepath.Join(f.primary, ".git", "info")
	if err := os.RemoveAll(info); err != nil {
		t.Fatal(err)
	}
	// From a linked worktree: the file is the common one.
	r := discMust(t, f.wt(t, "wt1"))
	added, err := EnsureExclude(r, []string{".agent/memories.md", ".agent/archive/"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(added, []string{".agent/memories.md", ".agent/archive/"}) {
		t.Errorf("added = %q", added)
	}
	got := exclReadFile(t, filepath.Join(info, "exclude"))
	if want := "# memsync\n.agent/memories.md\n.agent/archive/\n"; got != want {
		t.Errorf("exclude = %q, want %q", got, want)
	}
}

func TestEnsureExcludeIdempotent(t *testing.T) {
	f := newDiscFixture(t)
	r := discMust(t, f.primary)
	path := filepath.Join(r.CommonDir, "info", "exclude")
	patterns := []string{".agent/memories.md", ".agent/memories.md", "*.memsync-tmp"}
	added, err := EnsureExclude(r, patterns)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(added, []string{".agent/memories.md", "*.memsync-tmp"}) {
		t.Errorf("first call added %q", added)
	}
	before := exclReadFile(t, path)
	if n := strings.Count(before, ".agent/memories.md"); n != 1 {
		t.Errorf("pattern appears %d times:\n%s", n, before)
	}
	for i := 0; i < 2; i++ {
		added, err = EnsureExclude(r, patterns)
		if err != nil {
			t.Fatal(err)
		}
		if len(added) != 0 {
			t.Errorf("call %d added %q", i+2, added)
		}
		if after := exclReadFile(t, path); after != before {
			t.Errorf("file changed:\n%q\n%q", before, after)
		}
	}
	// A later new pattern goes under the existing header.
	if added, err = EnsureExclude(r, []string{".agent/memories.md", "new"}); err != nil || !slices.Equal(added, []string{"new"}) {
		t.Fatalf("added %q, %v", added, err)
	}
	if got := exclReadFile(t, path); got != before+"new\n" {
		t.Errorf("after adding one more:\n%q\nwant\n%q", got, before+"new\n")
	}
	if strings.Count(exclReadFile(t, path), excludeHeader) != 1 {
		t.Error("header written twice")
	}
}

func TestEnsureExcludeKeepsContent(t *testing.T) {
	f := newDiscFixture(t)
	r := discMust(t, f.primary)
	path := filepath.Join(r.CommonDir, "info", "exclude")
	for _, tc := range []struct{ old, want string }{
		{"# mine\n*.log", "# mine\n*.log\n# memsync\n.agent/memories.md\n"},
		{"# mine\r\n*.log\r\n\r\n", "# mine\r\n*.log\r\n\r\n# memsync\n.agent/memories.md\n"},
		{"", "# memsync\n.agent/memories.md\n"},
		{".agent/memories.md  \r\n", ".agent/memories.md  \r\n"}, // already there
	} {
		if err := os.WriteFile(path, []byte(tc.old), 0o666); err != nil {
			t.Fatal(err)
		}
		if _, err := EnsureExclude(r, []string{".agent/memories.md"}); err != nil {
			t.Fatal(err)
		}
		if got := exclReadFile(t, path); got != tc.want {
			t.Errorf("from %q:\n got %q\nwant %q", tc.old, got, tc.want)
		}
	}
}

func TestEnsureExcludeHidesMemoryFile(t *testing.T) {
	f := newDiscFixture(t)
	r := discMust(t, f.primary)
	if _, err := EnsureExclude(r, []string{".agent/memories.md"}); err != nil {
		t.Fatal(err)
	}
	mem := r.MemoryFile()
	discMkdir(t, filepath.Dir(mem))
	if err := os.WriteFile(mem, []byte("# memories\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	wt1 := f.wt(t, "wt1")
	discMkdir(t, filepath.Join(wt1, ".agent"))
	if err := os.Symlink(mem, filepath.Join(wt1, ".agent", "memories.md")); err != nil {
		t.Fatal(err)
	}
	wt2 := f.wt(t, "wt-two")
	discMkdir(t, filepath.Join(wt2, ".agent"))
	if err := os.WriteFile(filepath.Join(wt2, ".agent", "memories.md"), []byte("x\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{f.primary, wt1, wt2} {
		for _, mode := range []string{"-unormal", "-uall"} {
			if out := testgit.Git(t, dir, "status", "--porcelain", mode); strings.Contains(out, ".agent") {
				t.Errorf("git status %s in %s shows the memory file:\n%s", mode, dir, out)
			}
		}
	}
	// Sanity check: without the pattern it would show.
	if err := os.WriteFile(filepath.Join(r.CommonDir, "info", "exclude"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if out := testgit.Git(t, wt1, "status", "--porcelain"); !strings.Contains(out, ".agent") {
		t.Errorf("memory file not visible without the exclude:\n%s", out)
	}
}

func TestEnsureExcludeErrors(t *testing.T) {
	f := newDiscFixture(t)
	r := discMust(t, f.primary)
	for _, p := range []string{"", "  ", "a\nb"} {
		if _, err := EnsureExclude(r, []string{p}); err == nil {
			t.Errorf("pattern %q accepted", p)
		}
	}
	if _, err := EnsureExclude(&Repo{}, []string{"x"}); err == nil {
		t.Error("empty Repo accepted")
	}
}

// TestEnsureExcludeConcurrent: writers that meet a memory's first write at
// once (parallel loops, their hooks) add the patterns once between them;
// each read the file, found them missing and appended its own block.
func TestEnsureExcludeConcurrent(t *testing.T) {
	for round := range 10 {
		f := newDiscFixture(t)
		path := filepath.Join(f.primary, ".git", "info", "exclude")
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		patterns := []string{".agent/memories.md", ".agent/archive/"}
		done := make(chan error)
		for range 8 {
			r := discMust(t, f.primary)
			go func() {
				_, err := EnsureExclude(r, patterns)
				done <- err
			}()
		}
		for range 8 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		if got, want := exclReadFile(t, path), "# memsync\n.agent/memories.md\n.agent/archive/\n"; got != want {
			t.Fatalf("round %d: exclude = %q, want %q", round, got, want)
		}
	}
}
