package agents

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// Codex keeps its servers in TOML tables ([mcp_servers.NAME]). memsync's
// table is edited as text, a table at a time, so every other line of the
// file (comments too) stays as it was; BurntSushi/toml only reads.

// tableHeader matches a table header line and captures its dotted name
// (compiled on first use: memsync's start builds no regexps).
var tableHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(#.*)?$`)
})

// memsyncTable: the name is mcp_servers.memsync or a table under it.
var memsyncTable = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^mcp_servers\s*\.\s*("memsync"|'memsync'|memsync)(\s*\..*)?$`)
})

// tomlSections are the line ranges [start, end) of memsync's tables in the
// lines of s (each to the next header or the end).
func tomlSections(lines []string) [][2]int {
	var out [][2]int
	open := -1
	for i, l := range lines {
		m := tableHeader().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if open >= 0 {
			out = append(out, [2]int{open, i})
			open = -1
		}
		if memsyncTable().MatchString(m[1]) {
			open = i
		}
	}
	if open >= 0 {
		out = append(out, [2]int{open, len(lines)})
	}
	return out
}

// codexServer is what the file defines as mcp_servers.memsync, or nil.
func codexServer(s []byte) (map[string]any, error) {
	var m map[string]any
	if _, err := toml.Decode(string(s), &m); err != nil {
		return nil, err
	}
	servers, _ := m["mcp_servers"].(map[string]any)
	server, _ := servers["memsync"].(map[string]any)
	return server, nil
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// codexTable is memsync's table as setup writes it.
func codexTable(command string, args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = tomlString(a)
	}
	return "[mcp_servers.memsync]\ncommand = " + tomlString(command) + "\nargs = [" + strings.Join(quoted, ", ") + "]\n"
}

func sameServer(server map[string]any, command string, args []string) bool {
	if server == nil || server["command"] != command {
		return false
	}
	want := make([]any, len(args))
	for i, a := range args {
		want[i] = a
	}
	got, _ := server["args"].([]any)
	return reflect.DeepEqual(got, want) && server["enabled"] != false
}

// setCodex makes s define memsync's server as command and args.
func setCodex(s []byte, command string, args []string) ([]byte, error) {
	server, err := codexServer(s)
	if err != nil {
		return nil, err
	}
	if sameServer(server, command, args) {
		return s, nil
	}
	lines := strings.SplitAfter(string(s), "\n")
	var main [2]int
	found := false
	for _, sec := range tomlSections(lines) {
		m := tableHeader().FindStringSubmatch(lines[sec[0]])
		if memsyncTable().FindStringSubmatch(m[1])[2] == "" {
			main, found = sec, true
		}
	}
	var out string
	switch {
	case found: // memsync's own table is rewritten; the tables under it stay
		end := main[1]
		for end > main[0]+1 && strings.TrimSpace(lines[end-1]) == "" {
			end--
		}
		out = strings.Join(lines[:main[0]], "") + codexTable(command, args) + strings.Join(lines[end:], "")
	case server != nil:
		return nil, fmt.Errorf("mcp_servers.memsync is defined outside a [mcp_servers.memsync] table")
	default:
		out = string(s)
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		if out != "" && !strings.HasSuffix(out, "\n\n") {
			out += "\n"
		}
		out += codexTable(command, args)
	}
	if server, err := codexServer([]byte(out)); err != nil || !sameServer(server, command, args) {
		return nil, fmt.Errorf("mcp_servers.memsync could not be rewritten in place (its table holds what memsync does not write)")
	}
	return []byte(out), nil
}

// removeCodex takes memsync's tables out of s.
func removeCodex(s []byte) ([]byte, error) {
	server, err := codexServer(s)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(s), "\n")
	secs := tomlSections(lines)
	if len(secs) == 0 {
		if server != nil {
			return nil, fmt.Errorf("mcp_servers.memsync is defined outside a [mcp_servers.memsync] table")
		}
		return s, nil
	}
	var b strings.Builder
	at := 0
	for _, sec := range secs {
		b.WriteString(strings.Join(lines[at:sec[0]], ""))
		at = sec[1]
	}
	rest := strings.Join(lines[at:], "")
	out := b.String() + rest
	if rest == "" && strings.HasSuffix(out, "\n\n") {
		out = out[:len(out)-1]
	}
	if server, err := codexServer([]byte(out)); err != nil || server != nil {
		return nil, fmt.Errorf("mcp_servers.memsync could not be removed in place")
	}
	return []byte(out), nil
}
