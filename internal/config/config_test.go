package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLayers: defaults, then orch.yml's block, then memsync.yml, then the
// environment, key by key.
func TestLayers(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	c, err := Load(root, home, "")
	if err != nil || c.Mode() != Auto || c.Budget != DefaultBudget || len(c.Files) != 0 {
		t.Fatalf("no files: %+v %v", c, err)
	}
	write(t, root, "orch.yml", "loops: 3\nmemories:\n  enabled: true\n  inject: manual\n  budget: 1500\n  filter:\n    types: [fix, solution]\n    tags: api, db\n    recent_days: 30\n")
	write(t, home, "memsync.yml", "budget: 900\n")
	t.Setenv("MEMSYNC_INJECT", "")
	t.Setenv("MEMSYNC_BUDGET", "")
	t.Setenv("MEMSYNC_ENABLED", "")
	c, err = Load(root, home, "")
	if err != nil {
		t.Fatal(err)
	}
	want := Filter{Types: []string{"fix", "solution"}, Tags: []string{"api", "db"}, RecentDays: 30}
	if c.Mode() != Manual || c.Budget != 900 || !reflect.DeepEqual(c.Filter, want) || len(c.Files) != 2 {
		t.Fatalf("got %+v", c)
	}
	env := map[string]string{"MEMSYNC_INJECT": "none", "MEMSYNC_BUDGET": "10"}
	if err := c.ApplyEnv(func(k string) string { return env[k] }); err != nil || c.Mode() != None || c.Budget != 10 {
		t.Fatalf("env: %+v %v", c, err)
	}
	write(t, home, "memsync.yml", "memories:\n  enabled: false\n  inject: auto\n")
	if c, err = Load(root, home, ""); err != nil || c.Mode() != None {
		t.Fatalf("enabled: false must mean none: %+v %v", c, err)
	}
	// orch.yml without a memories block is orch's alone.
	write(t, root, "orch.yml", "loops: 3\nbudget: nonsense\n")
	if c, err = Load(root, "", ""); err != nil || c.Budget != DefaultBudget {
		t.Fatalf("orch.yml without memories: %+v %v", c, err)
	}
}

// TestErrors name the file, the line and the key.
func TestErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"memories:\n  inject: sometimes\n", `orch.yml:2: memories.inject: "sometimes" is not one of auto, manual, none`},
		{"memories:\n  enabled: true\n  colour: red\n", "orch.yml:3: memories.colour: unknown key"},
		{"memories:\n  enabled: maybe\n", `orch.yml:2: memories.enabled: "maybe" is not true or false`},
		{"memories:\n  budget: -3\n", `orch.yml:2: memories.budget: "-3" is not a number of tokens`},
		{"memories:\n  filter:\n    recent_days: soon\n", `orch.yml:3: memories.filter.recent_days: "soon" is not a number of days`},
		{"memories:\n  filter:\n    kinds: [a]\n", "orch.yml:3: memories.filter.kinds: unknown key"},
		{"memories:\n  filter:\n    tags: {a: b}\n", "orch.yml:3: memories.filter.tags: want a list of words"},
		{"memories: yes\n", "orch.yml:1: memories: want a mapping"},
		{"memories:\n  inject: [auto\n", "orch.yml: (syntax)"},
	} {
		root := t.TempDir()
		write(t, root, "orch.yml", tc.text)
		_, err := Load(root, "", "")
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, tc.want)
		}
	}
	c := Default()
	err := c.ApplyEnv(func(k string) string { return map[string]string{"MEMSYNC_INJECT": "always"}[k] })
	if err == nil || !strings.Contains(err.Error(), "MEMSYNC_INJECT") {
		t.Fatalf("env error: %v", err)
	}
}

// A configuration file that is a link leading outside the repository (a
// cloned repository's orch.yml pointing at a private file) is refused,
// naming where it leads, and nothing of the target is read; a link to
// /dev/zero inside is refused as no regular file.
func TestLinkOutsideRefused(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "private.yml")
	if err := os.WriteFile(secret, []byte("memories:\n  budget: 77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.Symlink(secret, filepath.Join(root, "orch.yml")); err != nil {
		t.Fatal(err)
	}
	c, err := Load(root, "", "")
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "leads outside") || !strings.Contains(err.Error(), "private.yml") || c.Budget == 77 {
		t.Fatalf("Load = %+v, %v", c, err)
	}
	home := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(home, "memsync.yml")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("", home, ""); err == nil {
		t.Fatal("a memsync.yml linking to /dev/zero was read")
	}
}
