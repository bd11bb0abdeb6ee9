package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/urfave/cli/v2"
)

// repoRoot is the module's top folder, seen from this package's tests.
const repoRoot = "../.."

// maxReadmeLines bounds README.md: the newcomer's path, with the rest in docs/.
const maxReadmeLines = 300

// TestDocsCommands: docs/commands.md's table names every visible command and
// subcommand of the app, and every command it names exists.
func TestDocsCommands(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "commands.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := documentedCommands(t, string(data))
	if len(documented) == 0 {
		t.Fatal("docs/commands.md has no command table (rows starting with | `memsync ...`)")
	}

	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	exists := map[string]bool{}
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			name := prefix + c.Name
			exists[name] = true
			if !c.Hidden && !documented[name] {
				t.Errorf("command %q is not in docs/commands.md's table", name)
			}
			walk(name+" ", c.Subcommands)
		}
	}
	walk("", app.Commands)
	for _, name := range sortedKeys(documented) {
		if !exists[name] {
			t.Errorf("docs/commands.md names %q, which is no command of memsync", name)
		}
	}
}

var codeSpan = regexp.MustCompile("`([^`]*)`")

// documentedCommands returns the commands ("add", "worktree add") the rows of
// the command table name: the code spans of a row's first cell that start
// with "memsync ". A word after the command names subcommands when the app
// gives that command subcommands ("hooks install\|uninstall\|status").
func documentedCommands(t *testing.T, doc string) map[string]bool {
	t.Helper()
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	parents := map[string]bool{}
	for _, c := range app.Commands {
		if len(c.Subcommands) > 0 {
			parents[c.Name] = true
		}
	}
	names := map[string]bool{}
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "| `memsync ") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
		for _, m := range codeSpan.FindAllStringSubmatch(first, -1) {
			words := strings.Fields(strings.ReplaceAll(m[1], `\|`, "|"))
			if len(words) < 2 || words[0] != "memsync" || strings.HasPrefix(words[1], "-") {
				continue
			}
			cmd := words[1]
			names[cmd] = true
			if !parents[cmd] || len(words) < 3 {
				continue
			}
			for _, sub := range strings.Split(words[2], "|") {
				names[cmd+" "+sub] = true
			}
		}
	}
	return names
}

// TestDocsReadmeLength: README.md stays short.
func TestDocsReadmeLength(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move detail into docs/", n, maxReadmeLines)
	}
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	urlScheme = regexp.MustCompile(`^[a-z]+:`)
	heading   = regexp.MustCompile(`^#{1,6} (.*)`)
)

// TestDocsLinks: every relative link in README.md and docs/*.md points at a
// file that exists and, for an #anchor into a markdown file, at a heading it
// has.
func TestDocsLinks(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{filepath.Join(repoRoot, "README.md")}, docs...)
	if len(files) < 2 {
		t.Fatal("no docs/*.md")
	}
	anchors := map[string]map[string]bool{}
	headings := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = headingAnchors(string(data))
		return anchors[path]
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, file)
		for _, line := range outsideFences(string(data)) {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if urlScheme.MatchString(target) {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s: link %q: %v", rel, target, err)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(dest, ".md") && !headings(dest)[anchor] {
					t.Errorf("%s: link %q: no heading with that anchor", rel, target)
				}
			}
		}
	}
}

// outsideFences returns the lines of a markdown text that are not inside a
// fenced code block.
func outsideFences(text string) []string {
	var lines []string
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if !fence {
			lines = append(lines, line)
		}
	}
	return lines
}

// headingAnchors returns the anchors GitHub gives a markdown text's headings:
// lower case, punctuation dropped, spaces as hyphens, repeats numbered.
func headingAnchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, line := range outsideFences(text) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(m[1])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n, ok := seen[slug]; ok {
			seen[slug] = n + 1
			out[slug+"-"+strconv.Itoa(n+1)] = true
		} else {
			seen[slug] = 0
			out[slug] = true
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
