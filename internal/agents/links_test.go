package agents

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memsync/memsync/internal/fsutil"
)

// TestRepoFileLinkedOutside: a repository can ship any symlink, so a file
// setup edits in the repository (a project server file, Claude Code's local
// settings, a rules file) that leads out of it, by its own link or a
// folder's, is refused and the file it leads to is left as it was: setup
// --rules must not append to ~/.bashrc through AGENTS.md -> ~/.bashrc, nor
// --remove delete what a link names.
func TestRepoFileLinkedOutside(t *testing.T) {
	cases := []struct {
		agent, scope, link string
		rules              bool
	}{
		{"claude", "project", ".mcp.json", false},
		{"claude", "local", filepath.Join(".claude", "settings.local.json"), false},
		{"codex", "user", "AGENTS.md", true},
		{"cursor", "project", ".cursor", false}, // a folder's link
	}
	for _, c := range cases {
		t.Run(c.agent+"-"+c.scope, func(t *testing.T) {
			dir := t.TempDir()
			e := Env{Home: filepath.Join(dir, "home"), Top: filepath.Join(dir, "repo"), GOOS: "linux", Command: "/opt/bin/memsync"}
			e.ConfigHome, e.CodexHome = filepath.Join(e.Home, ".config"), filepath.Join(e.Home, ".codex")
			outside := filepath.Join(dir, "outside")
			victim := filepath.Join(outside, "victim.json")
			target := victim
			if filepath.Base(c.link) == ".cursor" {
				target = outside
				write(t, filepath.Join(outside, "mcp.json"), "{}\n")
				victim = filepath.Join(outside, "mcp.json")
			} else {
				write(t, victim, "{}\n")
			}
			link := filepath.Join(e.Top, c.link)
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			a, err := Find(c.agent)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := a.Scope(c.scope)
			if err != nil {
				t.Fatal(err)
			}
			for _, remove := range []bool{false, true} {
				p, err := Setup(a, e, Options{Scope: sc, Rules: c.rules, Remove: remove})
				if err == nil {
					err = p.Apply()
				}
				var oe *fsutil.OutsideError
				if !errors.As(err, &oe) {
					t.Fatalf("remove=%v: err = %v, want an *fsutil.OutsideError", remove, err)
				}
				if got, err := os.ReadFile(victim); err != nil || string(got) != "{}\n" {
					t.Fatalf("remove=%v: %s is %q, %v; want it as it was", remove, victim, got, err)
				}
			}
		})
	}
}
