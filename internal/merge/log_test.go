package merge

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzLoadLog: the conflict log is a file in the state dir that anything may
// have written. Its parser never panics and its error names the file; what
// it loads, SaveLog's encoding writes and the parser reads back unchanged;
// every record's versions parse. (In memory, for speed: LoadLog and SaveLog
// are these two around a read and an atomic write, TestLogFileRoundTrip.)
func FuzzLoadLog(f *testing.F) {
	f.Add([]byte(`[{"id":"abcd1234efgh","title":"t","source":"sync origin","time":"2025-01-02T03:04:05Z","base":"### Pattern: t\n- ID: abcd1234efgh\n- Content: b\n","ours":"o","theirs":"x"}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Add([]byte("[null, {\"id\": \"\\u0000\\ud800\", \"ours\": \"\xff<<<<<<< ours\\n\"}]"))
	f.Add([]byte(`{"id": "not a list"}`))
	f.Add([]byte(`[{"id":"a","ID":"b","extra":[1,2,{"x":null}]}]`))
	f.Add([]byte("[{\"id\":\"a\"}]\ntrailing"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "/state/conflicts.json"
		rs, err := decodeLog(path, data)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		out, err := encodeLog(rs)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		back, err := decodeLog(path, out)
		if err != nil {
			t.Fatalf("reload: %v\n%s", err, out)
		}
		if (len(rs) != 0 || len(back) != 0) && !reflect.DeepEqual(rs, back) {
			t.Fatalf("round trip changed the log:\n%#v\n%#v", rs, back)
		}
		for _, r := range rs {
			r.Versions()
		}
	})
}

// The log on disk: missing is empty, saved is loaded back, empty removes
// the file, garbage is an error naming the file.
func TestLogFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memsync", "conflicts.json")
	if rs, err := LoadLog(path); err != nil || rs != nil {
		t.Fatalf("missing log: %v %v", rs, err)
	}
	rs := []Record{{ID: "abcd1234efgh", Title: "t\x00\u2028", Ours: "### x\n- Content: é\n", Theirs: "y"}}
	if err := SaveLog(path, rs); err != nil {
		t.Fatal(err)
	}
	if back, err := LoadLog(path); err != nil || !reflect.DeepEqual(back, rs) {
		t.Fatalf("round trip: %#v %v", back, err)
	}
	if err := SaveLog(path, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("empty log not removed: %v", err)
	}
	if err := os.WriteFile(path, []byte("[{\"id\":"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadLog(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("truncated log: %v", err)
	}
}

// Logs: a record settled on one side is gone, one found on one side is
// kept, one on both sides keeps the newer; the result does not depend on
// which side is ours (as a set).
func TestMergeLogs(t *testing.T) {
	r := func(id, tm string) Record { return Record{ID: id, Time: tm, Ours: id + tm} }
	base := []Record{r("kept", "1"), r("settled-by-ours", "1"), r("settled-by-theirs", "1"), r("both", "1")}
	ours := []Record{r("kept", "1"), r("settled-by-theirs", "1"), r("both", "2"), r("new-ours", "3")}
	theirs := []Record{r("kept", "1"), r("settled-by-ours", "1"), r("both", "4"), r("new-theirs", "3")}
	want := map[string]string{"kept": "1", "both": "4", "new-ours": "3", "new-theirs": "3"}
	for _, got := range [][]Record{Logs(base, ours, theirs), Logs(base, theirs, ours)} {
		if len(got) != len(want) {
			t.Fatalf("merged log %v, want %v", got, want)
		}
		for _, x := range got {
			if want[x.ID] != x.Time {
				t.Fatalf("merged log holds %s at %s, want %q", x.ID, x.Time, want[x.ID])
			}
		}
	}
	if got, err := ParseLog("test", EncodeLog(Logs(nil, ours, nil))); err != nil || len(got) != len(ours) {
		t.Fatalf("round trip: %v %v", got, err)
	}
	if got, err := ParseLog("test", nil); err != nil || got != nil {
		t.Fatalf("empty log: %v %v", got, err)
	}
	if _, err := ParseLog("test", []byte(`[{"title":"no id"}]`)); err == nil {
		t.Fatal("a record without an ID was read")
	}
}
