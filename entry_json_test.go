package memsync

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// encodingJSON is what json.Encoder with SetIndent("", "  ") writes for v.
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

// sameJSON fails unless WriteEntriesJSON or WriteJSON writes v as encoding/json does.
func sameJSON(t *testing.T, name string, v any) {
	t.Helper()
	var got bytes.Buffer
	var err error
	switch v := v.(type) {
	case []Entry:
		err = WriteEntriesJSON(&got, v)
	case Entry:
		err = v.WriteJSON(&got)
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
// that a field added to Entry and not to entry_json.go fails the test.
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
		panic("filled: a field of kind " + t.Kind().String() + ": teach entry_json.go and this test")
	}
	return v
}

// TestEntryJSONSameBytes: the entries entry_json.go writes are byte for byte
// what encoding/json wrote: entries with every field set, with hostile
// strings, random bytes, scores of every float format, nil and empty
// lists.
func TestEntryJSONSameBytes(t *testing.T) {
	strs := hostileStrings()
	var all []Entry
	for k := range len(strs) * 3 {
		all = append(all, filled(reflect.TypeFor[Entry](), strs, &k).Interface().(Entry))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 { // random bytes, often invalid UTF-8
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		s := string(b)
		score := r.NormFloat64() * []float64{1e-9, 1e-6, 1, 1e20, 1e22}[r.IntN(5)]
		all = append(all, Entry{ID: s, Title: s, Content: s + s, Tags: []string{s}, Fields: map[string]string{s: s, "K": s},
			Provenance: &Provenance{Author: s}, Citations: []Citation{{Path: s, Start: r.IntN(3)}}, Score: &score, Similar: []string{s}})
	}
	zero, tiny, huge := 0.0, 1e-7, 2e21
	all = append(all, Entry{}, Entry{Tags: []string{}, Fields: map[string]string{}, Provenance: &Provenance{}, Citations: []Citation{}, Similar: []string{}},
		Entry{Score: &zero}, Entry{Score: &tiny}, Entry{Score: &huge})
	for i, e := range all {
		sameJSON(t, "entry "+string(rune('0'+i%10)), e)
	}
	sameJSON(t, "all", all)
	sameJSON(t, "nil list", []Entry(nil))
	sameJSON(t, "empty list", []Entry{})
}

// BenchmarkEntriesJSON30k weighs entry_json.go against encoding/json on what
// `list --json` prints for a 30k-entry memory: the hand-written encoder is
// kept only while it is measurably faster.
func BenchmarkEntriesJSON30k(b *testing.B) {
	entries := make([]Entry, 30000)
	for i := range entries {
		entries[i] = Entry{ID: fmt.Sprintf("mem-%08x", i), Title: fmt.Sprintf("Raise the CI timeout %d", i), Type: "solution",
			Tags: []string{"ci", "timeouts"}, Date: "2026-12-07",
			Content:    strings.Repeat(fmt.Sprintf("The nightly job %d times out on the large fixtures; raise it to 20 minutes. ", i), 3),
			Fields:     map[string]string{"Source": "agent", "Session": "s-42"},
			Provenance: &Provenance{Author: "Ada <ada@example.com>", Branch: "main"}}
	}
	b.Run("memsync", func(b *testing.B) {
		for b.Loop() {
			if err := WriteEntriesJSON(io.Discard, entries); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			enc := json.NewEncoder(io.Discard)
			enc.SetIndent("", "  ")
			if err := enc.Encode(entries); err != nil {
				b.Fatal(err)
			}
		}
	})
}
