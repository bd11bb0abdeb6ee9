package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

func linkMust(t *testing.T, r *Repo, wt string) LinkResult {
	t.Helper()
	res, err := Link(r, store.Open(r.Home), wt)
	if err != nil {
		t.Fatalf("Link(%s): %v", wt, err)
	}
	return res
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	discMkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLink(t *testing.T) {
	f := newDiscFixture(t)
	r := discMust(t, f.primary)
	for _, name := range []string{"wt1", "wt-two", "inner"} {
		wt := f.wt(t, name)
		res := linkMust(t, r, wt)
		if res.State != StateLinked || !res.Changed || res.Was != StateMissing {
			t.Errorf("%s: first Link = %+v", name, res)
		}
		mem := filepath.Join(wt, ".agent", "memories.md")
		got, err := os.Readlink(mem)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := filepath.Rel(filepath.Join(wt, ".agent"), r.MemoryFile())
		if got != want || filepath.IsAbs(got) {
			t.Errorf("%s: link = %q, want %q", name, got, want)
		}
		// Idempotent.
		if res := linkMust(t, r, wt); res.State != StateLinked || res.Changed {
			t.Errorf("%s: second Link = %+v", name, res)
		}
		// A write from the worktree lands in the home.
		wr := discMust(t, wt)
		if _, err := store.Open(wr.Home).Append(memfile.Entry{ID: "id-" + name, Title: name, Content: "from " + name}); err != nil {
			t.Fatal(err)
		}
		if st, err := Inspect(r, store.Open(r.Home), wt); err != nil || st.State != StateLinked {
			t.Errorf("%s: Inspect = %+v, %v", name, st, err)
		}
	}
	mf, err := store.Open(r.Home).Load()
	if err != nil || len(mf.Entries) != 3 {
		t.Fatalf("home has %d entries, %v", len(mf.Entries), err)
	}
	// The primary is linked like any worktree; the memory is in the git dir.
	if res := linkMust(t, r, f.primary); res.State != StateLinked {
		t.Errorf("primary: %+v", res)
	}
	if res := linkMust(t, r, f.primary); res.State != StateLinked || res.Changed {
		t.Errorf("primary, second Link: %+v", res)
	}
	for _, dir := range []string{f.primary, f.wt(t, "wt1"), f.wt(t, "wt-two"), f.wt(t, "inner")} {
		if out := testgit.Git(t, dir, "status", "--porcelain", "-uall"); strings.Contains(out, ".agent") {
			t.Errorf("git status in %s:\n%s", dir, out)
		}
	}
}

func TestLinkRepairs(t *testing.T) {
	f := newDiscFixture(t)
	r := discMust(t, f.primary)
	wt := f.wt(t, "wt1")
	mem := filepath.Join(wt, ".agent", "memories.md")
	linkMust(t, r, wt)
	if _, err := store.Open(r.Home).Append(memfile.Entry{ID: "shared", Title: "shared", Content: "in both"}); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(f.root, "outside")
	writeFile(t, outside, "secret\n")
	for _, tc := range []struct {
		name  string
		setup func()
		was   State
	}{
		{"broken", func() { _ = os.Remove(mem); _ = os.Symlink("../nowhere/memories.md", mem) }, StateBroken},
		{"wrong", func() { _ = os.Remove(mem); _ = os.Symlink(filepath.Join(r.Home, "memories.md.lock"), mem) }, StateWrongTarget},
		{"unsafe", func() { _ = os.Remove(mem); _ = os.Symlink("../../outside", mem) }, StateUnsafe},
		{"identical", func() {
			data, _ := os.ReadFile(r.MemoryFile())
			_ = os.Remove(mem)
			writeFile(t, mem, string(data))
		}, StateCopyIdentical},
	} {
		tc.setup()
		st, err := Inspect(r, store.Open(r.Home), wt)
		if err != nil || st.State != tc.was {
			t.Fatalf("%s: Inspect = %+v, %v", tc.name, st, err)
		}
		res := linkMust(t, r, wt)
		if res.State != StateLinked || res.Was != tc.was || !res.Changed {
			t.Errorf("%s: Link = %+v", tc.name, res)
		}
		if st, _ := Inspect(r, store.Open(r.Home), wt); st.State != StateLinked {
			t.Errorf("%s: after Link: %+v", tc.name, st)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "secret\n" {
		t.Errorf("outside file changed: %q", b)
	}

	// A diverged copy is folded by ID and kept as a backup.
	data, _ := os.ReadFile(r.MemoryFile())
	_ = os.Remove(mem)
	writeFile(t, mem, string(data)+"\n## Only in the copy\n- Content: learned in wt1\n")
	diff, err := Diff(store.Open(r.Home), mem)
	if err != nil || !strings.Contains(diff, "\n+## Only in the copy") || strings.HasPrefix(diff, "-") || strings.Contains(diff, "\n-") {
		t.Errorf("Diff = %q, %v", diff, err)
	}
	res := linkMust(t, r, wt)
	if res.Was != StateCopyDiverged || res.Added != 1 || res.Backup == "" {
		t.Errorf("diverged: %+v", res)
	}
	if b, err := os.ReadFile(res.Backup); err != nil || !strings.Contains(string(b), "learned in wt1") {
		t.Errorf("backup: %q, %v", b, err)
	}
	mf, _ := store.Open(r.Home).Load()
	if len(mf.Entries) != 2 || mf.Entries[1].Content != "learned in wt1" {
		t.Errorf("home after fold: %+v", mf.Entries)
	}
	if out := testgit.Git(t, wt, "status", "--porcelain"); out != "" {
		t.Errorf("git status:\n%s", out)
	}
}

func TestLinkCopyFallback(t *testing.T) {
	f := newDiscFixture(t)
	testgit.Git(t, f.primary, "config", "core.symlinks", "false")
	r := discMust(t, f.primary)
	wt := f.wt(t, "wt1")
	res := linkMust(t, r, wt)
	if res.State != StateCopy || !strings.Contains(res.Message, "core.symlinks=false") {
		t.Fatalf("Link = %+v", res)
	}
	mem := filepath.Join(wt, ".agent", "memories.md")
	if fi, err := os.Lstat(mem); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("copy: %v %v", fi, err)
	}
	if res := linkMust(t, r, wt); res.State != StateCopy || res.Changed {
		t.Errorf("second Link = %+v", res)
	}
}

// TestLinkTracked: a memory file the branch tracks is folded into the
// memory and left to git (a link would stop git checkout), so git status
// stays clean.
func TestLinkTracked(t *testing.T) {
	f := newDiscFixture(t)
	wt := f.wt(t, "wt1")
	writeFile(t, filepath.Join(wt, ".agent", "memories.md"), "# Memories\n\n## Tracked\n- Content: x\n")
	testgit.Git(t, wt, "add", ".agent/memories.md")
	testgit.Git(t, wt, "commit", "-q", "-m", "track it")
	r := discMust(t, f.primary)
	st, err := Inspect(r, store.Open(r.Home), wt)
	if err != nil || !st.Tracked || !strings.Contains(st.Detail, "git rm --cached") {
		t.Fatalf("Inspect = %+v, %v", st, err)
	}
	res, err := Link(r, store.Open(r.Home), wt)
	if err != nil || res.State != StateCopyDiverged || res.Added != 1 || !strings.Contains(res.Message, "tracked") {
		t.Fatalf("Link of a tracked file: %+v, %v", res, err)
	}
	if out := testgit.Git(t, wt, "status", "--porcelain"); out != "" {
		t.Errorf("git status:\n%s", out)
	}
	if mf, err := store.Open(r.Home).Load(); err != nil || len(mf.Entries) != 1 || mf.Entries[0].Content != "x" {
		t.Errorf("memory after the fold: %+v, %v", mf, err)
	}
}

func TestLinkFindsTheWorktree(t *testing.T) {
	f := newDiscFixture(t)
	r := discMust(t, f.primary)
	wt := f.wt(t, "wt-two")
	// A subfolder names its worktree.
	if res := linkMust(t, r, filepath.Join(wt, "a", "b")); res.State != StateLinked {
		t.Errorf("Link(subfolder) = %+v", res)
	}
	if _, err := os.Lstat(filepath.Join(wt, ".agent", "memories.md")); err != nil {
		t.Error(err)
	}
	if _, err := os.Lstat(filepath.Join(wt, "a", "b", ".agent")); err == nil {
		t.Error("linked the subfolder")
	}
	// Another repository, or no repository, is refused and left alone.
	other := discRepo(t, filepath.Join(f.root, "other"))
	plain := discMkdir(t, filepath.Join(f.root, "plain"))
	for _, dir := range []string{other, plain, filepath.Join(f.primary, ".git")} {
		if _, err := Link(r, store.Open(r.Home), dir); err == nil {
			t.Errorf("Link(%s) succeeded", dir)
		}
		if _, err := os.Lstat(filepath.Join(dir, ".agent")); err == nil {
			t.Errorf("Link(%s) made .agent", dir)
		}
	}
}

// A stale copy (the memory moved on) is replaced without a backup; a copy
// with another version of an entry is kept as a backup, since the union by ID
// does not carry the edit over.
func TestLinkStaleAndEditedCopies(t *testing.T) {
	f := newDiscFixture(t)
	r := discMust(t, f.primary)
	wt := f.wt(t, "wt1")
	mem := filepath.Join(wt, ".agent", "memories.md")
	store := store.Open(r.Home)
	if _, err := store.Append(memfile.Entry{ID: "aaaa1111", Title: "one", Content: "first"}); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(r.MemoryFile())
	if _, err := store.Append(memfile.Entry{ID: "bbbb2222", Title: "two", Content: "second"}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, mem, string(old))
	res := linkMust(t, r, wt)
	if res.Was != StateCopyDiverged || res.Added != 0 || res.Backup != "" || res.State != StateLinked {
		t.Errorf("stale copy: %+v", res)
	}
	_ = os.Remove(mem)
	writeFile(t, mem, strings.Replace(string(old), "- Content: first", "- Content: first, edited", 1))
	// An edited copy written after the memory's last write (an editor that
	// saves by renaming over the link) is an edit: it is applied, and the
	// copy kept as a backup.
	res = linkMust(t, r, wt)
	if res.Was != StateCopyDiverged || res.Added != 1 || res.Backup == "" {
		t.Errorf("edited copy: %+v", res)
	}
	if b, _ := os.ReadFile(res.Backup); !strings.Contains(string(b), "first, edited") {
		t.Errorf("backup: %q", b)
	}
	if mf, _ := store.Load(); len(mf.Entries) != 2 || mf.Entries[0].Content != "first, edited" {
		t.Errorf("memory: %+v", mf.Entries)
	}
	// An edited copy older than the memory's last write is not applied: the
	// memory's version stays, the copy is kept.
	_ = os.Remove(mem)
	writeFile(t, mem, strings.Replace(string(old), "- Content: first", "- Content: first, stale edit", 1))
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(mem, past, past); err != nil {
		t.Fatal(err)
	}
	res = linkMust(t, r, wt)
	if res.Added != 0 || res.Backup == "" {
		t.Errorf("stale edited copy: %+v", res)
	}
	if mf, _ := store.Load(); len(mf.Entries) != 2 || mf.Entries[0].Content != "first, edited" {
		t.Errorf("memory after a stale edit: %+v", mf.Entries)
	}
}

func TestInspectAgentFile(t *testing.T) {
	f := newDiscFixture(t)
	r := discMust(t, f.primary)
	wt := f.wt(t, "wt1")
	writeFile(t, filepath.Join(wt, ".agent"), "not a folder\n")
	st, err := Inspect(r, store.Open(r.Home), wt)
	if err != nil || st.State != StateWrongTarget {
		t.Fatalf("Inspect = %+v, %v", st, err)
	}
	if _, err := Link(r, store.Open(r.Home), wt); err == nil {
		t.Fatal("Link over a file named .agent succeeded")
	}
	if b, _ := os.ReadFile(filepath.Join(wt, ".agent")); string(b) != "not a folder\n" {
		t.Errorf(".agent changed: %q", b)
	}
}
