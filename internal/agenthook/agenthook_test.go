package agenthook

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParse: each agent's documented input, and what is refused.
func TestParse(t *testing.T) {
	in, err := Parse("claude", []byte(`{"session_id":"abc","transcript_path":"/t","cwd":"/w","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"fix it"}`))
	if err != nil || in.Kind != Prompt || in.Session != "abc" || in.Cwd != "/w" || in.Prompt != "fix it" || in.Fresh() {
		t.Fatalf("claude prompt: %+v %v", in, err)
	}
	in, err = Parse("claude", []byte(`{"session_id":"abc","hook_event_name":"SessionStart","source":"resume"}`))
	if err != nil || in.Kind != Start || in.Fresh() {
		t.Fatalf("claude resume: %+v %v", in, err)
	}
	for _, src := range []string{"startup", "clear", "compact", ""} {
		if in, _ := Parse("gemini", []byte(`{"session_id":"g","hook_event_name":"SessionStart","source":"`+src+`"}`)); !in.Fresh() {
			t.Fatalf("gemini start %q is not fresh", src)
		}
	}
	if in, err := Parse("gemini", []byte(`{"session_id":"g","hook_event_name":"BeforeAgent","prompt":"p","timestamp":"2026-01-01T00:00:00Z"}`)); err != nil || in.Kind != Prompt {
		t.Fatalf("gemini prompt: %+v %v", in, err)
	}
	for _, c := range []struct{ agent, input, want string }{
		{"claude", `{"hook_event_name":"BeforeAgent"}`, `hook event "BeforeAgent": memsync answers claude's [SessionStart UserPromptSubmit]`},
		{"gemini", `{"hook_event_name":"UserPromptSubmit"}`, `memsync answers gemini's [BeforeAgent SessionStart]`},
		{"codex", `{}`, `unknown agent "codex"`},
		{"claude", `[1]`, "not the JSON object claude sends"},
		{"claude", "\x00\xff", "not the JSON object claude sends"},
	} {
		if _, err := Parse(c.agent, []byte(c.input)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.agent, c.input, err, c.want)
		}
	}
}

// TestOutput: the documented JSON, the text as it is; nothing for none.
func TestOutput(t *testing.T) {
	in := Input{Event: "UserPromptSubmit"}
	text := "# Memories\n\n[x] a <b@c> & \"d\"\n"
	out := Output(in, text)
	var got struct {
		H struct {
			Event   string `json:"hookEventName"`
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &got); err != nil || got.H.Event != "UserPromptSubmit" || got.H.Context != text {
		t.Fatalf("%s: %+v %v", out, got, err)
	}
	if !strings.Contains(string(out), "<b@c> &") || !strings.HasSuffix(string(out), "}\n") || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("not one readable line: %q", out)
	}
	if Output(in, "") != nil || Empty("claude") != nil || string(Empty("gemini")) != "{}\n" {
		t.Fatal("nothing to add is not nothing")
	}
}

// TestSessions: a session's record across Opens, afresh for a new start,
// full at its bound, and the records pruned to MaxSessions and MaxAge.
func TestSessions(t *testing.T) {
	ctx := context.Background()
	s := Sessions{Dir: filepath.Join(t.TempDir(), "state", "agent-sessions"), Perm: 0o600, DirPerm: 0o700}
	prompt := Input{Agent: "claude", Kind: Prompt, Session: "s1"}
	add := func(in Input, ids ...string) {
		t.Helper()
		r, err := s.Open(ctx, in, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Add(s, ids...); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	has := func(in Input, id string) bool {
		t.Helper()
		r, err := s.Open(ctx, in, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = r.Close() }()
		return r.Has(id)
	}
	add(prompt, "a", "b")
	add(prompt, "b", "c")
	if !has(prompt, "a") || !has(prompt, "c") || has(prompt, "d") {
		t.Fatal("record lost an ID")
	}
	other := prompt
	other.Session = "s2"
	gemini := prompt
	gemini.Agent = "gemini"
	if has(other, "a") || has(gemini, "a") {
		t.Fatal("another session has the record")
	}
	resume := Input{Agent: "claude", Kind: Start, Session: "s1", Source: "resume"}
	if !has(resume, "a") {
		t.Fatal("a resumed session lost its record")
	}
	if has(Input{Agent: "claude", Kind: Start, Session: "s1", Source: "compact"}, "a") || has(prompt, "a") {
		t.Fatal("a compacted session kept its record")
	}
	// Full: past its bound a record takes no more, and says so.
	var many []string
	for i := range maxRecordBytes / 8 {
		many = append(many, fmt.Sprintf("id%05d", i))
	}
	add(prompt, many...)
	r, err := s.Open(ctx, prompt, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Full() || !r.Has("id00000") {
		t.Fatal("a full record is not full")
	}
	_ = r.Close()
	// Pruned: an old record goes, and the count stays at MaxSessions.
	for i := range MaxSessions + 10 {
		add(Input{Agent: "claude", Kind: Start, Session: fmt.Sprint("p", i)}, "x")
	}
	old := filepath.Join(s.Dir, entries(t, s.Dir)[0])
	if err := os.Chtimes(old, time.Now().Add(-MaxAge-time.Hour), time.Now().Add(-MaxAge-time.Hour)); err != nil {
		t.Fatal(err)
	}
	add(Input{Agent: "claude", Kind: Start, Session: "last"}, "x")
	if n := len(entries(t, s.Dir)); n > MaxSessions {
		t.Fatalf("%d records, want at most %d", n, MaxSessions)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("the old record stays: %v", err)
	}
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}
