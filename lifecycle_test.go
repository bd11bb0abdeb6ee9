package memsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// lifecycleRepo is a new repository with the entries contents (owner role),
// its global layer in a folder of its own.
func lifecycleRepo(t *testing.T, o Options, contents ...string) (*Memory, string) {
	t.Helper()
	dir := testgit.Isolate(t)
	testgit.Git(t, dir, "init", "-q")
	t.Setenv("MEMSYNC_GLOBAL_DIR", filepath.Join(t.TempDir(), "global"))
	for _, k := range []string{"MEMSYNC_ROLE", "MCP_MEMORY_MAX_ENTRIES", "MCP_MEMORY_TTL_DAYS", "MEMSYNC_SESSION"} {
		t.Setenv(k, "")
	}
	owner, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range contents {
		if _, err := owner.Add(context.Background(), Entry{Type: "pattern", Tags: []string{"t"}, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return m, dir
}

func ids(es []Entry) string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return strings.Join(out, " ")
}

func mustList(t *testing.T, m *Memory, v View) []Entry {
	t.Helper()
	es, err := m.List(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func cleanStatus(t *testing.T, dir string) {
	t.Helper()
	if st := testgit.Git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("git status: %s", st)
	}
}

// Archive and Restore move entries with their IDs; Restore numbers as the
// archive's List does; one bad reference moves nothing.
func TestArchiveRestore(t *testing.T) {
	ctx := context.Background()
	m, dir := lifecycleRepo(t, Options{}, "one", "two", "three")
	all := mustList(t, m, View{})
	moved, err := m.Archive(ctx, "1", all[2].ID)
	if err != nil || ids(moved) != ids([]Entry{all[0], all[2]}) {
		t.Fatalf("archive: %v %v", ids(moved), err)
	}
	if a := mustList(t, m, View{Archive: true}); ids(a) != ids(moved) {
		t.Fatalf("archive holds %s", ids(a))
	}
	if _, err := m.Archive(ctx, "1", "9"); !errors.Is(err, memfile.ErrNotFound) {
		t.Fatalf("bad reference: %v", err)
	}
	if _, err := m.Restore(ctx, "zzzzzzzz"); !errors.Is(err, memfile.ErrNotFound) || !strings.Contains(err.Error(), "in the archive") {
		t.Fatalf("restore of nothing: %v", err)
	}
	if got := mustList(t, m, View{}); ids(got) != all[1].ID {
		t.Fatalf("active after a bad reference: %s", ids(got))
	}
	back, err := m.Restore(ctx, "2") // the archive's second entry: "three"
	if err != nil || ids(back) != all[2].ID || back[0].Content != "three" {
		t.Fatalf("restore 2: %+v %v", back, err)
	}
	if got := mustList(t, m, View{}); ids(got) != all[1].ID+" "+all[2].ID {
		t.Fatalf("active after restore: %s", ids(got))
	}
	cleanStatus(t, dir)
}

// GC archives past the max count, least recently used first; a dry run
// reports the same and changes nothing.
func TestGC(t *testing.T) {
	ctx := context.Background()
	m, dir := lifecycleRepo(t, Options{MaxEntries: new(1)}, "one", "two", "three")
	before, err := os.ReadFile(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	dry, err := m.GC(ctx, GCOptions{DryRun: true})
	if err != nil || !dry.DryRun || dry.MaxEntries != 1 || dry.TTLDays != 90 || len(dry.Moved) != 2 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if after, _ := os.ReadFile(m.Path()); string(after) != string(before) {
		t.Fatal("a dry run changed the memory")
	}
	res, err := m.GC(ctx, GCOptions{})
	if err != nil || res.DryRun || ids(res.Moved) != ids(dry.Moved) {
		t.Fatalf("gc: %+v %v, dry run said %s", res, err, ids(dry.Moved))
	}
	if a := mustList(t, m, View{Archive: true}); len(a) != 2 || len(mustList(t, m, View{})) != 1 {
		t.Fatalf("archive after gc: %s", ids(a))
	}
	cleanStatus(t, dir)
}

// Summary counts the session's view of both files, with sizes, limits and
// the damaged lines of the active file.
func TestSummary(t *testing.T) {
	ctx := context.Background()
	m, _ := lifecycleRepo(t, Options{Session: "s1"}, "one", "two", "three")
	if _, err := m.Add(ctx, Entry{Type: "decision", Tags: []string{"db"}, Content: "in s1"}); err != nil {
		t.Fatal(err)
	}
	other, err := Open(m.repo.WorkTree, Options{Session: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Add(ctx, Entry{Content: "in s2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Archive(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	s, err := m.Summary(ctx, SummaryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(m.Path())
	if s.Layer != "project" || s.Session != "s1" || s.Path != m.Path() || s.MaxBytes != store.DefaultMaxBytes ||
		s.MaxEntries != 1000 || s.TTLDays != 90 || s.Problems != 0 || s.Active == nil || s.Active.Entries != 3 ||
		s.Active.Types["pattern"] != 2 || s.Active.Types["decision"] != 1 || s.Active.Tags["db"] != 1 ||
		s.Active.Bytes != fi.Size() || s.Archive.Entries != 1 || s.Archive.Bytes == 0 {
		t.Fatalf("summary: %+v active %+v archive %+v", s, s.Active, s.Archive)
	}
	f, err := os.OpenFile(m.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("\n\xff\xfe not UTF-8\n")
	_ = f.Close()
	s, err = m.Summary(ctx, SummaryOptions{ArchiveOnly: true})
	if err != nil || s.Active != nil || s.Archive.Entries != 1 || s.Problems != 0 {
		t.Fatalf("archive only: %+v %v", s, err)
	}
	if s, err = m.Summary(ctx, SummaryOptions{}); err != nil || s.Problems == 0 {
		t.Fatalf("damaged file: %+v %v", s, err)
	}
}

// Promote copies to the global layer (same ID, a Promoted-From bullet) and
// archives the project copy.
func TestPromote(t *testing.T) {
	ctx := context.Background()
	m, dir := lifecycleRepo(t, Options{}, "one", "two")
	all := mustList(t, m, View{})
	got, err := m.Promote(ctx, "2")
	if err != nil || ids(got) != all[1].ID || got[0].Layer != "global" || got[0].Fields["Promoted-From"] != dir {
		t.Fatalf("promote: %+v %v", got, err)
	}
	g, err := Open("", Options{Global: true})
	if err != nil {
		t.Fatal(err)
	}
	if ge := mustList(t, g, View{}); ids(ge) != all[1].ID || ge[0].Content != "two" {
		t.Fatalf("global layer: %+v", ge)
	}
	if fi, err := os.Stat(g.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("global file: %v %v", fi.Mode(), err)
	}
	if a := mustList(t, m, View{Archive: true}); ids(a) != all[1].ID {
		t.Fatalf("project archive: %s", ids(a))
	}
	if _, err := g.Promote(ctx, "1"); err == nil {
		t.Fatal("promote from the global layer")
	}
	cleanStatus(t, dir)
}

// Import reads foreign layouts, archived ones to the archive; twice adds
// nothing; a source it cannot read is an ImportError and imports nothing.
func TestImport(t *testing.T) {
	ctx := context.Background()
	m, dir := lifecycleRepo(t, Options{}, "REST API uses RFC 7807 errors")
	src := filepath.Join(t.TempDir(), "memory")
	for name, text := range map[string]string{
		"deploy.md":          "---\nkey: deploy-steps\ntags: [ops]\n---\nDeploy with the blue/green script.\n",
		"dup.md":             "---\nkey: rest\n---\nREST API   uses rfc 7807 errors\n",
		"archive/logging.md": "---\nkey: logging\n---\n# Old logging choice\nWe used log4j once.\n",
	} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := m.Import(ctx, src)
	if err != nil || len(res.Added) != 2 || res.Archived != 1 || res.Skipped != 1 {
		t.Fatalf("import: %+v %v", res, err)
	}
	if a := mustList(t, m, View{Archive: true}); len(a) != 1 || a[0].Title != "Old logging choice" {
		t.Fatalf("archive: %+v", a)
	}
	if res, err = m.Import(ctx, src); err != nil || len(res.Added) != 0 || res.Skipped != 3 {
		t.Fatalf("twice: %+v %v", res, err)
	}
	missing := filepath.Join(dir, "nothing-here")
	var ie *ImportError
	if _, err := m.Import(ctx, src, missing); !errors.As(err, &ie) || ie.Path != missing {
		t.Fatalf("unreadable source: %v", err)
	}
	cleanStatus(t, dir)
}

// A worker is refused archive, restore, gc, promote and import before
// anything changes: the memory, its archive, the global layer and
// info/exclude keep their bytes. A dry-run gc is a read, allowed.
func TestWorkerRefusedLifecycle(t *testing.T) {
	ctx := context.Background()
	m, dir := lifecycleRepo(t, Options{Role: "worker", MaxEntries: new(1)}, "one", "two")
	owner, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Archive(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	exclude := filepath.Join(dir, ".git", "info", "exclude")
	if err := os.WriteFile(exclude, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "note.md")
	if err := os.WriteFile(src, []byte("---\nkey: k\n---\nimported\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	global, _ := globalDir()
	files := []string{m.Path(), m.ArchivePath(), exclude}
	read := func() []string {
		var out []string
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
		return out
	}
	before := read()
	refused := map[string]func() error{
		"archive": func() error { _, err := m.Archive(ctx, "1"); return err },
		"restore": func() error { _, err := m.Restore(ctx, "1"); return err },
		"gc":      func() error { _, err := m.GC(ctx, GCOptions{}); return err },
		"promote": func() error { _, err := m.Promote(ctx, "1"); return err },
		"import":  func() error { _, err := m.Import(ctx, src); return err },
	}
	for op, call := range refused {
		if err := call(); !errors.Is(err, policy.ErrRefused) {
			t.Errorf("worker %s: %v", op, err)
		}
	}
	if after := read(); strings.Join(after, "\x00") != strings.Join(before, "\x00") {
		t.Fatalf("a refused operation changed a file:\nbefore %q\nafter  %q", before, after)
	}
	if _, err := os.Stat(global); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused promote made the global layer: %v", err)
	}
	if res, err := m.GC(ctx, GCOptions{DryRun: true}); err != nil || len(res.Moved) != 0 {
		t.Fatalf("worker dry run: %+v %v", res, err)
	}
}
