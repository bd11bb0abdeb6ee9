package store

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/memsync/memsync/memfile"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func newStore(t *testing.T) *Store {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Store{Home: filepath.Join(dir, ".agent")}
}

func mustAppend(t *testing.T, s *Store, content string) memfile.Entry {
	t.Helper()
	e, err := s.Append(s.NewEntry("pattern", "", content, []string{"t"}))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestAppendWritesOrchBlocks(t *testing.T) {
	s := newStore(t)
	a := mustAppend(t, s, "first")
	b := mustAppend(t, s, "second\nline")
	data, _ := os.ReadFile(s.Path())
	want := memfile.Header + "\n" + memfile.RenderEntry(&a, memfile.Orch) + "\n" + memfile.RenderEntry(&b, memfile.Orch)
	if string(data) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
	f, err := s.Load()
	if err != nil || len(f.Entries) != 2 || f.Entries[1].Content != "second\nline" || f.Entries[1].ID != b.ID {
		t.Fatalf("%v %+v", err, f)
	}
}

func TestAppendAfterFileWithoutNewline(t *testing.T) {
	s := newStore(t)
	_ = os.MkdirAll(s.Home, 0o755)
	_ = os.WriteFile(s.Path(), []byte("# Memories\n\n## Pattern: A\n- Content: a"), 0o644)
	mustAppend(t, s, "b")
	f, _ := s.Load()
	if len(f.Entries) != 2 || f.Entries[0].Content != "a" || f.Entries[1].Content != "b" {
		t.Fatalf("%+v", f.Entries)
	}
}

func TestAppendRefusesTooLargeAndBinary(t *testing.T) {
	s := newStore(t)
	_, err := s.Append(s.NewEntry("", "", strings.Repeat("x", DefaultMaxEntryBytes), nil))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "65536") {
		t.Fatalf("want ErrTooLarge naming the limit, got %v", err)
	}
	if _, err := s.Append(s.NewEntry("", "", "a\x00b", nil)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("binary: %v", err)
	}
	if _, err := s.Append(s.NewEntry("", "two\nlines", "c", nil)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("title: %v", err)
	}
	// Control characters (a terminal escape, a bell) in the one-line
	// fields are refused: list and search print them.
	for _, e := range []memfile.Entry{
		s.NewEntry("", "red\x1b[31m", "c", nil),
		s.NewEntry("", "", "c", []string{"ring\a"}),
		s.NewEntry("fix\x1b]0;x\a", "", "c", nil),
	} {
		if _, err := s.Append(e); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "control character") {
			t.Fatalf("%q %q %q: %v, want a control character refused", e.Title, e.Tags, e.Type, err)
		}
	}
	if _, err := os.Stat(s.Path()); !os.IsNotExist(err) {
		t.Fatal("a refused entry created the file")
	}
	// Content may hold them (pasted colored output); the title made from it
	// leaves them out.
	e, err := s.Append(s.NewEntry("", "", "\x1b[31mERROR\x1b[0m build failed", nil))
	if err != nil || e.Title != "[31mERROR[0m build failed" {
		t.Fatalf("escape in content: %q %v", e.Title, err)
	}
}

func TestSizeCapArchivesOldestFirst(t *testing.T) {
	s := newStore(t)
	s.MaxBytes = 2000
	var warned []string
	s.Warn = func(m string) { warned = append(warned, m) }
	var ids []string
	for i := range 40 {
		ids = append(ids, mustAppend(t, s, fmt.Sprintf("entry number %d with some words to take room", i)).ID)
	}
	fi, _ := os.Stat(s.Path())
	if fi.Size() > s.MaxBytes {
		t.Fatalf("active file %d bytes over the cap %d", fi.Size(), s.MaxBytes)
	}
	if len(warned) == 0 || !strings.Contains(warned[0], "size cap") {
		t.Fatalf("no warning: %v", warned)
	}
	act, _ := s.Load()
	arc, _ := s.LoadArchive()
	var all []string
	for _, e := range arc.Entries {
		all = append(all, e.ID)
	}
	for _, e := range act.Entries {
		all = append(all, e.ID)
	}
	if strings.Join(all, ",") != strings.Join(ids, ",") {
		t.Fatalf("archive+active is not every entry, oldest first:\n%v\n%v", all, ids)
	}
	if len(arc.Entries) == 0 || len(act.Entries) == 0 {
		t.Fatalf("archive %d, active %d", len(arc.Entries), len(act.Entries))
	}
}

