package agents

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONSetDeleteRoundTrip: setting memsync's member into a container
// that is there, then deleting it, gives back the text byte for byte, in
// every layout the editor meets (one line, indented, tabs, trailing
// commas and comments in JSONC); the text in between is valid and holds
// the member.
func TestJSONSetDeleteRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		text  string
		jsonc bool
	}{
		{`{"mcpServers": {}}`, false},
		{"{\"mcpServers\": {}}\n", false},
		{`{"mcpServers":{"a":{"command":"a"}}}`, false},
		{"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}\n  }\n}\n", false},
		{"{\n\t\"mcpServers\": {\n\t\t\"a\": 1,\n\t\t\"b\": 2\n\t},\n\t\"x\": true\n}", false},
		{"{\n  \"mcpServers\": {\n    \"a\": 1 // one\n  }\n}\n", true},
		{"{\n  \"mcpServers\": {\n    \"a\": 1, // one\n  }, /* x */\n}\n", true},
		{"{\n  \"mcpServers\": { /* none yet */ }\n}\n", true},
		{"{\"mcpServers\": {\"a\": [1, {\"b\": \"}\"}]}}", false},
		{"{\"mcpServers\": {\"a\": \"\\\"quoted\\\\\"}}", false},
	} {
		v := obj{{"command", "/bin/memsync"}, {"args", []string{"mcp"}}}
		set, err := setJSON([]byte(tc.text), tc.jsonc, []string{"mcpServers", "memsync"}, v)
		if err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		root, err := parseJSON(set, tc.jsonc)
		if err != nil {
			t.Fatalf("%q: set gave unreadable text %q: %v", tc.text, set, err)
		}
		if !tc.jsonc && !json.Valid(set) {
			t.Fatalf("%q: set gave invalid JSON %q", tc.text, set)
		}
		if m := root.lookup("mcpServers").lookup("memsync"); m == nil || !sameJSON(set, m, v) {
			t.Fatalf("%q: set gave %q", tc.text, set)
		}
		again, _ := setJSON(set, tc.jsonc, []string{"mcpServers", "memsync"}, v)
		if string(again) != string(set) {
			t.Fatalf("%q: second set changed %q to %q", tc.text, set, again)
		}
		back, err := deleteJSON(set, tc.jsonc, []string{"mcpServers", "memsync"}, 0)
		if err != nil || string(back) != tc.text {
			t.Fatalf("%q: set %q, delete gave %q (%v)", tc.text, set, back, err)
		}
	}
}

// TestJSONRefuses: what is not JSON (or, for a JSON file, a comment) is
// an error, never a guess.
func TestJSONRefuses(t *testing.T) {
	for _, text := range []string{``, `[]`, `{`, `{"a": }`, `{"a": 1,}`, `{"a" 1}`, `{"a": 1} x`, "{\"a\": \"x\ny\"}", `{"a": tru}`, "{/* c */}", "\ufeff{}"} {
		if _, err := parseJSON([]byte(text), false); err == nil {
			t.Errorf("%q: parsed", text)
		}
	}
	if _, err := parseJSON([]byte(`{"a": 1,} // c`), true); err != nil {
		t.Errorf("JSONC: %v", err)
	}
	if _, err := parseJSON([]byte("{\"a\": 1 /* open"), true); err == nil {
		t.Error("an open comment parsed")
	}
}

