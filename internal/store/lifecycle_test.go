package store

import (
	"errors"
	"github.com/memsync/memsync/memfile"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func lifecycleStore(t *testing.T) *Store {
	t.Helper()
	dir := t.TempDir()
	return &Store{Home: filepath.Join(dir, ".agent"), StateDir: filepath.Join(dir, "state")}
}

func ids(t *testing.T, s *Store) (active, archive []string) {
	t.Helper()
	a, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.LoadArchive()
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Problems)+len(b.Problems) > 0 {
		t.Fatalf("problems: %v %v", a.Problems, b.Problems)
	}
	for _, e := range a.Entries {
		active = append(active, e.ID)
	}
	for _, e := range b.Entries {
		archive = append(archive, e.ID)
	}
	return active, archive
}

func mustAdd(t *testing.T, s *Store, content string) memfile.Entry {
	t.Helper()
	e, dup, err := s.Add(s.NewEntry("pattern", "", content, nil))
	if err != nil || dup != NotDup {
		t.Fatalf("add %q: %v %v", content, dup, err)
	}
	return e
}

func TestArchiveRestore(t *testing.T) {
	s := lifecycleStore(t)
	a, b, c := mustAdd(t, s, "alpha"), mustAdd(t, s, "beta\n  indented\n## not a heading"), mustAdd(t, s, "gamma")
	moved, err := s.Archive(a.ID, c.ID[:6])
	if err != nil || len(moved) != 2 {
		t.Fatalf("archive: %v %v", moved, err)
	}
	act, arc := ids(t, s)
	if strings.Join(act, ",") != b.ID || strings.Join(arc, ",") != a.ID+","+c.ID {
		t.Fatalf("after archive: %v | %v", act, arc)
	}
	if _, err := s.Archive(b.ID, "zzzzzz"); err == nil {
		t.Fatal("a bad reference moved something")
	}
	if act2, _ := ids(t, s); len(act2) != 1 {
		t.Fatalf("a failed archive changed the file: %v", act2)
	}
	if _, err := s.Restore(c.ID); err != nil {
		t.Fatal(err)
	}
	f, _ := s.Load()
	if i, err := f.Find(c.ID); err != nil || f.Entries[i].Content != "gamma" {
		t.Fatalf("restored entry: %v", err)
	}
	if _, err := s.Restore(b.ID); err == nil {
		t.Fatal("restored an entry that is not archived")
	}
}

