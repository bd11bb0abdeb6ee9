package memsync

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// The state in the common git dir (content index, stamp, archived list,
// access log) is a cache. Whatever it holds — garbage, a truncated copy, the
// state of another memory, a stamp that matches the files over an index that
// does not — no add is lost, no add is skipped as a duplicate of content that
// is not stored, every reference returns the entry the files hold, and the
// state is rebuilt. Every result is checked against the memory files parsed
// directly.
func TestCorruptStateNeverLosesOrMisleads(t *testing.T) {
	testgit.Isolate(t)
	ctx := context.Background()
	// The other memory, whose state is copied over ours.
	other := t.TempDir()
	testgit.Git(t, other, "init", "-q")
	mo := openState(t, other)
	for i := 0; i < 6; i++ {
		mustAdd(t, mo, fmt.Sprintf("othermem fact %d about zebra%d", i, i))
	}
	if _, err := mo.Archive(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	otherState := stateDir(mo)

	for _, c := range corruptions() {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			testgit.Git(t, dir, "init", "-q")
			m := openState(t, dir)
			var ids []string
			for i := 0; i < 6; i++ {
				ids = append(ids, mustAdd(t, m, fmt.Sprintf("ourmem fact %d about walrus%d", i, i)).ID)
			}
			if _, err := m.Archive(ctx, ids[0]); err != nil {
				t.Fatal(err)
			}
			m.touch(ids[1], ids[2])
			c.corrupt(t, stateDir(m), otherState)

			// A fresh Open, as the next process would.
			m = openState(t, dir)
			check := func(step string) {
				t.Helper()
				checkTruth(t, m, step)
			}

			// Content of the other memory: it is not stored here.
			e := mustAdd(t, m, "othermem fact 2 about zebra2")
			if e.Duplicate != "" {
				t.Fatalf("content only the other memory holds was taken as a duplicate: %+v", e)
			}
			check("add other's content")
			wantStored(t, m, e.ID, "othermem fact 2 about zebra2", false)

			// New content.
			e = mustAdd(t, m, "brand new note about narwhals")
			if e.Duplicate != "" {
				t.Fatalf("new content taken as a duplicate: %+v", e)
			}
			wantStored(t, m, e.ID, "brand new note about narwhals", false)
			check("add new")

			// Content already stored, active and archived.
			e = mustAdd(t, m, "OURMEM fact 3   about walrus3")
			if e.Duplicate == "" {
				if !c.lyingIndex {
					t.Fatalf("stored content added again: %+v", e)
				}
			} else if e.ID != ids[3] || e.Duplicate != "active" {
				t.Fatalf("duplicate of %s reported as %+v", ids[3], e)
			}
			wantStored(t, m, e.ID, "OURMEM fact 3   about walrus3", false)
			check("add stored")
			e = mustAdd(t, m, "ourmem fact 0 about walrus0")
			if e.Duplicate == "" {
				if !c.lyingIndex {
					t.Fatalf("archived content added again: %+v", e)
				}
				wantStored(t, m, e.ID, "ourmem fact 0 about walrus0", false)
			} else if e.ID != ids[0] || e.Duplicate != "archive" {
				t.Fatalf("duplicate of archived %s reported as %+v", ids[0], e)
			} else {
				wantStored(t, m, e.ID, "ourmem fact 0 about walrus0", true)
			}
			check("add archived")

			// References: full ID and prefix return the entry the file holds.
			for _, ref := range []string{ids[4], ids[4][:len(ids[4])-1]} {
				got, err := m.Get(ctx, View{}, ref)
				if err != nil || len(got) != 1 || got[0].ID != ids[4] || got[0].Content != "ourmem fact 4 about walrus4" {
					t.Fatalf("get %s: %+v %v", ref, got, err)
				}
			}
			// Search finds the one entry with the word.
			hits, err := m.Search(ctx, "walrus5", SearchOptions{})
			if err != nil || len(hits) != 1 || hits[0].ID != ids[5] {
				t.Fatalf("search walrus5: %+v %v", hits, err)
			}
			if hits, _ := m.Search(ctx, "zebra4", SearchOptions{}); len(hits) != 0 {
				t.Fatalf("search found the other memory's entry: %+v", hits)
			}
			check("reads")

			// Delete, archive, restore.
			if del, err := m.Delete(ctx, ids[5]); err != nil || len(del) != 1 || del[0].ID != ids[5] {
				t.Fatalf("delete: %+v %v", del, err)
			}
			if _, ok := findIn(t, m.Path(), ids[5]); ok {
				t.Fatal("deleted entry still there")
			}
			check("delete")
			if got, err := m.Archive(ctx, ids[4]); err != nil || len(got) != 1 || got[0].ID != ids[4] {
				t.Fatalf("archive: %+v %v", got, err)
			}
			wantStored(t, m, ids[4], "ourmem fact 4 about walrus4", true)
			check("archive")
			if got, err := m.Restore(ctx, ids[4]); err != nil || len(got) != 1 || got[0].ID != ids[4] {
				t.Fatalf("restore: %+v %v", got, err)
			}
			wantStored(t, m, ids[4], "ourmem fact 4 about walrus4", false)
			check("restore")

			// The state rebuilt itself (or was kept right): stored content is
			// found again, and one index generation is left.
			if c.lyingIndex {
				return
			}
			e = mustAdd(t, m, "ourmem fact 2 about walrus2")
			if e.ID != ids[2] || e.Duplicate != "active" {
				t.Fatalf("after the operations, stored content not found by the index: %+v", e)
			}
			e = mustAdd(t, m, "brand new note about narwhals")
			if e.Duplicate != "active" {
				t.Fatalf("after the operations, an added entry not found by the index: %+v", e)
			}
			gens, _ := filepath.Glob(filepath.Join(stateDir(m), "index-*"))
			if len(gens) != 1 {
				t.Fatalf("index generations left in the state dir: %v", gens)
			}
			data, err := os.ReadFile(filepath.Join(stateDir(m), "stamp.json"))
			var v map[string]any
			if err != nil || json.Unmarshal(data, &v) != nil {
				t.Fatalf("stamp.json not rebuilt: %v %q", err, data)
			}
		})
	}
}

