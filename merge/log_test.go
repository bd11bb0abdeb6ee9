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
