package searchidx

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/inject"
	"github.com/memsync/memsync/internal/recall"
	"github.com/memsync/memsync/memfile"
)

// files are memory files to index: generated orch ones, ralph's real ones,
// an orch file without ID lines (IDs derived, some identical entries).
func files(t testing.TB) map[string][]byte {
	out := map[string][]byte{
		"generated":  memfile.GenerateFile(600<<10, 5),
		"no-ids":     []byte("# Memories\n\n## Pattern: Retry\n- Tags: net\n- Content: retry with backoff\n\n## Same\n- Content: x\n\n## Same\n- Content: x\n\n## Fix: Timeout\n- Content: raise the CI timeout\n"),
		"title-only": []byte("# Memories\n\n## Patterns\n\n## Fix: x\n- ID: a1\n- Content: retry\n"),
	}
	real, _ := filepath.Glob("../../memfile/testdata/*.md")
	for _, p := range real {
		if strings.HasSuffix(p, "PROVENANCE.md") {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = data
	}
	return out
}

// queries are searches over f: words of its entries alone and in pairs,
// with and without filters and limits, and the long-prompt form inject uses.
func queries(f *memfile.File, n int) []struct {
	q    string
	opts recall.Options
} {
	r := rand.New(rand.NewPCG(1, uint64(len(f.Entries))))
	if len(f.Entries) == 0 {
		return nil
	}
	var words []string
	for i := range f.Entries {
		words = append(words, strings.Fields(f.Entries[i].Title+" "+f.Entries[i].Content)...)
	}
	words = append(words, "zzqx", "onn", "the", "retry", "Retries", "max_conns", "")
	var out []struct {
		q    string
		opts recall.Options
	}
	for range n {
		var q []string
		for range 1 + r.IntN(3) {
			q = append(q, words[r.IntN(len(words))])
		}
		var o recall.Options
		switch r.IntN(6) {
		case 0:
			o.Limit = 10
		case 1:
			o.Type = f.Entries[r.IntN(len(f.Entries))].Type
		case 2:
			if tags := f.Entries[r.IntN(len(f.Entries))].Tags; len(tags) > 0 {
				o.Tags = tags[:1]
				o.AnyTags = tags
			}
		case 3:
			for range 12 {
				q = append(q, words[r.IntN(len(words))])
			}
			o.Keywords, o.MaxTerms, o.Limit = true, 8, r.IntN(30)
		}
		out = append(out, struct {
			q    string
			opts recall.Options
		}{strings.Join(q, " "), o})
	}
	return out
}

// TestIndexRanksAsSearch: every query ranked from the index gives the hits,
// order and scores (to the bit) of recall.Search over the parsed file,
// with the file as indexed and with entries appended after the index was
// built; the entries read alone are the parsed ones.
func TestIndexRanksAsSearch(t *testing.T) {
	for name, data := range files(t) {
		raw, ok := Build(data)
		if !ok {
			t.Fatalf("%s: no index", name)
		}
		appended := append(slices.Clip(data), []byte("\n## Fix: Retry storms\n- Tags: net, retry\n- ID: zz9\n- Content: cap retries at 3 with jitter\n")...)
		if memfile.Parse(data).Dialect == memfile.Ralph {
			appended = append(slices.Clip(data), []byte("\n### mem-1769000000-beef\n> cap retries at 3 with jitter\n<!-- tags: net, retry | created: 2026-01-21 -->\n")...)
		}
		for _, file := range [][]byte{data, appended} {
			ix, err := Decode(raw, file)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			f := memfile.Parse(file)
			if ix.Len() != len(f.Entries) {
				t.Fatalf("%s: index has %d entries, the file %d", name, ix.Len(), len(f.Entries))
			}
			docs := make([]recall.Doc, len(f.Entries))
			for i := range f.Entries {
				docs[i] = inject.Doc(&f.Entries[i])
				e, ok := ix.Entry(i)
				if !ok || e.ID != f.Entries[i].ID || e.Content != f.Entries[i].Content || e.Title != f.Entries[i].Title || e.Line != f.Entries[i].Line {
					t.Fatalf("%s: entry %d read alone: %+v, %v; parsed %+v", name, i, e, ok, f.Entries[i])
				}
			}
			answered := 0
			for _, c := range queries(f, 400) {
				want := recall.Search(docs, c.q, c.opts)
				got, ok := recall.SearchIndexed(ix, nil, c.q, c.opts)
				if !ok {
					continue
				}
				answered++
				if !slices.Equal(got, want) {
					t.Fatalf("%s: query %q %+v:\nindex  %v\nsearch %v", name, c.q, c.opts, got, want)
				}
			}
			if answered < 100 && len(f.Entries) > 100 {
				t.Fatalf("%s: the index answered %d of 400 queries", name, answered)
			}
		}
	}
}

// TestIndexRefusesOtherFiles: an index is used only for the file it was
// built from, or that file with entries appended; any other change, a
// damaged index, and a file with damage get none.
func TestIndexRefusesOtherFiles(t *testing.T) {
	data := memfile.GenerateFile(64<<10, 9)
	raw, _ := Build(data)
	edited := bytes.Replace(data, []byte("Content: "), []byte("Content:_"), 1) // same size
	for name, file := range map[string][]byte{
		"edited":      edited,
		"truncated":   data[:len(data)-10],
		"shorter":     data[:len(data)/2],
		"appendstray": append(slices.Clip(data), "  continued last line\n"...),
		"dup-id":      append(slices.Clip(data), fmt.Sprintf("\n## X\n- ID: %s\n- Content: y\n", memfile.Parse(data).Entries[3].ID)...),
		"derived-id":  append(slices.Clip(data), "\n## X\n- Content: y\n"...),
		"conflict":    append(slices.Clip(data), "\n<<<<<<< HEAD\n"...),
	} {
		if _, err := Decode(raw, file); err == nil {
			t.Errorf("%s: index used", name)
		}
	}
	for i := range raw {
		bad := slices.Clone(raw)
		bad[i] ^= 0x20
		if _, err := Decode(bad, data); err == nil {
			t.Fatalf("index with byte %d changed used", i)
		}
		if i > 4096 {
			break
		}
	}
	for _, bad := range []string{"# M\n\n## A\n- Content: \x00\n", "# M\r\n\r\n## A\r\n", "## A\n- ID: x\n\n## B\n- ID: x\n"} {
		if _, ok := Build([]byte(bad)); ok {
			t.Errorf("index built for %q", bad)
		}
	}
}

// FuzzDecode: any bytes as an index file are refused or decoded without a
// panic, within bounded time and memory, and an index that decodes answers
// queries without a panic.
func FuzzDecode(f *testing.F) {
	data := memfile.GenerateFile(8<<10, 2)
	raw, _ := Build(data)
	f.Add(raw)
	f.Add(raw[:len(raw)/2])
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, raw []byte) {
		start := time.Now()
		ix, err := Decode(raw, data)
		if err == nil {
			for _, q := range []string{"retry", "the timeout", "zz"} {
				recall.SearchIndexed(ix, nil, q, recall.Options{Type: "fix", Limit: 3})
			}
			for i := range ix.Len() {
				ix.Entry(i)
			}
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("took %v", d)
		}
	})
}