type corruption struct {
	name    string
	corrupt func(t *testing.T, state, otherState string)
	// lyingIndex: a stamp that matches the files over an index that does
	// not. Duplicates may then be stored twice (never lost, never wrong).
	lyingIndex bool
}

// corruptions are the ways the state is damaged: each state file replaced
// by garbage (short and longer than the stamp's fixed size), a truncated
// copy, the same file of another memory; the whole state of another memory;
// and a matching stamp over an index that lies.
func corruptions() []corruption {
	garbage := map[string][]byte{
		"garbage":      []byte("\x00\xff{not json at all\n\"gen\": -1}\nzz 0000\n"),
		"long-garbage": []byte(strings.Repeat("{\"gen\":1}garbage ", 80)),
		"empty":        nil,
	}
	var cs []corruption
	for _, file := range []string{"stamp.json", "access.log", "BUCKETS", "archived"} {
		for name, data := range garbage {
			cs = append(cs, corruption{name: file + "/" + name, corrupt: func(t *testing.T, state, _ string) {
				for _, p := range stateFiles(t, state, file) {
					writeFile(t, p, data)
				}
			}})
		}
		cs = append(cs, corruption{name: file + "/truncated", corrupt: func(t *testing.T, state, _ string) {
			for _, p := range stateFiles(t, state, file) {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, p, data[:len(data)/2])
			}
		}})
		cs = append(cs, corruption{name: file + "/other", corrupt: func(t *testing.T, state, otherState string) {
			var theirs []byte
			for _, p := range stateFiles(t, otherState, file) {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				theirs = append(theirs, data...)
			}
			for _, p := range stateFiles(t, state, file) {
				writeFile(t, p, theirs)
			}
		}})
	}
	cs = append(cs, corruption{name: "whole-state/other", corrupt: func(t *testing.T, state, otherState string) {
		if err := os.RemoveAll(state); err != nil {
			t.Fatal(err)
		}
		copyDir(t, otherState, state)
	}})
	// Stamps that match the files (sizes and mtimes are ours) over an index
	// that does not describe them.
	lie := func(name string, edit func(t *testing.T, state, otherState string, x map[string]any)) {
		cs = append(cs, corruption{name: "matching-stamp/" + name, lyingIndex: true, corrupt: func(t *testing.T, state, otherState string) {
			x := readJSON(t, filepath.Join(state, "stamp.json"))
			edit(t, state, otherState, x)
			data, err := json.Marshal(x)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(state, "stamp.json"), data)
		}})
	}
	lie("empty-index", func(t *testing.T, state, _ string, _ map[string]any) {
		for _, p := range stateFiles(t, state, "BUCKETS") {
			writeFile(t, p, nil)
		}
	})
	lie("other-index", func(t *testing.T, state, otherState string, x map[string]any) {
		ox := readJSON(t, filepath.Join(otherState, "stamp.json"))
		gen := fmt.Sprintf("index-v2-%s", ox["gen"])
		copyDir(t, filepath.Join(otherState, gen), filepath.Join(state, gen))
		x["gen"] = ox["gen"]
	})
	lie("missing-index", func(t *testing.T, _, _ string, x map[string]any) { x["gen"] = 12345 })
	lie("all-archived", func(t *testing.T, state, _ string, _ map[string]any) {
		var b strings.Builder
		for _, p := range stateFiles(t, state, "BUCKETS") {
			data, _ := os.ReadFile(p)
			for _, l := range strings.Split(string(data), "\n") {
				if _, id, ok := strings.Cut(l, " "); ok {
					b.WriteString(id + "\n")
				}
			}
		}
		writeFile(t, stateFiles(t, state, "archived")[0], []byte(b.String()))
	})
	lie("none-archived", func(t *testing.T, state, _ string, _ map[string]any) {
		writeFile(t, stateFiles(t, state, "archived")[0], nil)
	})
	lie("hostile-counts", func(t *testing.T, _, _ string, x map[string]any) {
		x["count"], x["archived"], x["last_gc"] = -5, 1<<40, int64(1)<<50
	})
	// An older memsync's stamp (no format) that matches the files, over its
	// index of two-digit buckets that holds nothing: not used, rebuilt.
	cs = append(cs, corruption{name: "format-1-stamp", corrupt: func(t *testing.T, state, _ string) {
		x := readJSON(t, filepath.Join(state, "stamp.json"))
		delete(x, "format")
		x["gen"] = 777
		old := filepath.Join(state, "index-777")
		if err := os.MkdirAll(old, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(old, "archived"), nil)
		for _, b := range []string{"00", "3f", "ff"} {
			writeFile(t, filepath.Join(old, b), []byte(strings.Repeat(b, 8)+" nothing\n"))
		}
		data, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(state, "stamp.json"), data)
	}})
	return cs
}

