package gitrepo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
)

// TestDiscoverLayout: ralph-orchestrator's file is the memory when it
// exists, or when .ralph/ does and .agent/memories.md does not; git config
// memsync.layout chooses either; every worktree agrees.
func TestDiscoverLayout(t *testing.T) {
	root := testgit.Isolate(t)
	for _, c := range []struct {
		name   string
		files  []string // created in the primary ("x/" a folder)
		config string   // memsync.layout
		want   Layout
	}{
		{"nothing", nil, "", LayoutAgent},
		{"agent file", []string{".agent/memories.md"}, "", LayoutAgent},
		{"ralph file", []string{".ralph/agent/memories.md"}, "", LayoutRalph},
		{"ralph file beside agent file", []string{".agent/memories.md", ".ralph/agent/memories.md"}, "", LayoutRalph},
		{"ralph folder", []string{".ralph/"}, "", LayoutRalph},
		{"ralph folder beside agent file", []string{".ralph/", ".agent/memories.md"}, "", LayoutAgent},
		{"config ralph", nil, "ralph", LayoutRalph},
		{"config agent over ralph file", []string{".ralph/agent/memories.md"}, "agent", LayoutAgent},
	} {
		t.Run(c.name, func(t *testing.T) {
			repo := filepath.Join(root, filepath.Base(t.Name()))
			testgit.Git(t, root, "init", "-q", repo)
			testgit.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "init")
			for _, f := range c.files {
				p := filepath.Join(repo, filepath.FromSlash(f))
				if f[len(f)-1] == '/' {
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("# Memories\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.config != "" {
				testgit.Git(t, repo, "config", LayoutKey, c.config)
			}
			wt := repo + "-wt"
			testgit.Git(t, repo, "worktree", "add", "-q", wt)
			for _, dir := range []string{repo, wt} {
				r, err := Discover(dir)
				if err != nil {
					t.Fatal(err)
				}
				work := filepath.Join(repo, filepath.FromSlash(r.MemDir()))
				if r.Layout != c.want || r.WorkDir() != work || r.Home != filepath.Join(repo, ".git", "memsync") || r.LayoutWhy == "" {
					t.Fatalf("in %s: layout %q (%s), home %s, folder %s; want %q", dir, r.Layout, r.LayoutWhy, r.Home, r.WorkDir(), c.want)
				}
			}
		})
	}
	repo := filepath.Join(root, "bad")
	testgit.Git(t, root, "init", "-q", repo)
	testgit.Git(t, repo, "config", LayoutKey, "orch")
	if _, err := Discover(repo); err == nil {
		t.Fatal("memsync.layout=orch accepted")
	}
}