// FuzzDecodeFixed: a valid index whose header or tables were changed and
// whose checksums were then fixed up (as a hostile writer would) is
// decoded within bounds: never a panic, never an allocation past the file.
func FuzzDecodeFixed(f *testing.F) {
	data := memfile.GenerateFile(8<<10, 2)
	raw, _ := Build(data)
	f.Add(uint16(30), byte(0xff))
	f.Add(uint16(200), byte(1))
	f.Fuzz(func(t *testing.T, at uint16, v byte) {
		bad := slices.Clone(raw)
		bad[int(at)%len(bad)] ^= v
		fixChecksums(bad)
		ix, err := Decode(bad, data)
		if err != nil {
			return
		}
		for _, q := range []string{"retry", "the timeout", "zz"} {
			recall.SearchIndexed(ix, nil, q, recall.Options{Type: "fix", Limit: 3})
			recall.SearchIndexed(ix, nil, q, recall.Options{Keywords: true, MaxTerms: 1})
		}
		for i := range ix.Len() {
			ix.Entry(i)
		}
	})
}

// fixChecksums recomputes the checksums of an index file's bytes in place,
// where its header still says where they are.
func fixChecksums(b []byte) {
	if len(b) < headerSize {
		return
	}
	h := make([]uint64, headerWords)
	for i := range h {
		h[i] = binary.LittleEndian.Uint64(b[len(magic)+8*i:])
	}
	if h[hMeta] <= uint64(len(b)) {
		h[hMetaCRC] = uint64(checksum(b[h[hMeta]:]))
		binary.LittleEndian.PutUint64(b[len(magic)+8*hMetaCRC:], h[hMetaCRC])
	}
	if h[hSections] <= h[hPostings] && h[hPostings] <= uint64(len(b)) {
		binary.LittleEndian.PutUint64(b[len(magic):], uint64(tablesCRC(b, h)))
	}
}