// FuzzJSONEdit: whatever a config file holds, setting memsync's member
// gives text that parses and holds it, a second set changes nothing, and
// where the file had the container without memsync, deleting the member
// gives the text back byte for byte.
func FuzzJSONEdit(f *testing.F) {
	for _, s := range []string{`{}`, `{"mcpServers": {}}`, "{\n  \"mcpServers\": {\n    \"a\": 1 // c\n  },\n}\n",
		`{"mcpServers":{"a":[1,2,{"b":null}]},"x":"y"}`, "{\n\t\"mcpServers\": { /* c */ }\n}", `{"mcpServers": {"memsync": 1}}`} {
		f.Add(s, true)
		f.Add(s, false)
	}
	path := []string{"mcpServers", "memsync"}
	v := obj{{"command", "/bin/memsync"}, {"args", []string{"mcp"}}}
	f.Fuzz(func(t *testing.T, text string, jsonc bool) {
		if len(text) > 1<<12 {
			return
		}
		root, err := parseJSON([]byte(text), jsonc)
		if err != nil {
			return
		}
		servers := root.lookup("mcpServers")
		set, err := setJSON([]byte(text), jsonc, path, v)
		if err != nil {
			if servers != nil && servers.kind != '{' {
				return // refused: mcpServers is no object
			}
			t.Fatalf("set %q: %v", text, err)
		}
		r2, err := parseJSON(set, jsonc)
		if err != nil {
			t.Fatalf("set %q gave %q: %v", text, set, err)
		}
		if m := r2.lookup("mcpServers").lookup("memsync"); m == nil || !sameJSON(set, m, v) {
			t.Fatalf("set %q gave %q", text, set)
		}
		if again, err := setJSON(set, jsonc, path, v); err != nil || string(again) != string(set) {
			t.Fatalf("second set of %q: %q, %v", set, again, err)
		}
		back, err := deleteJSON(set, jsonc, path, 0)
		if err != nil {
			t.Fatalf("delete %q: %v", set, err)
		}
		if _, err := parseJSON(back, jsonc); err != nil {
			t.Fatalf("delete %q gave %q: %v", set, back, err)
		}
		// an empty container holding only spaces and line breaks comes back
		// as {} when it ends in a line break: an added member's layout
		// cannot tell it from {}
		blank := servers != nil && len(servers.items) == 0 && strings.TrimSpace(text[servers.start+1:servers.end-1]) == "" &&
			strings.Contains(text[servers.start+1:servers.end-1], "\n")
		if servers != nil && servers.lookup("memsync") == nil && !blank && string(back) != text {
			t.Fatalf("%q: set %q, delete gave %q", text, set, back)
		}
	})
}

// TestJSONDeleteKeepsNextComment: memsync's member taken from the middle
// of an object leaves the comment above the member after it.
func TestJSONDeleteKeepsNextComment(t *testing.T) {
	text := "{\n  \"mcpServers\": {\n    \"a\": 1,\n    \"memsync\": {\"command\": \"m\"}, // mine\n    // about b\n    \"b\": 2\n  }\n}\n"
	want := "{\n  \"mcpServers\": {\n    \"a\": 1,\n    // about b\n    \"b\": 2\n  }\n}\n"
	got, err := deleteJSON([]byte(text), true, []string{"mcpServers", "memsync"}, 0)
	if err != nil || string(got) != want {
		t.Fatalf("delete gave %q (%v), want %q", got, err, want)
	}
	one := `{"a": 1, "memsync": 2, "b": 3}`
	if got, _ := deleteJSON([]byte(one), false, []string{"memsync"}, 0); string(got) != `{"a": 1, "b": 3}` {
		t.Fatalf("one line: %q", got)
	}
}

// FuzzHookEdit: adding memsync's hook group to a settings file and
// removing it gives the file back byte for byte where the event's array
// was there, and never touches another group.
func FuzzHookEdit(f *testing.F) {
	for _, s := range []string{`{}`, `{"hooks": {}}`, `{"hooks": {"SessionStart": []}}`,
		"{\n  \"hooks\": {\n    \"SessionStart\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}\n    ]\n  }\n}\n",
		`{"hooks": {"SessionStart": [{"hooks": [{"command": "/a/memsync context --agent claude"}]}, 1]}}`} {
		f.Add(s, false)
		f.Add(s, true)
	}
	cmd := "/bin/memsync context --agent claude"
	entry := obj{{"hooks", []any{obj{{"type", "command"}, {"command", cmd}}}}}
	f.Fuzz(func(t *testing.T, text string, jsonc bool) {
		if len(text) > 1<<12 {
			return
		}
		root, err := parseJSON([]byte(text), jsonc)
		if err != nil {
			return
		}
		set, err := setHook([]byte(text), jsonc, "SessionStart", "claude", cmd, entry, false)
		if err != nil {
			return // hooks or the event is not what Claude Code reads: refused
		}
		if _, err := parseJSON(set, jsonc); err != nil {
			t.Fatalf("set %q gave %q: %v", text, set, err)
		}
		if again, err := setHook(set, jsonc, "SessionStart", "claude", cmd, entry, false); err != nil || string(again) != string(set) {
			t.Fatalf("second set of %q: %q, %v", set, again, err)
		}
		back, err := setHook(set, jsonc, "SessionStart", "claude", cmd, entry, true)
		if err != nil {
			t.Fatalf("remove %q: %v", set, err)
		}
		arr := root.lookup("hooks").lookup("SessionStart")
		if arr == nil || arr.kind != '[' || len(arr.items) == 0 {
			return
		}
		for _, it := range arr.items {
			if isMemsyncGroup([]byte(text), it.val, "claude", cmd) {
				return
			}
		}
		if string(back) != text {
			t.Fatalf("%q: set %q, remove gave %q", text, set, back)
		}
	})
}
