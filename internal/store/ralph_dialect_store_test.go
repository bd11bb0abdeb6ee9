package store

import (
	"fmt"
	"github.com/memsync/memsync/memfile"
	"os"
	"strings"
	"testing"
	"time"
)

// ralphFile is a ralph-dialect memory as ralph's template writes it, with one
// entry.
const ralphFile = "# Memories\n\n## Patterns\n\n### mem-1770245557-134c\n> Kiro image support.\n<!-- tags: kiro | created: 2026-02-04 -->\n\n## Decisions\n\n## Fixes\n\n## Context\n"

// Under the lock, an appended ralph ID is one no entry of the file has: with
// every other suffix of this second taken, the one left is chosen (issue 12:
// a duplicate was issued in a concurrent run, and ralph's delete removes
// every entry with that ID).
func TestRalphIDUniqueInFile(t *testing.T) {
	s := newStore(t)
	now := time.Unix(1770245557, 0)
	s.Now = func() time.Time { return now }
	_ = os.MkdirAll(s.Home, 0o755)
	var b strings.Builder
	b.WriteString("# Memories\n\n## Patterns\n\n## Decisions\n\n## Fixes\n\n## Context\n")
	for i := range 1 << 16 {
		if i%4 != 0 { // three in four suffixes of this second are taken
			fmt.Fprintf(&b, "\n### mem-%d-%04x\n> e%d\n<!-- tags:  | created: 2026-02-04 -->\n", now.Unix(), i, i)
		}
	}
	if err := os.WriteFile(s.Path(), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := s.Append(s.NewEntry("context", "", fmt.Sprintf("new one %d", i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Problems) != 0 || len(f.Entries) != 3<<14+20 {
		t.Fatalf("%d entries, problems %v", len(f.Entries), f.Problems)
	}
}

// memsync import into a ralph file writes ralph's IDs; the source ID stays
// readable as a tag and names the entry.
func TestImportIntoRalphConvertsIDs(t *testing.T) {
	s := newStore(t)
	_ = os.MkdirAll(s.Home, 0o755)
	_ = os.WriteFile(s.Path(), []byte(ralphFile), 0o644)
	in := []memfile.Entry{{ID: "7xf8mmx0v8xc", Type: "solution", Title: "Own title", Date: "2026-01-02", Content: "imported one"},
		{ID: "8yg9nny1w9yd", Type: "pattern", Date: "2026-01-03T10:00:00Z", Content: "imported two"}}
	added, _, err := s.Import(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.Path())
	if strings.Contains(string(data), "### 7xf8") || strings.Contains(string(data), "### 8yg9") {
		t.Fatalf("orch heading in a ralph file:\n%s", data)
	}
	f := memfile.Parse(data)
	for i, a := range added {
		if !memfile.ValidRalphID(a.ID) {
			t.Fatalf("added with ID %s", a.ID)
		}
		k, err := f.Find(in[i].ID)
		if err != nil || f.Entries[k].ID != a.ID || f.Entries[k].Field(memfile.SourceIDField) != in[i].ID {
			t.Fatalf("source ID %s: %v %+v", in[i].ID, err, f.Entries)
		}
		if g := f.Entries[k]; g.Type != in[i].Type || g.Date != in[i].Date || g.Content != in[i].Content {
			t.Fatalf("read back %#v", g)
		}
	}
	if !strings.Contains(string(data), "source-id:7xf8mmx0v8xc") || !strings.Contains(string(data), "title:Own title") {
		t.Fatalf("%s", data)
	}
	// Importing again adds nothing.
	if again, skipped, err := s.Import(in, nil); err != nil || len(again) != 0 || skipped != 2 {
		t.Fatalf("again: %v %d %v", again, skipped, err)
	}
}

// A user tag that would read back as one of memsync's fields is refused in
// ralph's dialect, with the reason.
func TestRalphReservedTagRefused(t *testing.T) {
	s := newStore(t)
	_ = os.MkdirAll(s.Home, 0o755)
	_ = os.WriteFile(s.Path(), []byte(ralphFile), 0o644)
	if _, err := s.Append(s.NewEntry("fix", "", "x", []string{"key:k"})); err == nil || !strings.Contains(err.Error(), "key:") {
		t.Fatalf("err %v", err)
	}
}

// RalphBenchFile is a ralph-dialect memory of about size bytes, and the type
// of its last section.
func ralphBenchFile(size int) ([]byte, string) {
	f := memfile.Parse(memfile.GenerateFile(size, 1))
	f.Dialect = memfile.Ralph
	f.ConvertDialect()
	data := f.Render()
	last, _ := memfile.RalphLastSection(data)
	return data, memfile.RalphType(last)
}

// BenchmarkRalphAppend1MB: an add to a 1 MB ralph file where the file's last
// section is the entry's (an O(1) append) and where it is not (one atomic
// rewrite).
func BenchmarkRalphAppend1MB(b *testing.B) {
	data, last := ralphBenchFile(1 << 20)
	other := "pattern"
	if last == "pattern" {
		other = "decision"
	}
	for _, c := range []struct{ name, typ string }{{"last-section", last}, {"other-section", other}} {
		b.Run(c.name, func(b *testing.B) {
			s := &Store{Home: b.TempDir(), MaxBytes: 1 << 40}
			if err := os.WriteFile(s.Path(), data, 0o644); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				if _, err := s.Append(s.NewEntry(c.typ, "", fmt.Sprintf("a learning of typical length about retries, number %d", i), nil)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