func TestResolveRefusesEscapes(t *testing.T) {
	s := newStore(t)
	_ = os.MkdirAll(s.Home, 0o755)
	outside := filepath.Join(filepath.Dir(s.Home), "outside")
	_ = os.WriteFile(outside, []byte("precious"), 0o644)
	if err := os.Symlink("../outside", s.Path()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(s.NewEntry("", "", "x", nil)); !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("want ErrUnsafePath, got %v", err)
	}
	if err := s.Update(func(*memfile.File) error { return nil }); !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("update: %v", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "precious" {
		t.Fatalf("outside file changed: %q", b)
	}
	// A link that stays inside the home is fine, also when it dangles.
	_ = os.Remove(s.Path())
	_ = os.Symlink("real.md", s.Path())
	mustAppend(t, s, "through an inside link")
	if b, _ := os.ReadFile(filepath.Join(s.Home, "real.md")); !strings.Contains(string(b), "through an inside link") {
		t.Fatal("not written through the inside link")
	}
	if fi, _ := os.Lstat(s.Path()); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
	if err := s.Update(func(f *memfile.File) error { f.Entries = nil; return nil }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(s.Path()); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("a rewrite replaced the link")
	}
}

func TestUpdateOfDamagedFileKeepsBackup(t *testing.T) {
	s := newStore(t)
	_ = os.MkdirAll(s.Home, 0o755)
	orig := "# Memories\n\n## A\n- Content: a\n<<<<<<< HEAD\n## B\n- Content: b\x00\n"
	_ = os.WriteFile(s.Path(), []byte(orig), 0o644)
	if err := s.Update(func(f *memfile.File) error { f.Entries = f.Entries[1:]; return nil }); err != nil {
		t.Fatal(err)
	}
	backups, _ := filepath.Glob(s.Path() + ".bak-*")
	if len(backups) != 1 {
		t.Fatalf("backups: %v", backups)
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != orig {
		t.Fatalf("backup %q", b)
	}
	// A clean file gets no backup.
	_ = os.Remove(backups[0])
	_ = os.WriteFile(s.Path(), []byte(seedExample), 0o644)
	if err := s.Update(func(f *memfile.File) error { f.Entries = nil; return nil }); err != nil {
		t.Fatal(err)
	}
	if backups, _ := filepath.Glob(s.Path() + ".bak-*"); len(backups) != 0 {
		t.Fatalf("backup of a clean file: %v", backups)
	}
}

func TestAppendToRalphFile(t *testing.T) {
	s := newStore(t)
	_ = os.MkdirAll(s.Home, 0o755)
	data, _ := os.ReadFile(filepath.Join(formatTestdata, "ralph-woocommerce.md"))
	_ = os.WriteFile(s.Path(), data, 0o644)
	e, err := s.Append(s.NewEntry("fix", "", "a fix", []string{"x"}))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := s.Load()
	if f.Dialect != memfile.Ralph || len(f.Entries) != 2 || !strings.HasPrefix(e.ID, "mem-") {
		t.Fatalf("%v %+v", f.Dialect, f.Entries)
	}
	out, _ := os.ReadFile(s.Path())
	if !strings.Contains(string(out), "## Fixes\n\n### "+e.ID+"\n> a fix\n") {
		t.Fatalf("%s", out)
	}
}

// BenchmarkAppend measures one append into an empty file and into a 10 MB
// one: the cost must not grow with the file (ratio ≤ 1.2).
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{0, 10 << 20} {
		b.Run(fmt.Sprintf("file=%dMB", size>>20), func(b *testing.B) {
			dir := b.TempDir()
			s := &Store{Home: filepath.Join(dir, ".agent"), MaxBytes: 1 << 40}
			_ = os.MkdirAll(s.Home, 0o755)
			if size > 0 {
				_ = os.WriteFile(s.Path(), memfile.GenerateFile(size, 1), 0o644)
			}
			e := s.NewEntry("pattern", "", "a learning of typical length about retries and timeouts", []string{"bench"})
			b.ResetTimer()
			for range b.N {
				if _, err := s.Append(e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLoadWithoutLockFile: a reader that cannot open the lock file (a
// read-only checkout; here, as it must also work as root, a folder where the
// lock file would be) reads without it.
func TestLoadWithoutLockFile(t *testing.T) {
	s := newStore(t)
	mustAppend(t, s, "readable")
	lp := s.Path() + ".lock"
	if err := os.Remove(lp); err != nil {
		t.Fatal(err)
	}
	// A lock that cannot be created (its folder does not exist), even as
	// root: the reader reads without it.
	if err := os.Symlink(filepath.Join("missing", "memories.md.lock"), lp); err != nil {
		t.Fatal(err)
	}
	f, err := s.Load()
	if err != nil || len(f.Entries) != 1 {
		t.Fatalf("%v %v", err, f)
	}
	// A folder where the lock belongs is refused, named.
	if err := os.Remove(lp); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(lp, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(); !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("a folder at the lock path: %v", err)
	}
}

// Reload hands back the file it was given while the bytes are the same, and
// sees every change at once: an append, a rewrite, an outside edit of the
// same size.
func TestReloadReusesOnlyTheSameBytes(t *testing.T) {
	s := newStore(t)
	mustAppend(t, s, "first")
	f, err := s.Reload(nil)
	if err != nil || len(f.Entries) != 1 {
		t.Fatalf("reload: %v %v", f, err)
	}
	if again, err := s.Reload(f); err != nil || again != f {
		t.Fatalf("unchanged file parsed again: %p vs %p, %v", again, f, err)
	}
	mustAppend(t, s, "second")
	g, err := s.Reload(f)
	if err != nil || g == f || len(g.Entries) != 2 {
		t.Fatalf("append not seen: %d entries, %v", len(g.Entries), err)
	}
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.ReplaceAll(data, []byte("second"), []byte("SECOND"))
	if err := os.WriteFile(s.Path(), edited, 0o644); err != nil { // in place, same size
		t.Fatal(err)
	}
	h, err := s.Reload(g)
	if err != nil || h == g || h.Entries[1].Content != "SECOND" {
		t.Fatalf("same-size edit not seen: %q, %v", h.Entries[1].Content, err)
	}
	if a, err := s.ReloadArchive(nil); err != nil || len(a.Entries) != 0 {
		t.Fatalf("archive: %v %v", a, err)
	}
}

// TestResolveJudgesFoldersNotYetMade: an archive folder that is a dangling
// link out of the home is refused before memsync would create anything there.
func TestResolveJudgesFoldersNotYetMade(t *testing.T) {
	s := newStore(t)
	_ = os.MkdirAll(s.Home, 0o755)
	if err := os.Symlink("../nowhere/deeper", filepath.Join(s.Home, "archive")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Resolve(s.ArchivePath())
	var pe *PathError
	if !errors.As(err, &pe) || pe.Link != filepath.Join(s.Home, "archive") {
		t.Fatalf("want a PathError naming the archive link, got %v", err)
	}
	if _, err := s.Append(s.NewEntry("", "", "one", nil)); !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("add with an unsafe archive: %v", err)
	}
	if _, err := s.Archive("1"); !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("archive through a dangling link: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(s.Home), "nowhere")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("created outside the home: %v", err)
	}
}

// TestAliasedFilesRefused: a lock hard-linked to the memory file would get a
// pid written into the memory; refused before anything is written.
func TestAliasedFilesRefused(t *testing.T) {
	s := newStore(t)
	mustAppend(t, s, "one")
	before, _ := os.ReadFile(s.Path())
	_ = os.Remove(s.Path() + ".lock")
	if err := os.Link(s.Path(), s.Path()+".lock"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(s.NewEntry("", "", "two", nil)); !errors.Is(err, ErrUnsafePath) || !strings.Contains(err.Error(), "same file") {
		t.Fatalf("add with the lock hard-linked to the memory: %v", err)
	}
	if after, _ := os.ReadFile(s.Path()); string(after) != string(before) {
		t.Fatalf("memory changed:\n%s", after)
	}
}

// TestStateDirTemps: a write into the state dir (fsutil.WriteFile: the
// access log's compaction, the vector cache) killed before its rename leaves
// a temp file that StaleTemps lists, and doctor --fix removes, like those
// beside the memory files.
func TestStateDirTemps(t *testing.T) {
	s := newStore(t)
	s.StateDir = filepath.Join(filepath.Dir(s.Home), "state")
	mustAppend(t, s, "an entry")
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.StateDir, 0o755); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(s.StateDir, ".access.log.tmp-"+strconv.Itoa(done.Process.Pid)+"-1")
	if err := os.WriteFile(left, []byte("1 x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stale, err := s.StaleTemps()
	if err != nil || !slices.Contains(stale, left) {
		t.Fatalf("StaleTemps = %v, %v; want %s listed", stale, err, left)
	}
}

// formatTestdata holds the real memory files the format's tests read.
const formatTestdata = "../../memfile/testdata"