// withFields is a generated file whose entries carry, here and there, the
// fields inject's filters read, and old and new dates.
func withFields() []byte {
	f := memfile.Parse(memfile.GenerateFile(200<<10, 11))
	for i := range f.Entries {
		e := &f.Entries[i]
		switch i % 7 {
		case 1:
			e.SetField("Session", []string{"s1", "s2"}[i%2])
		case 2:
			e.SetField(memfile.SupersededByField, "zzzz")
		case 3:
			e.SetField(memfile.CitesField, "main.go:3")
		case 4:
			e.Date = "2020-01-01"
		case 5:
			for k := range 100 {
				e.Tags = append(e.Tags, fmt.Sprintf("t%d", k))
			}
		}
	}
	return f.Render()
}

// TestIndexInjectsAsFile: inject chooses from the index the entries, in
// the order, with the block it chooses from the parsed file, whatever the
// query, budget, filter, session view and stale marks.
func TestIndexInjectsAsFile(t *testing.T) {
	data := withFields()
	raw, ok := Build(data)
	if !ok {
		t.Fatal("no index")
	}
	appended := append(slices.Clip(data), []byte("\n## Fix: Retry storms\n- Tags: net, retry\n- ID: zz9\n- Session: s1\n- Content: cap retries at 3 with jitter\n")...)
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	answered := 0
	defer func() {
		if answered < 200 {
			t.Errorf("the index answered %d of 300 selections", answered)
		}
	}()
	for _, file := range [][]byte{data, appended} {
		f := memfile.Parse(file)
		ix, err := Decode(raw, file)
		if err != nil {
			t.Fatal(err)
		}
		for k, c := range queries(f, 150) {
			opts := inject.Options{Query: c.q, Budget: []int{0, 300, 2000 * 4, 40}[k%4], Now: now, User: "a@x"}
			if k%3 == 0 {
				session := []string{"s1", "s2"}[k%2]
				opts.Keep = func(e *memfile.Entry) bool {
					return memfile.Visible(e, session) && e.Field(memfile.SupersededByField) == ""
				}
			}
			if k%5 == 0 {
				opts.Stale = func(e *memfile.Entry) string {
					if e.Field(memfile.CitesField) != "" {
						return "main.go changed"
					}
					return ""
				}
			}
			if k%4 == 1 {
				opts.Filter.Types, opts.Filter.RecentDays = []string{"fix", "pattern"}, 400
			}
			if k%6 == 2 && len(c.opts.Tags) > 0 {
				opts.Filter.Tags = c.opts.Tags
			}
			want := inject.Select(f, opts)
			got, ok := inject.SelectFrom(ix.Entries(), opts)
			if !ok {
				continue
			}
			answered++
			if got.Block != want.Block || !slices.Equal(got.Chosen, want.Chosen) || got.Omitted != want.Omitted || got.Filtered != want.Filtered {
				t.Fatalf("query %q %+v:\nindex %v %d %d\nfile  %v %d %d\n%s\n---\n%s", c.q, opts.Filter, got.Chosen, got.Omitted, got.Filtered, want.Chosen, want.Omitted, want.Filtered, got.Block, want.Block)
			}
		}
	}
}