// stateFiles are the files of one kind in a state dir: "BUCKETS" are the
// index's hash buckets.
func stateFiles(t *testing.T, state, kind string) []string {
	t.Helper()
	switch kind {
	case "stamp.json", "access.log":
		return []string{filepath.Join(state, kind)}
	}
	gens, _ := filepath.Glob(filepath.Join(state, "index-*"))
	if len(gens) != 1 {
		t.Fatalf("want one index generation in %s, have %v", state, gens)
	}
	if kind == "archived" {
		return []string{filepath.Join(gens[0], "archived")}
	}
	all, _ := filepath.Glob(filepath.Join(gens[0], "?"))
	sort.Strings(all)
	return all
}

func stateDir(m *Memory) string { return filepath.Join(m.repo.CommonDir, "memsync", "state") }

func openState(t *testing.T, dir string) *Memory {
	t.Helper()
	m, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustAdd(t *testing.T, m *Memory, content string) Entry {
	t.Helper()
	e, err := m.Add(context.Background(), Entry{Content: content})
	if err != nil {
		t.Fatalf("add %q: %v", content, err)
	}
	return e
}

// truth parses a memory file directly.
func truth(t *testing.T, path string) *memfile.File {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return memfile.Parse(data)
}

func findIn(t *testing.T, path, id string) (memfile.Entry, bool) {
	t.Helper()
	for _, e := range truth(t, path).Entries {
		if e.ID == id {
			return e, true
		}
	}
	return memfile.Entry{}, false
}

// wantStored checks that the entry id holds content, in the archive or the
// active file, and in no other place.
func wantStored(t *testing.T, m *Memory, id, content string, archived bool) {
	t.Helper()
	in, out := m.Path(), m.ArchivePath()
	if archived {
		in, out = out, in
	}
	e, ok := findIn(t, in, id)
	if !ok || memfile.ContentHash(e.Content) != memfile.ContentHash(content) {
		t.Fatalf("entry %s with %q not in %s (found %v: %q)", id, content, in, ok, e.Content)
	}
	if _, ok := findIn(t, out, id); ok {
		t.Fatalf("entry %s also in %s", id, out)
	}
}

// checkTruth compares what List shows with the files: the same entries, and
// no ID twice.
func checkTruth(t *testing.T, m *Memory, step string) {
	t.Helper()
	for _, v := range []View{{}, {Archive: true}} {
		path := m.Path()
		if v.Archive {
			path = m.ArchivePath()
		}
		want := truth(t, path).Entries
		got, err := m.List(context.Background(), v)
		if err != nil {
			t.Fatalf("%s: list: %v", step, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: list shows %d entries, %s holds %d", step, len(got), path, len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID || got[i].Content != want[i].Content {
				t.Fatalf("%s: entry %d: %s %q, file: %s %q", step, i+1, got[i].ID, got[i].Content, want[i].ID, want[i].Content)
			}
		}
	}
	seen := map[string]bool{}
	for _, p := range []string{m.Path(), m.ArchivePath()} {
		for _, e := range truth(t, p).Entries {
			if seen[e.ID] {
				t.Fatalf("%s: ID %s stored twice", step, e.ID)
			}
			seen[e.ID] = true
		}
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	x := map[string]any{}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber() // gen is a UnixNano: more digits than a float64 keeps
	if err := dec.Decode(&x); err != nil {
		t.Fatal(err)
	}
	return x
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
