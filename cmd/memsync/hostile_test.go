package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A cloned repository is hostile input: what memsync reads of it never
// follows a link out of it and is bounded (a link to /dev/zero is refused
// before it is read), so a private file never enters the memory and no
// read runs the machine out of memory.

// runBounded runs the real memsync in dir with a deadline and a memory
// limit of its own (RLIMIT_AS through prlimit(1) where present), and
// returns its output and exit code.
func runBounded(t *testing.T, env []string, dir string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	name, argv := memsyncBinary(t), args
	if p, err := exec.LookPath("prlimit"); err == nil {
		name, argv = p, append([]string{"--as=" + "1073741824", "--", memsyncBinary(t)}, args...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("memsync %v did not end within 20 s\n%s", args, out)
	}
	return string(out), exitStatus(err)
}

func TestImportStaysInside(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsyncIn(t, env, repo, "add", "already here")
	src := filepath.Join(repo, ".multi-agent-mcp", "memory")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "ok.md"), []byte("---\nkey: ok\ntags: [a]\ncreated_at: 2026-01-01\n---\nan ordinary lesson\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(t.TempDir(), "private.md")
	if err := os.WriteFile(private, []byte("---\nkey: secret\n---\nmy private notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(repo, ".agent", "memories.md"))
	for _, c := range []struct{ name, target string }{{"private.md", private}, {"zero.md", "/dev/zero"}} {
		link := filepath.Join(src, c.name)
		if err := os.Symlink(c.target, link); err != nil {
			t.Fatal(err)
		}
		out, code := runBounded(t, env, repo, "import", filepath.Join(repo, ".multi-agent-mcp"))
		if code != 5 || !strings.Contains(out, link) || !strings.Contains(out, "outside") {
			t.Errorf("import with %s: exit %d\n%s", c.name, code, out)
		}
		if now, _ := os.ReadFile(filepath.Join(repo, ".agent", "memories.md")); string(now) != string(before) {
			t.Errorf("import with %s changed the memory:\n%s", c.name, now)
		}
		if err := os.Remove(link); err != nil {
			t.Fatal(err)
		}
	}
	memsyncIn(t, env, repo, "import", filepath.Join(repo, ".multi-agent-mcp"))
	if out := memsyncIn(t, env, repo, "list"); !strings.Contains(out, "an ordinary lesson") || strings.Contains(out, "private") {
		t.Errorf("after a clean import:\n%s", out)
	}
}

// TestHostileRepositoryFilesBounded: a tracked .gitattributes and a hook
// in a tracked hooks folder (core.hooksPath) that link to /dev/zero: init,
// doctor, hooks status and hooks install end, bounded, with the memory
// intact.
func TestHostileRepositoryFilesBounded(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsyncIn(t, env, repo, "add", "kept through it all")
	if err := os.Symlink("/dev/zero", filepath.Join(repo, ".gitattributes")); err != nil {
		t.Fatal(err)
	}
	hooksDir := filepath.Join(repo, "githooks")
	if err := os.MkdirAll(hooksDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"post-commit", "post-checkout"} {
		if err := os.Symlink("/dev/zero", filepath.Join(hooksDir, h)); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, env, repo, "config", "core.hooksPath", "githooks")
	for _, args := range [][]string{{"init"}, {"doctor"}, {"hooks", "status"}, {"hooks", "install", "--force"}, {"list"}} {
		out, code := runBounded(t, env, repo, args...)
		if code < 0 || strings.Contains(out, "out of memory") || strings.Contains(out, "panic") {
			t.Errorf("memsync %v: exit %d\n%s", args, code, out)
		}
	}
	if out := memsyncIn(t, env, repo, "list"); !strings.Contains(out, "kept through it all") {
		t.Errorf("the memory after:\n%s", out)
	}
}

// TestHostileStateFiles: memsync's own state files in the git dir (the
// content index's stamp and lists, the access log, the removal log)
// replaced by a link to /dev/zero, a link to a pipe, or a huge sparse file:
// every command ends, bounded in time and memory, and no entry is lost.
func TestHostileStateFiles(t *testing.T) {
	env := testGitEnv(t)
	for _, name := range []string{"stamp.json", "access.log", "removed"} {
		for _, kind := range []string{"zero", "fifo", "huge"} {
			t.Run(name+"-"+kind, func(t *testing.T) {
				repo := newRepo(t, env)
				for _, c := range []string{"kept one", "kept two", "kept three", "to delete"} {
					memsyncIn(t, env, repo, "add", c)
				}
				memsyncIn(t, env, repo, "search", "kept")
				memsyncIn(t, env, repo, "snapshot")
				memsyncIn(t, env, repo, "delete", "4")
				p := filepath.Join(repo, ".git", "memsync", "state", name)
				_ = os.Remove(p)
				switch kind {
				case "zero":
					if err := os.Symlink("/dev/zero", p); err != nil {
						t.Fatal(err)
					}
				case "fifo":
					fifo := filepath.Join(t.TempDir(), "fifo")
					if err := exec.Command("mkfifo", fifo).Run(); err != nil {
						t.Skip("no mkfifo")
					}
					if err := os.Symlink(fifo, p); err != nil {
						t.Fatal(err)
					}
				case "huge":
					f, err := os.Create(p)
					if err == nil {
						err = f.Truncate(3 << 30)
					}
					if err != nil {
						t.Fatal(err)
					}
					_ = f.Close()
				}
				for _, args := range [][]string{{"add", "added after"}, {"gc"}, {"archive", "1"}, {"restore", "1"}, {"delete", "added after"}, {"snapshot"}, {"list"}} {
					out, code := runBounded(t, env, repo, args...)
					if code < 0 || code > 5 || strings.Contains(out, "out of memory") || strings.Contains(out, "goroutine") {
						t.Errorf("memsync %v: exit %d\n%s", args, code, out)
					}
				}
				out := memsyncIn(t, env, repo, "list")
				for _, c := range []string{"kept one", "kept two", "kept three"} {
					if !strings.Contains(out, c) {
						t.Errorf("%q lost:\n%s", c, out)
					}
				}
			})
		}
	}
}

// TestStateFolderReplaced: memsync's state folder (<git dir>/memsync/state)
// replaced by a link to /dev/zero or by a link out of the git dir: doctor
// names it (it ran into "not a directory" and stopped), doctor --fix puts a
// folder of its own back (the link's target untouched), and then every
// command works and writes nothing where the link led.
func TestStateFolderReplaced(t *testing.T) {
	env := testGitEnv(t)
	for _, kind := range []string{"zero", "outside"} {
		t.Run(kind, func(t *testing.T) {
			repo := newRepo(t, env)
			memsyncIn(t, env, repo, "add", "kept one")
			memsyncIn(t, env, repo, "add", "kept two")
			state := filepath.Join(repo, ".git", "memsync", "state")
			if err := os.RemoveAll(state); err != nil {
				t.Fatal(err)
			}
			outside := t.TempDir()
			target := map[string]string{"zero": "/dev/zero", "outside": outside}[kind]
			if err := os.Symlink(target, state); err != nil {
				t.Fatal(err)
			}
			out, code := runBounded(t, env, repo, "doctor")
			if code != 1 || !regexp.MustCompile(`(?m)^state +problem .*state`).MatchString(out) {
				t.Fatalf("doctor: exit %d\n%s", code, out)
			}
			out, code = runBounded(t, env, repo, "doctor", "--fix")
			if code != 0 || !regexp.MustCompile(`(?m)^state +fixed`).MatchString(out) {
				t.Fatalf("doctor --fix: exit %d\n%s", code, out)
			}
			if fi, err := os.Lstat(state); err != nil || !fi.IsDir() {
				t.Fatalf("after doctor --fix the state is %v, %v", fi, err)
			}
			for _, args := range [][]string{{"add", "kept three"}, {"search", "kept"}, {"delete", "1"}, {"snapshot"}, {"doctor"}} {
				if out, code := runBounded(t, env, repo, args...); code != 0 {
					t.Errorf("memsync %v: exit %d\n%s", args, code, out)
				}
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("written where the link led: %v", ents)
			}
		})
	}
}

// TestHostileMemoryRecords: the conflict log and the purge record in the
// memory home (<git dir>/memsync) replaced by a link to /dev/zero: doctor,
// conflicts and snapshot end, bounded, with a clear error or their result,
// and no entry is lost.
func TestHostileMemoryRecords(t *testing.T) {
	env := testGitEnv(t)
	for _, name := range []string{"conflicts.json", "purged"} {
		t.Run(name, func(t *testing.T) {
			repo := newRepo(t, env)
			memsyncIn(t, env, repo, "add", "kept one")
			memsyncIn(t, env, repo, "snapshot")
			memsyncIn(t, env, repo, "add", "kept two")
			p := filepath.Join(repo, ".git", "memsync", name)
			_ = os.Remove(p)
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"doctor"}, {"conflicts"}, {"snapshot"}, {"log"}} {
				out, code := runBounded(t, env, repo, args...)
				if code < 0 || code > 5 || strings.Contains(out, "out of memory") || strings.Contains(out, "goroutine") {
					t.Errorf("memsync %v: exit %d\n%s", args, code, out)
				} else if code != 0 && !strings.Contains(out, p) {
					t.Errorf("memsync %v: exit %d without naming %s\n%s", args, code, p, out)
				}
			}
			out := memsyncIn(t, env, repo, "list")
			if !strings.Contains(out, "kept one") || !strings.Contains(out, "kept two") {
				t.Errorf("lost:\n%s", out)
			}
		})
	}
}

// TestHostileGitFiles: git's own files that memsync reads whole (the
// config, HEAD, info/exclude, the stash's reflog) replaced by a link to
// /dev/zero: every command ends, bounded, with a clear error or its result
// (git itself reads such a config as a bad line 1), never running out of
// memory.
func TestHostileGitFiles(t *testing.T) {
	env := testGitEnv(t)
	for _, name := range []string{"info/exclude", "config", "HEAD", "logs/refs/stash"} {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			repo := newRepo(t, env)
			memsyncIn(t, env, repo, "add", "kept one")
			p := filepath.Join(repo, ".git", filepath.FromSlash(name))
			_ = os.Remove(p)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
			// A missing link (git stash --all took it) is when the stash's reflog is read.
			if err := os.Remove(filepath.Join(repo, ".agent", "memories.md")); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"add", "added after"}, {"list"}, {"init"}, {"doctor"}, {"snapshot"}} {
				out, code := runBounded(t, env, repo, args...)
				if code < 0 || strings.Contains(out, "out of memory") || strings.Contains(out, "goroutine") {
					t.Errorf("memsync %v: exit %d\n%s", args, code, out)
				}
			}
		})
	}
}
