package config

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// billionLaughs is a YAML bomb: nine levels of nine aliases, 9^9 strings if
// anything expanded it.
func billionLaughs() string {
	doc := "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		doc += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 8) + "*" + prev + "]\n"
		prev = n
	}
	return doc
}

// A YAML bomb is never expanded: an alias where memsync reads a value is
// refused with the file, the line and the key; one among orch's own keys is
// left alone. Deep nesting and an oversized file are refused. Memory use is
// the proof that nothing was expanded (9^9 strings would be gigabytes).
func TestYAMLBombsRefused(t *testing.T) {
	t.Setenv("MEMSYNC_INJECT", "")
	t.Setenv("MEMSYNC_BUDGET", "")
	t.Setenv("MEMSYNC_ENABLED", "")
	bomb := billionLaughs()
	for _, c := range []struct {
		name, file, doc, want string
	}{
		{"orch's keys", "orch.yml", bomb, ""},
		{"types", "orch.yml", bomb + "memories:\n  filter:\n    types: *i\n", "orch.yml:12: memories.filter.types: a YAML alias"},
		{"tag in a list", "memsync.yml", bomb + "memories:\n  filter:\n    tags: [x, *i]\n", "memsync.yml:12: memories.filter.tags: a YAML alias"},
		{"filter", "memsync.yml", bomb + "memories:\n  filter: *i\n", "memsync.yml:11: memories.filter: a YAML alias"},
		{"block", "orch.yml", bomb + "memories: *i\n", "orch.yml:10: memories: a YAML alias"},
		{"scalar", "memsync.yml", "t: &t true\nmemories:\n  enabled: *t\n", "memsync.yml:3: memories.enabled: a YAML alias"},
		{"filter not a mapping", "memsync.yml", "filter: 3\n", "memsync.yml:1: filter: want a mapping"},
		{"deep flow", "orch.yml", "memories: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n", "orch.yml: (syntax): exceeded max depth"},
		{"too large", "memsync.yml", "budget: 1\n" + strings.Repeat("# padding\n", maxFileSize/10+1), "memsync.yml: (size): larger than 1 MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, c.file, c.doc)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Load(dir, dir, "")
			runtime.ReadMemStats(&after)
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 64<<20 {
				t.Fatalf("Load allocated %d MB: the document was expanded", grown>>20)
			}
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.File != filepath.Join(dir, c.file) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

// FuzzParse: any orch.yml or memsync.yml, whatever it holds, gives a
// configuration or an *Error naming the file; never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte("loops: 3\nmemories:\n  enabled: true\n  inject: manual\n  budget: 1500\n  filter:\n    types: [fix, solution]\n    tags: api, db\n    recent_days: 30\n"), true)
	f.Add([]byte("budget: 900\nrole: worker\nmax_entries: 5\nttl_days: 2\nmodel: ~/m\n"), false)
	f.Add([]byte("memories:\n  enabled: yes\n  inject: AUTO\n"), false)
	f.Add([]byte(billionLaughs()+"memories:\n  filter:\n    tags: [*i]\n"), true)
	f.Add([]byte("[[[[{a: &x [*x]}]]]]\n"), false)
	f.Add([]byte("%YAML 1.1\n---\n!!map {? !!str budget : !!int 3}\n...\n---\nx: 1\n"), false)
	f.Add([]byte("memories:\n  budget: 99999999999999999999\n  filter: {recent_days: -1}\n"), true)
	f.Add([]byte("\xef\xbb\xbfenabled: \"\\xff\"\n\t- x\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, orch bool) {
		path := "/repo/.agent/memsync.yml"
		if orch {
			path = "/repo/orch.yml"
		}
		c := Default()
		err := c.parse(path, data, orch)
		if err == nil {
			if c.Budget < 0 || c.MaxEntries < 0 || c.TTLDays < 0 || c.Filter.RecentDays < 0 {
				t.Fatalf("negative limit accepted: %+v", c)
			}
			return
		}
		var ce *Error
		if !errors.As(err, &ce) || ce.File != path {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// The file is read through the same parse, with its size checked first.
func TestReadFileSizeChecked(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "memsync.yml"), make([]byte, maxFileSize), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Default()
	if err := c.readFile(filepath.Join(dir, "memsync.yml"), dir, false); err == nil || !strings.Contains(err.Error(), "(syntax)") {
		t.Fatalf("1 MiB of zero bytes: %v", err) // read, and refused by the parser
	}
}
