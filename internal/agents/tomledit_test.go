package agents

import (
	"strings"
	"testing"
)

// FuzzCodexEdit: whatever config.toml holds, setting memsync's table gives
// a file that parses and defines it, a second set changes nothing, and
// removing it leaves no memsync server; a file that ended in one newline
// and had no memsync table comes back byte for byte.
func FuzzCodexEdit(f *testing.F) {
	for _, s := range []string{"", "model = \"o3\"\n", "# c\n[mcp_servers.a]\ncommand = \"a\"\n\n[profiles.x]\nm = 1\n",
		"[mcp_servers.memsync]\ncommand = \"old\"\n[mcp_servers.memsync.env]\nA = \"1\"\n", "mcp_servers.memsync.command = \"x\"\n", "a = \"\"\"\n[mcp_servers.memsync]\n\"\"\"\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<12 {
			return
		}
		before, err := codexServer([]byte(text))
		if err != nil {
			return
		}
		set, err := setCodex([]byte(text), "/bin/memsync", []string{"mcp"})
		if err != nil {
			return // refused, nothing written: checked by the caller's tests
		}
		if server, err := codexServer(set); err != nil || !sameServer(server, "/bin/memsync", []string{"mcp"}) {
			t.Fatalf("set %q gave %q (%v)", text, set, err)
		}
		if again, err := setCodex(set, "/bin/memsync", []string{"mcp"}); err != nil || string(again) != string(set) {
			t.Fatalf("second set of %q: %q, %v", set, again, err)
		}
		back, err := removeCodex(set)
		if err != nil {
			t.Fatalf("remove %q: %v", set, err)
		}
		if server, err := codexServer(back); err != nil || server != nil {
			t.Fatalf("remove %q gave %q (%v)", set, back, err)
		}
		if before == nil && (text == "" || strings.HasSuffix(text, "\n") && !strings.HasSuffix(text, "\n\n")) && string(back) != text {
			t.Fatalf("%q: set %q, remove gave %q", text, set, back)
		}
	})
}
