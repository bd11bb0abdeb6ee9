package memsync

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// Doctor reports a memory file whose last entry an append cut off (in
// orch's dialect and in ralph's) as a problem it can fix; with Fix it
// removes the torn entry, keeping the old file in a backup, and the next add
// lands whole. A file saved by hand without a final newline is ok.
func TestDoctorTornLastEntry(t *testing.T) {
	for _, c := range []struct {
		name, whole, torn string
		line              int
	}{
		{"orch", "# Memories\n\n## first\n- Tags:\n- Date: 2026-01-02\n- ID: aaaaaaaaaaaa\n- Content: one\n",
			"\n## second\n- Tags:\n- Date: 2026-01-02\n- ID: bbbbbbbbbbbb\n- Content: a lesson cut of", 9},
		{"ralph", "# Memories\n\n## Patterns\n\n### mem-1767225600-a1b2\n> one\n<!-- tags: a | created: 2026-01-02 -->\n",
			"\n### mem-1767225601-c3d4\n> a lesson\n<!-- tags: b | crea", 9},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, ctx := initedMemory(t)
			if err := os.WriteFile(m.Path(), []byte(c.whole+c.torn), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := m.Doctor(ctx, DoctorOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ch := checkOf(t, rep, "memory")
			if ch.Status != checkProblem || !ch.Fixable || !strings.Contains(ch.Detail, "torn") ||
				!strings.Contains(ch.Detail, "line "+strconv.Itoa(c.line)) || !strings.Contains(ch.Fix, "doctor --fix") {
				t.Fatalf("doctor on a torn file: %+v", ch)
			}
			if rep.OK {
				t.Fatal("doctor says OK")
			}

			rep, err = m.Doctor(ctx, DoctorOptions{Fix: true})
			if err != nil {
				t.Fatal(err)
			}
			ch = checkOf(t, rep, "memory")
			if ch.Status != checkFixed || ch.Backup == "" || !strings.Contains(ch.Detail, "removed the torn last entry") {
				t.Fatalf("doctor --fix on a torn file: %+v", ch)
			}
			if b, err := os.ReadFile(ch.Backup); err != nil || string(b) != c.whole+c.torn {
				t.Fatalf("backup %s holds %q (%v)", ch.Backup, b, err)
			}
			if b, _ := os.ReadFile(m.Path()); string(b) != c.whole+"\n" {
				t.Fatalf("after the fix the file is %q, want the whole entries", b)
			}
			if _, err := m.Add(ctx, Entry{Type: "pattern", Content: "added after the repair"}); err != nil {
				t.Fatal(err)
			}
			es, err := m.List(ctx, View{})
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != 2 || es[1].Content != "added after the repair" {
				t.Fatalf("after the repair and an add: %+v", es)
			}
			rep, err = m.Doctor(ctx, DoctorOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if ch := checkOf(t, rep, "memory"); ch.Status != checkOK {
				t.Fatalf("doctor after the repair: %+v", ch)
			}

			// Saved by hand without the final newline: whole, not torn.
			hand := strings.TrimSuffix(c.whole, "\n")
			if c.name == "orch" {
				hand = "# Memories\n\n## Pattern: by hand\n- Tags: x\n- Date: 2026-01-02\n- Content: no newline at the end"
			}
			if err := os.WriteFile(m.Path(), []byte(hand), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err = m.Doctor(ctx, DoctorOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if ch := checkOf(t, rep, "memory"); ch.Status != checkOK {
				t.Fatalf("doctor on a file saved without a final newline: %+v", ch)
			}
		})
	}
}
