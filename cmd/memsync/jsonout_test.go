package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memsync/memsync"
)

// encodingJSON is what memsync printed for entries before jsonout.go, and
// what it prints for every other shape: json.Encoder with SetIndent("", "  ").
func encodingJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sameJSON fails unless jsonout.go writes v as encoding/json does.
func sameJSON(t *testing.T, name string, v any) {
	t.Helper()
	var got bytes.Buffer
	var err error
	switch v := v.(type) {
	case []memsync.Entry:
		err = writeEntriesJSON(&got, v)
	case memsync.Entry:
		err = writeEntryJSON(&got, &v)
	}
	if err != nil {
		t.Fatal(err)
	}
	if want := encodingJSON(t, v); !bytes.Equal(got.Bytes(), want) {
		i := 0
		for i < min(got.Len(), len(want)) && got.Bytes()[i] == want[i] {
			i++
		}
		t.Fatalf("%s: differs from encoding/json at byte %d:\ngot  %q\nwant %q", name, i,
			got.Bytes()[max(0, i-40):min(got.Len(), i+40)], want[max(0, i-40):min(len(want), i+40)])
	}
}

// hostileStrings are strings encoding/json escapes: every control
// character, HTML's <>&, quotes and backslashes, invalid UTF-8, U+2028 and
// U+2029, and text that needs no escape.
func hostileStrings() []string {
	var ctl []byte
	for c := range 0x20 {
		ctl = append(ctl, byte(c))
	}
	return []string{"", string(ctl) + "\x7f", `<script>alert("x")</script> & \ \\ "q"`,
		"bad \xff\xfe utf-8 \xe2\x80 cut \xc3", "line\u2028sep\u2029para", "plain ascii", "ünïcödé 日本語 🎉",
		"\xed\xa0\x80 surrogate", "\ufffd real replacement", "tab\tnl\nret\r"}
}

// filled is a value of t with every field set (not zero), strings taken
// from strs in turn: an entry with every member encoding/json writes, so
// that a field added to memsync.Entry and not to jsonout.go fails the test.
func filled(t reflect.Type, strs []string, k *int) reflect.Value {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		*k++
		s := strs[*k%len(strs)]
		if s == "" {
			s = "x"
		}
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(7 + *k))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Float64:
		v.SetFloat(0.0123456789)
	case reflect.Pointer:
		v.Set(filled(t.Elem(), strs, k).Addr())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(t, 0, 2))
		for range 2 {
			v.Set(reflect.Append(v, filled(t.Elem(), strs, k)))
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		for range 3 {
			v.SetMapIndex(filled(t.Key(), strs, k), filled(t.Elem(), strs, k))
		}
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				v.Field(i).Set(filled(t.Field(i).Type, strs, k))
			}
		}
	default:
		panic("filled: a field of kind " + t.Kind().String() + ": teach jsonout.go and this test")
	}
	return v
}

// TestEntryJSONSameBytes: the entries jsonout.go writes are byte for byte
// what encoding/json wrote: entries with every field set, with hostile
// strings, random bytes, scores of every float format, nil and empty
// lists.
func TestEntryJSONSameBytes(t *testing.T) {
	strs := hostileStrings()
	var all []memsync.Entry
	for k := range len(strs) * 3 {
		all = append(all, filled(reflect.TypeFor[memsync.Entry](), strs, &k).Interface().(memsync.Entry))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 { // random bytes, often invalid UTF-8
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		s := string(b)
		score := r.NormFloat64() * []float64{1e-9, 1e-6, 1, 1e20, 1e22}[r.IntN(5)]
		all = append(all, memsync.Entry{ID: s, Title: s, Content: s + s, Tags: []string{s}, Fields: map[string]string{s: s, "K": s},
			Provenance: &memsync.Provenance{Author: s}, Citations: []memsync.Citation{{Path: s, Start: r.IntN(3)}}, Score: &score, Similar: []string{s}})
	}
	zero, tiny, huge := 0.0, 1e-7, 2e21
	all = append(all, memsync.Entry{}, memsync.Entry{Tags: []string{}, Fields: map[string]string{}, Provenance: &memsync.Provenance{}, Citations: []memsync.Citation{}, Similar: []string{}},
		memsync.Entry{Score: &zero}, memsync.Entry{Score: &tiny}, memsync.Entry{Score: &huge})
	for i, e := range all {
		sameJSON(t, "entry "+string(rune('0'+i%10)), e)
	}
	sameJSON(t, "all", all)
	sameJSON(t, "nil list", []memsync.Entry(nil))
	sameJSON(t, "empty list", []memsync.Entry{})
}

// TestListJSONSameBytes: `memsync list --json` and `search --json`, the
// real binary on the real memory files of the test data (orch's and
// ralph's) and on a file of hostile entries, print the bytes encoding/json
// prints for the entries the Go API returns.
func TestListJSONSameBytes(t *testing.T) {
	env := testGitEnv(t)
	t.Setenv("MEMSYNC_GLOBAL_DIR", t.TempDir())
	env = append(env, "MEMSYNC_GLOBAL_DIR="+os.Getenv("MEMSYNC_GLOBAL_DIR"))
	files := []string{"../../memfile/testdata/ralph-orchestrator.md", "../../memfile/testdata/ralph-pi-mono.md",
		"../../memfile/testdata/ralph-woocommerce.md", "../../internal/recall/testdata/retrieval/memories.md"}
	var hostile bytes.Buffer
	hostile.WriteString("# Memories\n")
	for i, s := range hostileStrings() {
		if s == "" {
			continue
		}
		// Entries a clone may carry: the parser keeps what it can read.
		hostile.WriteString("\n## Pattern: " + s + "\n- Tags: a<b, c&d\n- Date: 2026-01-0" + string(rune('1'+i%9)) + "\n- Content: " + s + "\n")
	}
	hostilePath := filepath.Join(t.TempDir(), "hostile.md")
	if err := os.WriteFile(hostilePath, hostile.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, hostilePath)
	ctx := context.Background()
	for _, src := range files {
		t.Run(filepath.Base(src), func(t *testing.T) {
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			repo := newRepo(t, env)
			mem := filepath.Join(repo, ".agent", "memories.md")
			if bytes.Contains(data, []byte("### mem-")) { // ralph's file, at ralph's path
				mem = filepath.Join(repo, ".ralph", "agent", "memories.md")
			}
			if err := os.MkdirAll(filepath.Dir(mem), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(mem, data, 0o644); err != nil {
				t.Fatal(err)
			}
			memsyncOut(t, env, repo, "list") // settles what the first command records
			m, err := memsync.Open(repo, memsync.Options{})
			if err != nil {
				t.Fatal(err)
			}
			entries, err := m.List(ctx, memsync.View{})
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) == 0 {
				t.Fatalf("%d entries read from %s", len(entries), src)
			}
			got, _ := memsyncOut(t, env, repo, "list", "--json")
			if want := encodingJSON(t, entries); got != string(want) {
				t.Fatalf("list --json differs from encoding/json:\ngot  %.300q\nwant %.300q", got, want)
			}
			hits, err := m.Search(ctx, "test build error", memsync.SearchOptions{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			got, _ = memsyncOut(t, env, repo, "search", "test build error", "--limit", "10", "--json")
			if want := encodingJSON(t, hits); got != string(want) {
				t.Fatalf("search --json differs from encoding/json:\ngot  %.300q\nwant %.300q", got, want)
			}
		})
	}
}
