package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/memsync/memsync"
)

// encodingJSON is what json.Encoder with SetIndent("", "  ") writes for v,
// the bytes --json prints.
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
	var ctl []byte // every control character
	for c := range 0x20 {
		ctl = append(ctl, byte(c))
	}
	for i, s := range []string{string(ctl) + "\x7f", `<script>alert("x")</script> & \ \\ "q"`,
		"bad \xff\xfe utf-8 \xe2\x80 cut \xc3", "line\u2028sep\u2029para", "plain ascii", "ünïcödé 日本語 🎉",
		"\xed\xa0\x80 surrogate", "\ufffd real replacement", "tab\tnl\nret\r"} { // the strings encoding/json escapes
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
