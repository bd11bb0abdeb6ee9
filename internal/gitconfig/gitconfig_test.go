package gitconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, text, key string
		want            string
		set             bool
	}{
		{"plain", "[core]\n\tbare = false\n", "core.bare", "false", true},
		{"section case", "[Core]\nbare = x\n", "core.bare", "x", true},
		{"lookup case", "[core]\nhooksPath = h\n", "CORE.HOOKSPATH", "h", true},
		{"name case", "[core]\nHooksPath = h\n", "core.hooksPath", "h", true},
		{"subsection quoted keeps case", "[remote \"Origin\"]\nurl = u\n", "remote.Origin.url", "u", true},
		{"subsection quoted other case", "[remote \"Origin\"]\nurl = u\n", "remote.origin.url", "", false},
		{"subsection section case", "[REMOTE \"o\"]\nURL = u\n", "remote.o.url", "u", true},
		{"subsection escapes", "[branch \"a\\\"b\\\\c\"]\nremote = r\n", `branch.a"b\c.remote`, "r", true},
		{"subsection with ]", "[branch \"x]y\"]\nremote = r\n", "branch.x]y.remote", "r", true},
		{"subsection with dots", "[branch \"feat/v1.2\"]\nremote = up\n", "branch.feat/v1.2.remote", "up", true},
		{"deprecated dotted subsection folds case", "[other.Deprecated]\nkey = v\n", "other.deprecated.key", "v", true},
		{"key on header line", "[core \"Sub\"] bare = false\n", "core.Sub.bare", "false", true},
		{"no value", "[extensions]\n\tworktreeConfig\n", "extensions.worktreeconfig", "", true},
		{"empty value", "[core]\nhooksPath =\n", "core.hooksPath", "", true},
		{"last wins", "[core]\nx = 1\n[core]\nx = 2\n", "core.x", "2", true},
		{"unset", "[core]\nx = 1\n", "core.y", "", false},
		{"key outside section", "x = 1\n[core]\n", "core.x", "", false},
		{"hash comment", "# [core]\n[core]\n; x = 0\nx = 1 # trailing\n", "core.x", "1", true},
		{"semicolon comment", "[core]\nx = 1 ; trailing\n", "core.x", "1", true},
		{"comment after header", "[core] # c\nx = 1\n", "core.x", "1", true},
		{"quoted keeps comment chars and spaces", "[core]\nx = \" a # b ; c \"\n", "core.x", " a # b ; c ", true},
		{"inner spaces kept, outer trimmed", "[o]\nkey =  one   two\t\n", "o.key", "one   two", true},
		{"escapes", "[o]\nk = a\\tb\\nc\\\"d\\\\e\n", "o.k", "a\tb\nc\"d\\e", true},
		{"quoted escapes", "[core]\nworktree = \"../my \\\"tree\\\"\"\n", "core.worktree", `../my "tree"`, true},
		{"continuation", "[remote \"origin\"]\n\turl = a\\\nb\n", "remote.origin.url", "ab", true},
		{"continuation keeps next line's spaces", "[o]\nk = a \\\n  b\n", "o.k", "a   b", true},
		{"continuation twice", "[o]\nk = a\\\nb\\\nc\n", "o.k", "abc", true},
		{"crlf", "[core]\r\nx = 1\r\n", "core.x", "1", true},
		{"bom", "\xef\xbb\xbf[core]\nx = 1\n", "core.x", "1", true},
		{"dash in key", "[o]\nmy-key = v\n", "o.my-key", "v", true},
		{"broken header resets section", "[core\nx = 1\n", "core.x", "", false},
	} {
		got, ok := Parse([]byte(c.text)).Get(c.key)
		if got != c.want || ok != c.set {
			t.Errorf("%s: Get(%q) = %q, %v; want %q, %v", c.name, c.key, got, ok, c.want, c.set)
		}
	}
}

func TestBool(t *testing.T) {
	for _, c := range []struct {
		line    string
		val, ok bool
	}{
		{"x = true", true, true},
		{"x = On", true, true},
		{"x = YES", true, true},
		{"x = 1", true, true},
		{"x = 2", true, true},
		{"x = 0x10", true, true},
		{"x", true, true}, // no value: true
		{"x = false", false, true},
		{"x = off", false, true},
		{"x = No", false, true},
		{"x = 0", false, true},
		{"x =", false, true},
		{"x = maybe", false, false},
		{"y = true", false, false}, // unset
	} {
		val, ok := Parse([]byte("[s]\n" + c.line + "\n")).Bool("s.x")
		if val != c.val || ok != c.ok {
			t.Errorf("%q: Bool = %v, %v; want %v, %v", c.line, val, ok, c.val, c.ok)
		}
	}
}

func TestPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, c := range []struct {
		line, want string
		ok         bool
	}{
		{"p = ~/hooks", filepath.Join(home, "hooks"), true},
		{"p = /abs/hooks", "/abs/hooks", true},
		{"p = rel/hooks", "rel/hooks", true},
		{"p =", "", false},
		{"q = x", "", false},
	} {
		got, ok := Parse([]byte("[s]\n" + c.line + "\n")).Path("s.p")
		if got != c.want || ok != c.ok {
			t.Errorf("%q: Path = %q, %v; want %q, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

// TestRepoWorktreeConfig: config.worktree is read only under
// extensions.worktreeConfig, from the git dir given, over the common config.
func TestRepoWorktreeConfig(t *testing.T) {
	common := t.TempDir()
	linked := filepath.Join(common, "worktrees", "w")
	write(t, filepath.Join(common, "config"), "[core]\n\tx = common\n")
	write(t, filepath.Join(common, "config.worktree"), "[core]\n\tx = main\n")
	write(t, filepath.Join(linked, "config.worktree"), "[core]\n\tx = linked\n")
	if v, _ := Repo(common, common).Get("core.x"); v != "common" {
		t.Errorf("without the extension: %q", v)
	}
	write(t, filepath.Join(common, "config"), "[core]\n\tx = common\n[extensions]\n\tworktreeConfig = true\n")
	if v, _ := Repo(common, common).Get("core.x"); v != "main" {
		t.Errorf("main worktree: %q", v)
	}
	if v, _ := Repo(common, linked).Get("core.x"); v != "linked" {
		t.Errorf("linked worktree: %q", v)
	}
}

// TestEffectiveAgreesWithGit: the files Effective reads, and their order,
// are those `git config --get` reads (without includes).
func TestEffectiveAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	home := t.TempDir()
	for _, k := range []string{"GIT_DIR", "GIT_COMMON_DIR", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		t.Setenv(k, "")
		os.Unsetenv(k) //nolint:errcheck // t.Setenv restores it
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
	sys := filepath.Join(home, "system")
	t.Setenv("GIT_CONFIG_SYSTEM", sys)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "")
	repo := filepath.Join(home, "repo")
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	gitDir := filepath.Join(repo, ".git")
	write(t, sys, "[t]\n\ta = system\n\tb = system\n\tc = system\n\td = system\n")
	write(t, filepath.Join(home, "xdg", "git", "config"), "[t]\n\tb = xdg\n\tc = xdg\n\td = xdg\n")
	write(t, filepath.Join(home, ".gitconfig"), "[t]\n\tc = home\n\td = home\n")
	f, err := os.OpenFile(filepath.Join(gitDir, "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("[t]\n\td = local\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	check := func(label string) {
		t.Helper()
		cfg := Effective(gitDir, gitDir)
		for _, k := range []string{"t.a", "t.b", "t.c", "t.d"} {
			out, _ := exec.Command("git", "--git-dir="+gitDir, "config", "--get", k).Output()
			want := string(out)
			if len(want) > 0 {
				want = want[:len(want)-1]
			}
			if got, _ := cfg.Get(k); got != want {
				t.Errorf("%s: %s = %q, git says %q", label, k, got, want)
			}
		}
	}
	check("all files")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	check("GIT_CONFIG_NOSYSTEM")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "other"))
	write(t, filepath.Join(home, "other"), "[t]\n\ta = other\n")
	check("GIT_CONFIG_GLOBAL")
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSubsections: every value of a key set more than once, by
// subsection, in the order git reads them, as git config --get-regexp
// lists them.
func TestSubsections(t *testing.T) {
	c := Parse([]byte(`[remote "origin"]
	url = ../r.git
	fetch = +refs/heads/*:refs/remotes/origin/*
[remote "Team.Main"]
	fetch = +refs/*:refs/*
[remote "origin"]
	fetch = ^refs/memsync/*
[remote]
	fetch = not a subsection's
[remote.old]
	fetch = +a:b
`))
	subs, vals := c.Subsections("remote", "fetch")
	if got := strings.Join(subs, " "); got != "origin Team.Main old" {
		t.Fatalf("subsections %q", got)
	}
	if got := strings.Join(vals["origin"], " "); got != "+refs/heads/*:refs/remotes/origin/* ^refs/memsync/*" {
		t.Fatalf("origin's values %q", got)
	}
	if got, _ := c.Get("remote.origin.fetch"); got != "^refs/memsync/*" {
		t.Fatalf("Get: %q", got)
	}
}
