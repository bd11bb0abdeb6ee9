package store

import (
	"errors"
	"fmt"
	"github.com/memsync/memsync/memfile"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeForeign appends entries as another tool writes them: no ID, no date.
func writeForeign(t *testing.T, s *Store, n int) {
	t.Helper()
	if err := os.MkdirAll(s.Home, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(s.Path(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for i := range n {
		fmt.Fprintf(f, "\n## Note: n%d\n- Content: written by another tool %d\n", i, i)
	}
}

func contents(t *testing.T, s *Store) (active, archive []string) {
	t.Helper()
	a, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.LoadArchive()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range a.Entries {
		active = append(active, e.Content)
	}
	for _, e := range b.Entries {
		archive = append(archive, e.Content)
	}
	return active, archive
}

// The cleanup an add triggers never archives the entry it just wrote, even
// when the other entries were never seen (issue 10, defect 1).
func TestAddNeverArchivesItsOwnEntry(t *testing.T) {
	s := lifecycleStore(t)
	s.Limits = &Limits{MaxEntries: 5, TTL: 90 * 24 * time.Hour}
	writeForeign(t, s, 6)
	e, dup, err := s.Add(s.NewEntry("", "", "fresh lesson about kiwi", nil))
	if err != nil || dup != NotDup {
		t.Fatal(dup, err)
	}
	act, arc := contents(t, s)
	if !slices.Contains(act, "fresh lesson about kiwi") || slices.Contains(arc, "fresh lesson about kiwi") {
		t.Fatalf("the new entry %s was archived by its own add:\nactive %q\narchive %q", e.ID, act, arc)
	}
	if len(act) > 5 || len(act)+len(arc) != 7 {
		t.Fatalf("active %d, archive %d", len(act), len(arc))
	}
	// TTL 0 archives everything the add's cleanup sees, but not the entry
	// the add wrote.
	s.Limits = &Limits{MaxEntries: 5, TTL: 0}
	if _, _, err := s.Add(s.NewEntry("", "", "second lesson about figs", nil)); err != nil {
		t.Fatal(err)
	}
	if act, _ := contents(t, s); !slices.Equal(act, []string{"second lesson about figs"}) {
		t.Fatalf("active after a TTL-0 add: %q", act)
	}
}

// An entry never accessed ages from its Date (midnight, in whole seconds as
// the access log), else from the first gc that sees it.
func TestGCAgesUnseenEntriesFromFirstSight(t *testing.T) {
	s := lifecycleStore(t)
	now := time.Date(2026, 6, 1, 12, 0, 0, 123456789, time.Local)
	s.Now = func() time.Time { return now }
	_ = os.MkdirAll(s.Home, 0o755)
	text := memfile.Header + "\n\n## Old\n- Date: 2026-01-01\n- Content: old\n\n## Undated\n- Content: undated\n\n## Recent\n- Date: 2026-05-30\n- Content: recent\n"
	if err := os.WriteFile(s.Path(), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// Dated months ago, but never seen: the TTL counts from now.
	moved, err := s.GC(Limits{MaxEntries: 10, TTL: 90 * 24 * time.Hour}, false)
	if err != nil || len(moved) != 0 {
		t.Fatalf("gc moved %v (%v), want nothing: no entry has been seen for 90 days", moved, err)
	}
	// All first seen in the same second: the older Date goes first.
	moved, err = s.GC(Limits{MaxEntries: 2, TTL: -1}, false)
	if err != nil || len(moved) != 1 || moved[0].Content != "old" {
		t.Fatalf("gc moved %v (%v), want the oldest dated entry", moved, err)
	}
	// First sight was recorded in whole seconds, and the TTL runs from it.
	last := s.LastAccess()
	act, _ := s.Load()
	if got := last[act.Entries[0].ID]; !got.Equal(time.Unix(now.Unix(), 0)) {
		t.Fatalf("first sight recorded as %v", got)
	}
	now = now.Add(91 * 24 * time.Hour)
	moved, err = s.GC(Limits{MaxEntries: 10, TTL: 90 * 24 * time.Hour}, false)
	if err != nil || len(moved) != 2 {
		t.Fatalf("gc 91 days after first sight moved %v (%v), want both", moved, err)
	}
}

// A size-cap rewrite still applies MaxEntries (8971 entries stayed active
// with a max of 1000).
func TestSizeCapAddAppliesMaxEntries(t *testing.T) {
	s := lifecycleStore(t)
	s.MaxBytes = 2500
	s.Limits = &Limits{MaxEntries: 10, TTL: -1}
	writeForeign(t, s, 60)
	if fi, _ := os.Stat(s.Path()); fi.Size() <= s.MaxBytes {
		t.Fatalf("setup: %d bytes is under the cap", fi.Size())
	}
	if _, _, err := s.Add(s.NewEntry("", "", "past the cap", nil)); err != nil {
		t.Fatal(err)
	}
	act, arc := contents(t, s)
	if len(act) > 10 || len(act)+len(arc) != 61 || !slices.Contains(act, "past the cap") {
		t.Fatalf("active %d (want <= 10, with the new entry), archive %d", len(act), len(arc))
	}
}

// Two entries sharing an ID: a rewrite gives the later one a new ID with a
// warning before anything moves; archiving one keeps the other (defect 5).
func TestDuplicateIDsAreRenamedNotLost(t *testing.T) {
	s := lifecycleStore(t)
	var warned []string
	s.Warn = func(m string) { warned = append(warned, m) }
	_ = os.MkdirAll(s.Home, 0o755)
	text := memfile.Header + "\n\n## A\n- ID: same00000000\n- Content: first\n\n## B\n- ID: same00000000\n- Content: second\n\n## C\n- Content: third\n"
	if err := os.WriteFile(s.Path(), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(memfile.DuplicateIDs(memfile.Parse([]byte(text)))) != 1 {
		t.Fatal("DuplicateIDs does not see the duplicate")
	}
	moved, err := s.Archive("same00000000")
	if err != nil || len(moved) != 1 || moved[0].Content != "first" {
		t.Fatalf("archive: %v %v", moved, err)
	}
	act, arc := contents(t, s)
	if !slices.Equal(act, []string{"second", "third"}) || !slices.Equal(arc, []string{"first"}) {
		t.Fatalf("active %q, archive %q", act, arc)
	}
	f, _ := s.Load()
	if f.Entries[0].ID == "same00000000" || len(f.Problems) > 0 {
		t.Fatalf("the second entry kept the duplicate ID: %+v %v", f.Entries[0], f.Problems)
	}
	if len(warned) == 0 || !strings.Contains(strings.Join(warned, "\n"), "new ID "+f.Entries[0].ID) {
		t.Fatalf("no warning names the new ID: %q", warned)
	}

	// An archived entry with the same ID but other content: the moved entry
	// lands in the archive under a new ID; nothing is dropped.
	text = memfile.Header + "\n\n## D\n- ID: other0000000\n- Content: active side\n"
	if err := os.WriteFile(s.Path(), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateArchive(func(f *memfile.File) error {
		f.Entries = append(f.Entries, memfile.Entry{ID: "other0000000", Title: "E", Content: "archived side"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive("other0000000"); err != nil {
		t.Fatal(err)
	}
	act, arc = contents(t, s)
	if len(act) != 0 || !slices.Equal(arc, []string{"first", "archived side", "active side"}) {
		t.Fatalf("active %q, archive %q", act, arc)
	}
	if a, _ := s.LoadArchive(); len(memfile.DuplicateIDs(a)) > 0 {
		t.Fatal("the archive holds a duplicate ID")
	}
}

// A damage that stays in the file is backed up once, not on every rewrite
// (defect 8).
func TestOneBackupPerDamagedContent(t *testing.T) {
	s := lifecycleStore(t)
	_ = os.MkdirAll(s.Home, 0o755)
	if err := os.WriteFile(s.Path(), []byte(memfile.Header+"\nbinary \x00 line\n\n## A\n- Content: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, "b")
	for range 5 {
		if err := s.Update(func(f *memfile.File) error { f.Entries = f.Entries[1:]; return nil }); err != nil {
			t.Fatal(err)
		}
		mustAdd(t, s, fmt.Sprint(time.Now().UnixNano()))
	}
	backups, _ := filepath.Glob(s.Path() + ".bak-*")
	if len(backups) != 1 {
		t.Fatalf("5 rewrites with one damage left %d backups: %v", len(backups), backups)
	}
	if b, _ := os.ReadFile(backups[0]); !strings.Contains(string(b), "\n## A\n") {
		t.Fatalf("the backup is not the content the first rewrite met: %q", b)
	}
	// Another damage gets its own backup.
	f, err := os.OpenFile(s.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("\nbad \xff utf-8\n")
	_ = f.Close()
	if err := s.Update(func(*memfile.File) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if backups, _ := filepath.Glob(s.Path() + ".bak-*"); len(backups) != 2 {
		t.Fatalf("backups after a new damage: %v", backups)
	}
	data, _ := os.ReadFile(s.Path())
	if b := BackupPath(s.Path(), data); b == "" || !strings.HasPrefix(b, s.Path()+".bak-") {
		t.Fatalf("BackupPath: %q", b)
	}
}

// Two sessions may store the same text: each sees its own; a session sees
// a copy saved without a session; a caller without a session sees all
// (defect 11).
func TestDuplicateCheckFollowsSessions(t *testing.T) {
	s := lifecycleStore(t)
	add := func(session string) (memfile.Entry, Dup) {
		e := s.NewEntry("", "", "shared lesson", nil)
		if session != "" {
			e.SetField("Session", session)
		}
		e, dup, err := s.Add(e)
		if err != nil {
			t.Fatal(err)
		}
		return e, dup
	}
	a, _ := add("s1")
	if b, dup := add("s2"); dup != NotDup || b.ID == a.ID {
		t.Fatalf("s2's add was taken for s1's entry: %v %s", dup, b.ID)
	}
	if c, dup := add("s1"); dup != DupActive || c.ID != a.ID {
		t.Fatalf("s1's second add: %v %s", dup, c.ID)
	}
	if _, dup := add(""); dup != DupActive {
		t.Fatalf("a caller without a session sees every session's entry: %v", dup)
	}
	s.Limits = nil
	if _, err := s.Archive(a.ID); err != nil {
		t.Fatal(err)
	}
	if c, dup := add("s1"); dup != DupArchived || c.ID != a.ID {
		t.Fatalf("s1's add of its archived entry: %v %s", dup, c.ID)
	}
	if act, _ := contents(t, s); len(act) != 1 {
		t.Fatalf("active: %q", act)
	}
}

// A memory file without the owner's write bit is refused for every write,
// whoever runs memsync (root included), and nothing changes (defect 13).
func TestReadOnlyFileRefusesEveryWrite(t *testing.T) {
	s := lifecycleStore(t)
	a := mustAdd(t, s, "alpha")
	mustAdd(t, s, "beta")
	if err := os.Chmod(s.Path(), 0o444); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(s.Path())
	for name, write := range map[string]func() error{
		"add":     func() error { _, _, err := s.Add(s.NewEntry("", "", "gamma", nil)); return err },
		"append":  func() error { _, err := s.Append(s.NewEntry("", "", "delta", nil)); return err },
		"update":  func() error { return s.Update(func(f *memfile.File) error { f.Entries = f.Entries[1:]; return nil }) },
		"archive": func() error { _, err := s.Archive(a.ID); return err },
		"gc":      func() error { _, err := s.GC(Limits{TTL: 0}, false); return err },
	} {
		err := write()
		if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), s.Path()) {
			t.Errorf("%s on a read-only file: %v", name, err)
		}
	}
	after, _ := os.ReadFile(s.Path())
	if string(after) != string(before) {
		t.Fatal("a write changed the read-only file")
	}
	if fi, _ := os.Stat(s.Path()); fi.Mode().Perm() != 0o444 {
		t.Fatalf("mode changed to %v", fi.Mode())
	}
	if _, err := os.Stat(s.ArchivePath()); err == nil {
		t.Fatal("an archive was written while the active file is read-only")
	}
	// The archive read-only: restore and archive are refused as well.
	_ = os.Chmod(s.Path(), 0o644)
	if _, err := s.Archive(a.ID); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(s.ArchivePath(), 0o444)
	if _, err := s.Restore(a.ID); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("restore from a read-only archive: %v", err)
	}
	// Reads still work.
	if f, err := s.Load(); err != nil || len(f.Entries) != 1 {
		t.Fatalf("load: %v", err)
	}
}

// At the size cap of a ralph file (newest first), the entry just appended is
// not the one archived; the oldest are (defect 1).
func TestSizeCapOfRalphFileKeepsTheNewEntry(t *testing.T) {
	s := lifecycleStore(t)
	s.MaxBytes = 1500
	for i := range 30 {
		e, err := s.Append(s.NewEntry("fix", "", fmt.Sprintf("ralph entry number %d with words", i), nil))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			// Turn the file into ralph's dialect once it has one entry.
			_ = os.WriteFile(s.Path(), []byte("# Memories\n\n## Fixes\n\n### mem-1700000000-abcd\n> ralph entry number 0 with words\n<!-- tags:  | created: 2023-11-14 -->\n"), 0o644)
		} else if !strings.HasPrefix(e.ID, "mem-") {
			t.Fatalf("append %d wrote %s, not in ralph's dialect", i, e.ID)
		}
		act, arc := contents(t, s)
		if !slices.Contains(act, fmt.Sprintf("ralph entry number %d with words", i)) {
			t.Fatalf("append %d: the new entry is not active (active %q, archive %q)", i, act, arc)
		}
	}
	act, arc := contents(t, s)
	if len(arc) == 0 || len(act)+len(arc) != 30 || arc[0] != "ralph entry number 0 with words" {
		t.Fatalf("active %q, archive %q", act, arc)
	}
}

// An append to a CRLF file writes CRLF line ends, so the file never mixes
// styles between rewrites (defect 17).
func TestAppendKeepsCRLF(t *testing.T) {
	for _, tail := range []string{"\r\n", "\r\n\r\n", ""} {
		s := lifecycleStore(t)
		_ = os.MkdirAll(s.Home, 0o755)
		text := "# Memories\r\n\r\n## Note: one\r\n- ID: aaaabbbbcccc\r\n- Content: first"
		if err := os.WriteFile(s.Path(), []byte(text+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Add(s.NewEntry("note", "", "second\nline", []string{"x"})); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(s.Path())
		if n, crlf := strings.Count(string(data), "\n"), strings.Count(string(data), "\r\n"); n != crlf {
			t.Fatalf("tail %q: %d line ends, %d CRLF:\n%q", tail, n, crlf, data)
		}
		f := memfile.Parse(data)
		if len(f.Entries) != 2 || f.Entries[1].Content != "second\nline" || !strings.Contains(string(data), "first\r\n\r\n## ") {
			t.Fatalf("tail %q: %q", tail, data)
		}
	}
}

// Renaming an entry that repeats another's ID loses no text: the rewrite
// writes no backup (a damaged line beside it still gets one).
func TestDuplicateIDRenameWritesNoBackup(t *testing.T) {
	s := lifecycleStore(t)
	_ = os.MkdirAll(s.Home, 0o755)
	dup := memfile.Header + "\n\n## A\n- ID: same00000000\n- Content: a\n\n## B\n- ID: same00000000\n- Content: b\n"
	if err := os.WriteFile(s.Path(), []byte(dup), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(*memfile.File) error { return nil }); err != nil {
		t.Fatal(err)
	}
	f, _ := s.Load()
	if backups, _ := filepath.Glob(s.Path() + ".bak-*"); len(backups) != 0 || len(f.Entries) != 2 || f.Entries[0].ID == f.Entries[1].ID || f.Entries[1].Content != "b" {
		t.Fatalf("backups %v, entries %+v", backups, f.Entries)
	}
	if err := os.WriteFile(s.Path(), []byte(dup+"\nbinary \x00 line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(*memfile.File) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if backups, _ := filepath.Glob(s.Path() + ".bak-*"); len(backups) != 1 {
		t.Fatalf("a damaged line beside the duplicate: backups %v", backups)
	}
}
