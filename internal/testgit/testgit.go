// Package testgit is the one way tests set up git: isolated from the
// machine's configuration and from any hook's variables, with a fixed
// identity, in fresh temp dirs.
package testgit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Isolate skips the test when git is missing, isolates git from the machine
// (no system or user config, a fixed identity, none of the variables git sets
// in hooks) for the rest of the test, and returns a fresh temp dir with its
// symlinks resolved.
func Isolate(tb testing.TB) string {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git not on PATH")
	}
	for _, k := range []string{
		"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
		"GIT_CEILING_DIRECTORIES", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX",
		"GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
		"GIT_DISCOVERY_ACROSS_FILESYSTEM",
	} {
		tb.Setenv(k, "") // restores the old value afterwards
		_ = os.Unsetenv(k)
	}
	home := tb.TempDir()
	tb.Setenv("HOME", home)
	tb.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	tb.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share")) // the global layer's home
	tb.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	tb.Setenv("GIT_AUTHOR_NAME", "Memsync Test")
	tb.Setenv("GIT_AUTHOR_EMAIL", "test@memsync.invalid")
	tb.Setenv("GIT_COMMITTER_NAME", "Memsync Test")
	tb.Setenv("GIT_COMMITTER_EMAIL", "test@memsync.invalid")
	tb.Setenv("GIT_TERMINAL_PROMPT", "0")
	root, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// Git runs git in dir and returns its trimmed output; it fails the test when
// git fails.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	out, err := GitErr(dir, args...)
	if err != nil {
		tb.Fatalf("git %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return out
}

// Show returns the exact bytes of an object, e.g. "REF:path", as git show
// prints them; a memory file that a snapshot holds as a tree of chunks
// (snapshot format 2) is rebuilt with plain git, chunk by chunk in the
// tree's order, as docs/reliability.md says to.
func Show(tb testing.TB, dir, object string) string {
	tb.Helper()
	out, err := ShowErr(dir, nil, object)
	if err != nil {
		tb.Fatalf("git show %s (in %s): %v", object, dir, err)
	}
	return out
}

// ShowErr is Show returning git's failure; env is git's environment (nil:
// this process's).
func ShowErr(dir string, env []string, object string) (string, error) {
	run := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		return string(out), err
	}
	kind, err := run("cat-file", "-t", object)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(kind) != "tree" {
		return run("show", object)
	}
	list, err := run("cat-file", "-p", object) // "MODE TYPE HASH\tNAME" lines, in order
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(list), "\n") {
		f := strings.Fields(l)
		if len(f) != 4 || f[1] != "blob" {
			return "", fmt.Errorf("%s holds %q", object, l)
		}
		chunk, err := run("cat-file", "blob", f[2])
		if err != nil {
			return "", err
		}
		b.WriteString(chunk)
	}
	return b.String(), nil
}

// GitErr runs git in dir and returns its trimmed combined output and error.
func GitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// Worktrees is a primary repository (one commit on main) with a few linked
// worktrees in the awkward places a user puts them, each with an a/b
// subfolder: Linked maps the worktree's name (as in .git/worktrees) to its
// top.
type Worktrees struct {
	Root, Primary string
	Linked        map[string]string
}

// NewWorktrees makes Worktrees in an isolated folder (Isolate).
func NewWorktrees(tb testing.TB) Worktrees {
	tb.Helper()
	mkdir := func(path string) {
		if err := os.MkdirAll(path, 0o777); err != nil {
			tb.Fatal(err)
		}
	}
	root := Isolate(tb)
	f := Worktrees{Root: root, Primary: Repo(tb, filepath.Join(root, "proj")), Linked: map[string]string{}}
	mkdir(filepath.Join(f.Primary, "a", "b"))
	add := func(name, path string) {
		mkdir(filepath.Dir(path))
		Git(tb, f.Primary, "worktree", "add", "-q", "-b", "br-"+name, path)
		f.Linked[name] = path
	}
	add("wt1", filepath.Join(root, "wt1"))
	// git names the admin dir after the folder, with spaces made dashes.
	add("wt-two", filepath.Join(root, "dir with spaces", "deep", "nested", "wt two"))
	add("inner", filepath.Join(f.Primary, "trees", "inner")) // nested inside the primary
	for _, top := range f.Linked {
		mkdir(filepath.Join(top, "a", "b"))
	}
	return f
}

// Repo creates a repository at path (made if missing) with one commit on
// main, and returns path.
func Repo(tb testing.TB, path string) string {
	tb.Helper()
	if err := os.MkdirAll(path, 0o777); err != nil {
		tb.Fatal(err)
	}
	Git(tb, path, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(path, "README"), []byte("hi\n"), 0o666); err != nil {
		tb.Fatal(err)
	}
	Git(tb, path, "add", "README")
	Git(tb, path, "commit", "-q", "-m", "init")
	return path
}