// TestBuildFrom: an index built from the previous one after a rewrite (a
// delete, an edit, entries moved, appended or the same file) is the one
// Build makes, byte for byte, and counts the terms only of the entries
// that changed.
func TestBuildFrom(t *testing.T) {
	for name, data := range files(t) {
		raw, _ := Build(data)
		old, err := Decode(raw, data)
		if err != nil {
			t.Fatal(err)
		}
		f := memfile.Parse(data)
		n := len(f.Entries)
		variants := map[string]*memfile.File{}
		del := memfile.Parse(data)
		del.Entries = slices.Delete(del.Entries, n/3, n/3+1)
		variants["delete"] = del
		edit := memfile.Parse(data)
		edit.Entries[n/2].Content += " edited retry"
		variants["edit"] = edit
		moved := memfile.Parse(data)
		if n > 2 {
			moved.Entries[0], moved.Entries[n-1] = moved.Entries[n-1], moved.Entries[0]
		}
		variants["moved"] = moved
		variants["same"] = memfile.Parse(data)
		// What a sync does: the oldest archived, new entries appended, and
		// new ones between old ones; every entry moved.
		fresh := memfile.Parse(memfile.GenerateFile(8<<10, 77)).Entries
		synced := memfile.Parse(data)
		synced.Entries = append(synced.Entries[n/4:], fresh[:len(fresh)/2]...)
		synced.Entries = slices.Insert(synced.Entries, len(synced.Entries)/3, fresh[len(fresh)/2:]...)
		variants["synced"] = synced
		reversed := memfile.Parse(data)
		slices.Reverse(reversed.Entries)
		reversed.Entries = append(reversed.Entries, fresh...)
		variants["reversed"] = reversed
		// An old index whose postings are damaged (its tables are not):
		// every entry is counted anew.
		bad := slices.Clone(raw)
		ph := binary.LittleEndian.Uint64(bad[len(magic)+8*hPostings:])
		if ph < uint64(len(bad)) && binary.LittleEndian.Uint64(bad[len(magic)+8*hMeta:]) > ph {
			bad[ph] ^= 0xff
			if damaged, err := Decode(bad, data); err == nil {
				if got, ok := BuildFrom(damaged, data); !ok || !bytes.Equal(got, raw) {
					t.Fatalf("%s: BuildFrom over damaged postings differs from Build", name)
				}
			}
		}
		for v, nf := range variants {
			next := nf.Render()
			want, ok := Build(next)
			if !ok {
				continue
			}
			got, ok := BuildFrom(old, next)
			if !ok || !bytes.Equal(got, want) {
				t.Fatalf("%s, %s: BuildFrom differs from Build (ok %v, %d bytes, %d)", name, v, ok, len(got), len(want))
			}
		}
	}
}