// A crash between the destination write and the source write leaves an entry
// in both files; the next move removes it from its source.
func TestMoveRemovesCrashDuplicates(t *testing.T) {
	s := lifecycleStore(t)
	a, b := mustAdd(t, s, "alpha"), mustAdd(t, s, "beta")
	f, _ := s.Load()
	if err := os.MkdirAll(filepath.Dir(s.ArchivePath()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.ArchivePath(), (&memfile.File{Preamble: memfile.Header + "\n", Entries: f.Entries[:1]}).Render(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive(b.ID); err != nil {
		t.Fatal(err)
	}
	act, arc := ids(t, s)
	if len(act) != 0 || strings.Join(arc, ",") != a.ID+","+b.ID {
		t.Fatalf("after the next move: %v | %v", act, arc)
	}
}

func TestAddDedup(t *testing.T) {
	s := lifecycleStore(t)
	a := mustAdd(t, s, "Use  exponential backoff\nfor retries")
	e, dup, err := s.Add(s.NewEntry("", "", "use exponential BACKOFF for   retries ", nil))
	if err != nil || dup != DupActive || e.ID != a.ID || e.Content != a.Content {
		t.Fatalf("duplicate add: %v %v %+v", dup, err, e)
	}
	if _, err := s.Archive(a.ID); err != nil {
		t.Fatal(err)
	}
	if e, dup, _ := s.Add(s.NewEntry("", "", "use exponential backoff for retries", nil)); dup != DupArchived || e.ID != a.ID {
		t.Fatalf("archived duplicate: %v %s", dup, e.ID)
	}
	// An edit behind memsync's back (another tool appends) is noticed.
	data, _ := os.ReadFile(s.Path())
	data = append(data, "\n## Written by orch\n- Tags: x\n- Date: 2026-01-01\n- Content: Written By   Orch\n"...)
	if err := os.WriteFile(s.Path(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, dup, _ := s.Add(s.NewEntry("", "", "written by orch", nil)); dup != DupActive {
		t.Fatalf("content written behind memsync's back: %v", dup)
	}
	act, _ := ids(t, s)
	if len(act) != 1 {
		t.Fatalf("active: %v", act)
	}
}

func TestGC(t *testing.T) {
	s := lifecycleStore(t)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	var all []memfile.Entry
	for _, c := range []string{"one", "two", "three", "four", "five"} {
		all = append(all, mustAdd(t, s, c))
	}
	// Last accesses: "one" 100 days ago, "two" 10 days ago, "three" an hour
	// ago, the others now; and a line torn by a crash.
	if err := os.WriteFile(filepath.Join(s.StateDir, accessLog), []byte(
		unixLine(now.Add(-100*24*time.Hour), all[0].ID)+unixLine(now.Add(-10*24*time.Hour), all[1].ID)+
			unixLine(now.Add(-time.Hour), all[2].ID)+unixLine(now, all[3].ID)+unixLine(now, all[4].ID)+"torn li"), 0o644); err != nil {
		t.Fatal(err)
	}
	lim := Limits{MaxEntries: 3, TTL: 90 * 24 * time.Hour}
	dry, err := s.GC(lim, true)
	if err != nil || len(dry) != 2 || dry[0].ID != all[0].ID || dry[1].ID != all[1].ID {
		t.Fatalf("dry run: %v %v", dry, err)
	}
	if act, _ := ids(t, s); len(act) != 5 {
		t.Fatal("a dry run changed the file")
	}
	moved, err := s.GC(lim, false)
	if err != nil || len(moved) != 2 {
		t.Fatalf("gc: %v %v", moved, err)
	}
	act, arc := ids(t, s)
	if len(act) != 3 || len(arc) != 2 || arc[0] != all[0].ID {
		t.Fatalf("after gc: %v | %v", act, arc)
	}
	// TTL 0: everything moves.
	if moved, _ := s.GC(Limits{TTL: 0}, false); len(moved) != 3 {
		t.Fatalf("TTL 0 moved %d", len(moved))
	}
	// The counts in the index follow the moves: the next add sees 1 entry.
	mustAdd(t, s, "six")
	x := s.openIndexLocked()
	if x == nil || x.Count != 1 || x.Archived != 5 {
		t.Fatalf("index after gc: %+v", x)
	}
}

func unixLine(t time.Time, id string) string {
	return strconv.FormatInt(t.Unix(), 10) + " " + id + "\n"
}

func TestReadForeign(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("memory/a.md", "---\nkey: api\ntags:\n  - x\n  - \"y\"\ncreated_at: 2024-01-15T10:30:00\n---\n\n## API\n\nBody line\n")
	write("memory/archive/b.md", "---\r\nkey: old\r\ntags: [p, 'q']\r\n---\r\nOld body\r\n")
	write("s1/memory/c.md", "---\ntags: t\n---\n# Heading only\n")
	act, arc, err := ReadForeign(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(act) != 2 || len(arc) != 1 {
		t.Fatalf("%d active, %d archived", len(act), len(arc))
	}
	a := act[0]
	if a.Title != "API" || a.Content != "Body line" || strings.Join(a.Tags, ",") != "x,y" || a.Date != "2024-01-15" || a.Field("Key") != "api" {
		t.Fatalf("entry a: %+v", a)
	}
	if b := arc[0]; b.Content != "Old body" || strings.Join(b.Tags, ",") != "p,q" {
		t.Fatalf("entry b: %+v", b)
	}
	if c := act[1]; c.Field("Session") != "s1" || c.Field("Key") != "c" || c.Content != "Heading only" {
		t.Fatalf("entry c: %+v", c)
	}
	again, _, _ := ReadForeign(dir)
	if again[0].ID != a.ID {
		t.Fatal("IDs differ between two reads")
	}
	s := lifecycleStore(t)
	added, skipped, err := s.Import(act, arc)
	if err != nil || len(added) != 3 || skipped != 0 {
		t.Fatalf("import: %d %d %v", len(added), skipped, err)
	}
	if added, skipped, _ := s.Import(act, arc); len(added) != 0 || skipped != 3 {
		t.Fatalf("second import: %d added, %d skipped", len(added), skipped)
	}
}

// TestAddKeyTaken: an entry whose key an active or archived entry has is
// refused naming that entry, nothing is written, and the key stays the
// name of one entry for Find.
func TestAddKeyTaken(t *testing.T) {
	s := lifecycleStore(t)
	keyed := func(content, key string) memfile.Entry {
		e := s.NewEntry("", "", content, nil)
		e.SetField(memfile.KeyField, key)
		return e
	}
	a, _, err := s.Add(keyed("auth uses JWT", "api-auth"))
	if err != nil {
		t.Fatal(err)
	}
	for _, archived := range []bool{false, true} {
		if archived {
			if _, err := s.Archive(a.ID); err != nil {
				t.Fatal(err)
			}
		}
		_, _, err := s.Add(keyed("auth uses sessions", " api-auth "))
		var kt *KeyTakenError
		if !errors.As(err, &kt) || kt.ID != a.ID || kt.Archived != archived || !errors.Is(err, ErrInvalid) {
			t.Fatalf("archived %v: a taken key: %v", archived, err)
		}
	}
	act, arc := ids(t, s)
	if len(act) != 0 || len(arc) != 1 {
		t.Fatalf("active %v, archive %v", act, arc)
	}
	if _, _, err := s.Add(keyed("auth uses sessions", "web-auth")); err != nil {
		t.Fatalf("a free key: %v", err)
	}
}