// TestLoad: Load builds and saves the index with its stamp, reads it back
// while the file is as stamped, follows an append that Appended recorded,
// and remembers a file that gets no index.
func TestLoad(t *testing.T) {
	dir, path := t.TempDir(), filepath.Join(t.TempDir(), "memories.md")
	data := memfile.GenerateFile(32<<10, 4)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	n := len(memfile.Parse(data).Entries)
	load := func() *Index {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		ix, err := Load(dir, f, 0o644, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	if ix := load(); ix == nil || ix.Len() != n {
		t.Fatalf("first load: %v", ix)
	}
	built, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if ix := load(); ix == nil || ix.Len() != n {
		t.Fatal("second load")
	}
	// An append by memsync, with the stamp moved along.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := f.Stat()
	if _, err := f.WriteString("\n## Fix: x\n- ID: tail1\n- Content: appended quokka\n"); err != nil {
		t.Fatal(err)
	}
	after, _ := f.Stat()
	Appended(dir, f, before, after)
	_ = f.Close()
	if s, ok := readStamp(dir); !ok || !s.names(after) {
		t.Fatal("Appended did not move the stamp")
	}
	ix := load()
	if ix == nil || ix.Len() != n+1 {
		t.Fatalf("after the append: %v", ix)
	}
	if e, ok := ix.Entry(n); !ok || e.Content != "appended quokka" {
		t.Fatalf("appended entry: %+v", e)
	}
	if again, _ := os.Stat(filepath.Join(dir, FileName)); !os.SameFile(built, again) {
		t.Fatal("the index was built again for an append")
	}
	// A file with damage gets none, and the stamp says so.
	if err := os.WriteFile(path, append(slices.Clip(data), "\n## Bad\n- Content: \x00\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if ix := load(); ix != nil {
		t.Fatal("an index for a damaged file")
	}
	if s, ok := readStamp(dir); !ok || !s.none {
		t.Fatal("the stamp does not say the file gets no index")
	}
	if ix := load(); ix != nil {
		t.Fatal("an index for a damaged file")
	}
}

// TestLoadHostile: an index file that is garbage, huge, a link or a valid
// index of another file, and a stamp that is garbage, are ignored: Load
// builds the index of the file anew, quickly and within bounded memory.
func TestLoadHostile(t *testing.T) {
	data := memfile.GenerateFile(32<<10, 6)
	n := len(memfile.Parse(data).Entries)
	other, _ := Build(memfile.GenerateFile(32<<10, 7))
	for name, plant := range map[string]func(idx, stamp string) error{
		"garbage": func(idx, stamp string) error {
			_ = os.WriteFile(stamp, bytes.Repeat([]byte{0xff}, stampSize), 0o644)
			return os.WriteFile(idx, bytes.Repeat([]byte("memsync search index 4\n"), 1000), 0o644)
		},
		"huge": func(idx, _ string) error {
			f, err := os.Create(idx)
			if err != nil {
				return err
			}
			defer func() { _ = f.Close() }()
			if _, err := f.WriteString(magic); err != nil {
				return err
			}
			return f.Truncate(8 << 30) // sparse: 8 GiB that are not there
		},
		"link":  func(idx, _ string) error { return os.Symlink("/dev/zero", idx) },
		"other": func(idx, _ string) error { return os.WriteFile(idx, other, 0o644) },
	} {
		dir := t.TempDir()
		path := filepath.Join(t.TempDir(), "memories.md")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := plant(filepath.Join(dir, FileName), filepath.Join(dir, StampName)); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ix, err := Load(dir, f, 0o644, 0o755)
		if err != nil || ix == nil || ix.Len() != n {
			t.Fatalf("%s: %v %v", name, ix, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%s: took %v", name, d)
		}
		_ = ix.Close()
		_ = f.Close()
		built, err := openBase(filepath.Join(dir, FileName), maxIndex(int64(len(data))))
		if err != nil || !built.covers(data) {
			t.Fatalf("%s: the index was not built again: %v", name, err)
		}
		_ = built.Close()
	}
}

// TestIndexRanksEvalSet: the retrieval evaluation's 91 queries over its 305
// memories (internal/recall/testdata/retrieval) rank from the index exactly
// as recall.Search ranks them, as search asks (limit 10) and as inject asks
// (keywords, at most 8 terms), so its figures are the index's too.
func TestIndexRanksEvalSet(t *testing.T) {
	data, err := os.ReadFile("../recall/testdata/retrieval/memories.md")
	if err != nil {
		t.Fatal(err)
	}
	raw, ok := Build(data)
	if !ok {
		t.Fatal("no index")
	}
	ix, err := Decode(raw, data)
	if err != nil {
		t.Fatal(err)
	}
	f := memfile.Parse(data)
	docs := make([]recall.Doc, len(f.Entries))
	for i := range f.Entries {
		docs[i] = inject.Doc(&f.Entries[i])
	}
	tsv, err := os.ReadFile("../recall/testdata/retrieval/queries.tsv")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(tsv), "\n") {
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		for _, opts := range []recall.Options{{Limit: 10}, {Keywords: true, MaxTerms: 8}} {
			want := recall.Search(docs, parts[2], opts)
			got, ok := recall.SearchIndexed(ix, nil, parts[2], opts)
			if !ok || !slices.Equal(got, want) {
				t.Fatalf("%q %+v: index %v (%v)\nsearch %v", parts[2], opts, got, ok, want)
			}
		}
	}
	if n != 91 {
		t.Fatalf("%d queries", n)
	}
}

// TestIndexTailRepeatsID: entries appended after the part an index covers
// are taken as its tail unless one repeats an ID, of an indexed entry or
// of another appended one (the whole file's parse would report it): then
// the index does not answer for the file, and it is built again.
func TestIndexTailRepeatsID(t *testing.T) {
	data := memfile.GenerateFile(200<<10, 9)
	raw, ok := Build(data)
	if !ok {
		t.Fatal("no index")
	}
	f := memfile.Parse(data)
	entry := func(id string) string {
		return "\n## Fix: Retry storms\n- Tags: net\n- ID: " + id + "\n- Content: cap retries at 3 with jitter\n"
	}
	for _, tc := range []struct {
		name, tail string
		ok         bool
	}{
		{"new IDs", entry("zz9a") + entry("zz9b"), true},
		{"an indexed ID", entry("zz9a") + entry(f.Entries[len(f.Entries)/2].ID), false},
		{"the first indexed ID", entry(f.Entries[0].ID), false},
		{"one ID twice in the tail", entry("zz9a") + entry("zz9a"), false},
	} {
		_, err := Decode(raw, append(slices.Clip(data), tc.tail...))
		if (err == nil) != tc.ok {
			t.Errorf("%s: Decode: %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
