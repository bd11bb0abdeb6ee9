package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
)

// hookTest is a repository with memsync initialised, for the hook manager
// tests: real git, the real memsync binary.
type hookTest struct {
	t    *testing.T
	bin  string
	env  []string
	repo string
}

func newHookTest(t *testing.T) *hookTest {
	h := &hookTest{t: t, bin: memsyncBinary(t), env: testGitEnv(t)}
	h.repo = newRepo(t, h.env)
	return h
}

func (h *hookTest) run(name string, args ...string) string {
	h.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = h.repo, h.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// commitSnapshots adds an entry, commits, and checks that the post-commit
// hook took a snapshot holding it.
func (h *hookTest) commitSnapshots(lesson string) {
	h.t.Helper()
	h.run(h.bin, "add", lesson)
	h.run("git", "commit", "-q", "--allow-empty", "-m", lesson)
	if got := snapFile(h.t, h.env, h.repo, "refs/memsync/snapshots:memories.md"); !strings.Contains(got, lesson) {
		h.t.Fatalf("the snapshot after the commit lacks %q:\n%s", lesson, got)
	}
}

func readMarker(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// TestHuskyHooksStillRun: with husky v9 (the real package: core.hooksPath
// .husky/_, whose scripts source .husky/_/h, which runs .husky/NAME for
// NAME = basename "$0"), the user's .husky/post-commit runs before memsync's
// install, after it (with memsync's snapshot too), and after uninstall.
// .ci/run installs husky and sets MEMSYNC_TEST_HUSKY.
func TestHuskyHooksStillRun(t *testing.T) {
	husky := os.Getenv("MEMSYNC_TEST_HUSKY")
	if husky == "" {
		t.Skip("MEMSYNC_TEST_HUSKY is unset: set it to an installed husky package (npm install --prefix DIR husky@9.1.7; DIR/node_modules/husky), as .ci/run does")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("MEMSYNC_TEST_HUSKY is set but node is not on PATH")
	}
	h := newHookTest(t)
	h.run("node", filepath.Join(husky, "bin.js")) // what `npx husky` runs
	if got := strings.TrimSpace(h.run("git", "config", "core.hooksPath")); got != ".husky/_" {
		t.Fatalf("husky set core.hooksPath to %q", got)
	}
	marker := filepath.Join(t.TempDir(), "husky-ran")
	userHook := "echo \"post-commit $(basename \"$0\")\" >> '" + marker + "'\n"
	if err := os.WriteFile(filepath.Join(h.repo, ".husky", "post-commit"), []byte(userHook), 0o644); err != nil {
		t.Fatal(err)
	}
	h.run("git", "add", ".husky/post-commit") // tracked, as husky's hooks are
	h.run("git", "commit", "-q", "-m", "husky alone")
	if got := readMarker(t, marker); got != "post-commit post-commit\n" {
		t.Fatalf("husky's own setup does not run .husky/post-commit: %q", got)
	}

	h.run(h.bin, "init")
	h.run(h.bin, "hooks", "install")
	h.commitSnapshots("learned with husky")
	if got := readMarker(t, marker); got != strings.Repeat("post-commit post-commit\n", 2) {
		t.Fatalf(".husky/post-commit did not run after memsync hooks install: %q", got)
	}
	if st := h.run("git", "status", "--porcelain"); st != "" {
		t.Fatalf("install dirtied git status:\n%s", st)
	}

	h.run(h.bin, "hooks", "uninstall")
	h.run("git", "commit", "-q", "--allow-empty", "-m", "after uninstall")
	if got := readMarker(t, marker); got != strings.Repeat("post-commit post-commit\n", 3) {
		t.Fatalf(".husky/post-commit did not run after memsync hooks uninstall: %q", got)
	}
}

// TestManagerHooksStillRun: the hook scripts lefthook and pre-commit write
// into .git/hooks stay in place, byte for byte, and still run, with their
// own name and folder, once memsync is installed (it goes into the tool's
// chain: lefthook-local.yml, post-commit.legacy). The scripts keep the parts
// of the tools' templates that find the hook's name, folder and the tool;
// the tool itself is a script that records how it was called (memsync's
// run through the real tools: TestLefthookRerunKeepsMemsync,
// TestPreCommitNeighbour).
func TestManagerHooksStillRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		// hook is the script the tool writes for post-commit; TOOL stands
		// for the recorder's path.
		hook string
		// want is what the recorder must see (HOOKS: the hooks folder).
		want string
	}{{
		// evilmartians/lefthook internal/templates/hook.tmpl (lefthook 1.x,
		// commit b05b39361420bcf4ddb732f180cdef7e32c41149 and later: the
		// hook name is templated in, the tool found through LEFTHOOK_BIN or
		// PATH).
		name: "lefthook",
		hook: `#!/bin/sh

if [ "$LEFTHOOK" = "0" ]; then
  exit 0
fi

call_lefthook()
{
  if test -n "$LEFTHOOK_BIN"
  then
    "$LEFTHOOK_BIN" "$@"
  elif lefthook -h >/dev/null 2>&1
  then
    lefthook "$@"
  else
    echo "Can't find lefthook in PATH"
  fi
}

LEFTHOOK_BIN=TOOL call_lefthook run "post-commit" "$@"
`,
		want: "run post-commit\n",
	}, {
		// pre-commit/pre-commit pre_commit/resources/hook-tmpl (the bash
		// template of pre-commit 2.x to 4.x: the hook type is templated in,
		// the hooks folder taken from "$0", bash arrays).
		name: "pre-commit",
		hook: `#!/usr/bin/env bash
# File generated by pre-commit: https://pre-commit.com
# ID: 138fd403232d2ddd5efb44317e38bf03

# start templated
INSTALL_PYTHON=TOOL
ARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=post-commit)
# end templated

HERE="$(cd "$(dirname "$0")" && pwd)"
ARGS+=(--hook-dir "$HERE" -- "$@")

if [ -x "$INSTALL_PYTHON" ]; then
    exec "$INSTALL_PYTHON" -mpre_commit "${ARGS[@]}"
elif command -v pre-commit > /dev/null; then
    exec pre-commit "${ARGS[@]}"
else
    echo '` + "`pre-commit`" + ` not found.  Did you forget to activate your virtualenv?' 1>&2
    exit 1
fi
`,
		want: "-mpre_commit hook-impl --config=.pre-commit-config.yaml --hook-type=post-commit --hook-dir HOOKS --\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHookTest(t)
			tmp := t.TempDir()
			marker := filepath.Join(tmp, "ran")
			tool := filepath.Join(tmp, "tool")
			if err := os.WriteFile(tool, []byte("#!/bin/sh\necho \"$*\" >> '"+marker+"'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			hooksDir := filepath.Join(h.repo, ".git", "hooks")
			hook := strings.ReplaceAll(tc.hook, "TOOL", tool)
			if err := os.WriteFile(filepath.Join(hooksDir, "post-commit"), []byte(hook), 0o755); err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(tc.want, "HOOKS", hooksDir)
			h.run("git", "commit", "-q", "--allow-empty", "-m", "tool alone")
			if got := readMarker(t, marker); got != want {
				t.Fatalf("the tool's hook alone: recorded %q, want %q", got, want)
			}
			h.run(h.bin, "init")
			h.run(h.bin, "hooks", "install")
			if got := readMarker(t, filepath.Join(hooksDir, "post-commit")); got != hook {
				t.Fatalf("memsync's install changed the tool's script:\n%s", got)
			}
			h.run("git", "commit", "-q", "--allow-empty", "-m", "with memsync")
			if got := readMarker(t, marker); got != want+want {
				t.Fatalf("after memsync hooks install: recorded %q, want %q twice", got, want)
			}
		})
	}
}

// huskyPackage is the installed husky package (MEMSYNC_TEST_HUSKY), or the
// test skips saying so.
func huskyPackage(t *testing.T) string {
	t.Helper()
	husky := os.Getenv("MEMSYNC_TEST_HUSKY")
	if husky == "" {
		t.Skip("husky is absent: MEMSYNC_TEST_HUSKY is unset (npm install --prefix DIR husky@9.1.7; DIR/node_modules/husky), as .ci/run sets it")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("MEMSYNC_TEST_HUSKY is set but node is not on PATH")
	}
	return husky
}

// lefthookBinary is the real lefthook, or the test skips saying so.
func lefthookBinary(t *testing.T) string {
	t.Helper()
	return toolBinary(t, "MEMSYNC_TEST_LEFTHOOK", "lefthook",
		"set MEMSYNC_TEST_LEFTHOOK to its binary (npm install --ignore-scripts --prefix DIR lefthook@2.2.2; DIR/node_modules/lefthook-linux-x64/bin/lefthook), as .ci/run does")
}

// preCommitBinary is the real pre-commit, or the test skips saying so.
func preCommitBinary(t *testing.T) string {
	t.Helper()
	return toolBinary(t, "MEMSYNC_TEST_PRECOMMIT", "pre-commit", "install it (apt-get install pre-commit, or pip), as .ci/run does")
}

// toolBinary is a real peer tool: the path in the environment variable env,
// else name on PATH, or the test skips saying which tool and how to get it.
func toolBinary(t *testing.T, env, name, how string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skip(name + " is absent: " + how)
	}
	return p
}

// stderr runs a command in the repository and returns its stderr, failing
// the test when it fails.
func (h *hookTest) stderr(name string, args ...string) string {
	h.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = h.repo, h.env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		h.t.Fatalf("%s %v: %v\n%s%s", name, args, err, stdout.String(), stderr.String())
	}
	return stderr.String()
}

// commitMisses adds lesson, commits, and checks that no snapshot holds it.
func (h *hookTest) commitMisses(lesson string) {
	h.t.Helper()
	h.run(h.bin, "add", lesson)
	h.run("git", "commit", "-q", "--allow-empty", "-m", lesson)
	if got, _ := testgit.ShowErr(h.repo, h.env, "refs/memsync/snapshots:memories.md"); strings.Contains(got, lesson) {
		h.t.Fatalf("a hook memsync should not have now took a snapshot holding %q", lesson)
	}
}

// notRunWarned checks that a memsync command (list) warns that git does not
// run memsync's hooks and says how to fix it, and that doctor reports it as
// a problem with that fix.
func (h *hookTest) notRunWarned() {
	h.t.Helper()
	stderr := h.stderr(h.bin, "list")
	if !strings.Contains(stderr, "memsync hooks install") || strings.Count(stderr, "warning:") != 1 {
		h.t.Fatalf("list did not warn once that memsync's hooks are not run:\n%s", stderr)
	}
	cmd := exec.Command(h.bin, "doctor", "--json")
	cmd.Dir, cmd.Env = h.repo, h.env
	out, _ := cmd.Output()
	var rep struct {
		Checks []struct{ Check, Status, Detail, Fix string }
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		h.t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	for _, ch := range rep.Checks {
		if ch.Check == "hooks" && ch.Status == "problem" && strings.Contains(ch.Fix, "memsync hooks install") {
			return
		}
	}
	h.t.Fatalf("doctor does not report memsync's hooks not run as a problem with the fix:\n%s", out)
}

// quiet checks that a memsync command warns of nothing.
func (h *hookTest) quiet() {
	h.t.Helper()
	if stderr := h.stderr(h.bin, "list"); strings.Contains(stderr, "warning") {
		h.t.Fatalf("list warned:\n%s", stderr)
	}
}

// clean checks git status.
func (h *hookTest) clean() {
	h.t.Helper()
	if st := h.run("git", "status", "--porcelain"); st != "" {
		h.t.Fatalf("git status is not clean:\n%s", st)
	}
}

// noMemsyncFiles checks that no file in the hooks folders, .husky/ or the
// lefthook config and no line in info/exclude is memsync's.
func (h *hookTest) noMemsyncFiles() {
	h.t.Helper()
	for _, dir := range []string{".git/hooks", ".husky", ".husky/_", "."} {
		entries, _ := os.ReadDir(filepath.Join(h.repo, dir))
		for _, e := range entries {
			p := filepath.Join(h.repo, dir, e.Name())
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "memsync hook") || strings.Contains(e.Name(), "memsync") {
				h.t.Errorf("%s is memsync's, left after uninstall", p)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(h.repo, ".git", "info", "exclude")); strings.Contains(string(b), "memsync hooks") {
		h.t.Errorf("info/exclude keeps memsync's lines:\n%s", b)
	}
}

// TestHuskyRerunKeepsMemsync: with husky v9 installed first, husky's re-run
// (npm install runs it) leaves memsync's hooks running; installing memsync
// again, over an older memsync's leftover in .husky/_, changes nothing and
// never fails; git status stays clean; uninstall leaves husky working and
// nothing of memsync's.
func TestHuskyRerunKeepsMemsync(t *testing.T) {
	husky := huskyPackage(t)
	h := newHookTest(t)
	h.run("node", filepath.Join(husky, "bin.js"))
	marker := filepath.Join(t.TempDir(), "husky-ran")
	if err := os.WriteFile(filepath.Join(h.repo, ".husky", "pre-commit"), []byte("echo pre-commit >> '"+marker+"'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.run("git", "add", ".husky/pre-commit")
	h.run("git", "commit", "-q", "-m", "husky")
	// What an older memsync install left once husky ran again: husky's
	// stub, kept beside its own rewritten one.
	stub := filepath.Join(h.repo, ".husky", "_", "post-commit")
	if err := os.Link(stub, stub+".memsync-orig"); err != nil {
		t.Fatal(err)
	}
	h.run(h.bin, "init")
	h.run(h.bin, "hooks", "install")
	h.run("node", filepath.Join(husky, "bin.js")) // npm install
	h.commitSnapshots("learned before husky ran again")
	h.run(h.bin, "hooks", "install")
	h.commitSnapshots("learned after installing twice")
	h.clean()
	h.quiet()
	if got := readMarker(t, marker); got != "pre-commit\npre-commit\npre-commit\n" {
		t.Fatalf("husky's own hook ran %q", got)
	}
	h.run(h.bin, "hooks", "uninstall")
	h.commitMisses("learned after uninstall")
	if got := readMarker(t, marker); got != strings.Repeat("pre-commit\n", 4) {
		t.Fatalf("husky's own hook after memsync's uninstall ran %q", got)
	}
	h.noMemsyncFiles()
	h.clean()
}

// TestHuskyAfterMemsync: memsync installed first, then husky (core.hooksPath
// .husky/_): the next memsync command warns that git does not run memsync's
// hooks, doctor reports it as a problem with the fix, and the fix works.
func TestHuskyAfterMemsync(t *testing.T) {
	husky := huskyPackage(t)
	h := newHookTest(t)
	h.run(h.bin, "init")
	h.run(h.bin, "hooks", "install")
	h.quiet()
	h.run("node", filepath.Join(husky, "bin.js"))
	h.notRunWarned()
	h.run(h.bin, "hooks", "install")
	h.quiet()
	h.commitSnapshots("learned once memsync went into husky's hooks")
	h.clean()
}

// lefthookConfig commits a lefthook.yml whose post-commit appends to marker.
func (h *hookTest) lefthookConfig(marker string) {
	h.t.Helper()
	cfg := "post-commit:\n  commands:\n    mark:\n      run: echo post-commit >> '" + marker + "'\n"
	if err := os.WriteFile(filepath.Join(h.repo, "lefthook.yml"), []byte(cfg), 0o644); err != nil {
		h.t.Fatal(err)
	}
	h.run("git", "add", "lefthook.yml")
	h.run("git", "commit", "-q", "-m", "lefthook")
}

// TestLefthookRerunKeepsMemsync: with lefthook installed first, its re-run
// (lefthook install, which renames hooks it does not know to NAME.old)
// leaves memsync's hooks running, lefthook's too; a new worktree is linked;
// installing twice changes nothing; uninstall leaves lefthook working and
// nothing of memsync's.
func TestLefthookRerunKeepsMemsync(t *testing.T) {
	lh := lefthookBinary(t)
	h := newHookTest(t)
	h.env = append(h.env, "LEFTHOOK_BIN="+lh) // lefthook 1.x's scripts find it so (2.x's also by the path they hold)
	marker := filepath.Join(t.TempDir(), "lefthook-ran")
	h.lefthookConfig(marker)
	h.run(lh, "install")
	h.run(h.bin, "init")
	h.run(h.bin, "hooks", "install")
	h.run(lh, "install")
	h.commitSnapshots("learned after lefthook ran again")
	h.run(h.bin, "hooks", "install")
	h.run(lh, "install")
	h.commitSnapshots("learned after installing twice")
	if got := readMarker(t, marker); got != "post-commit\npost-commit\n" {
		t.Fatalf("lefthook's own post-commit ran %q", got)
	}
	h.clean()
	h.quiet()
	wt := filepath.Join(filepath.Dir(h.repo), "wt")
	h.run("git", "worktree", "add", "-q", wt)
	if fi, err := os.Lstat(filepath.Join(wt, ".agent", "memories.md")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the new worktree's memory is not linked: %v", err)
	}
	h.run(h.bin, "hooks", "uninstall")
	h.commitMisses("learned after uninstall")
	if got := readMarker(t, marker); got != strings.Repeat("post-commit\n", 3) {
		t.Fatalf("lefthook's own post-commit after memsync's uninstall ran %q", got)
	}
	h.noMemsyncFiles()
}

// TestLefthookAfterMemsync: memsync installed first, then lefthook (which
// moves memsync's post-commit to post-commit.old): the next memsync command
// warns, doctor reports the problem, and the fix works; after 'lefthook
// uninstall' the same.
func TestLefthookAfterMemsync(t *testing.T) {
	lh := lefthookBinary(t)
	h := newHookTest(t)
	h.env = append(h.env, "LEFTHOOK_BIN="+lh) // lefthook 1.x's scripts find it so (2.x's also by the path they hold)
	marker := filepath.Join(t.TempDir(), "lefthook-ran")
	h.lefthookConfig(marker)
	h.run(h.bin, "init")
	h.run(h.bin, "hooks", "install")
	h.run(lh, "install")
	h.notRunWarned()
	h.run(h.bin, "hooks", "install")
	h.quiet()
	h.commitSnapshots("learned with lefthook")
	h.clean()
	h.run(lh, "uninstall")
	h.notRunWarned()
	h.run(h.bin, "hooks", "install")
	h.quiet()
	h.commitSnapshots("learned after lefthook left")
	h.clean()
}

// TestPreCommitNeighbour: pre-commit (its post-commit hook type) and memsync
// in either order: both run; 'memsync hooks uninstall' stops memsync and
// leaves pre-commit; 'pre-commit uninstall' stops pre-commit and leaves
// memsync.
func TestPreCommitNeighbour(t *testing.T) {
	pc := preCommitBinary(t)
	h := newHookTest(t)
	marker := filepath.Join(t.TempDir(), "pre-commit-ran")
	cfg := `repos:
  - repo: local
    hooks:
      - id: mark
        name: mark
        entry: sh -c 'echo post-commit >> "$0"' ` + marker + `
        language: system
        always_run: true
        pass_filenames: false
        stages: [post-commit]
`
	if err := os.WriteFile(filepath.Join(h.repo, ".pre-commit-config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	h.run("git", "add", ".pre-commit-config.yaml")
	h.run("git", "commit", "-q", "-m", "pre-commit")
	runs := func(n int) {
		t.Helper()
		if got := readMarker(t, marker); got != strings.Repeat("post-commit\n", n) {
			t.Fatalf("pre-commit's hook ran %q, want %d times", got, n)
		}
	}
	h.run(pc, "install", "-t", "post-commit")
	h.run(h.bin, "init")
	h.run(h.bin, "hooks", "install")
	h.commitSnapshots("learned with pre-commit")
	runs(1)
	h.run(h.bin, "hooks", "install")
	h.commitSnapshots("learned after installing twice")
	runs(2)
	h.quiet()
	h.run(h.bin, "hooks", "uninstall")
	h.commitMisses("learned after memsync's uninstall")
	runs(3)

	h.run(h.bin, "hooks", "install")
	h.run(pc, "uninstall", "-t", "post-commit")
	h.commitSnapshots("learned after pre-commit's uninstall")
	runs(3)
	h.run(pc, "install", "-t", "post-commit") // memsync first, then pre-commit
	h.commitSnapshots("learned after pre-commit came back")
	runs(4)
	h.quiet()
	h.clean()
}

// TestGitAmSnapshots: a patch applied with git am is snapshotted
// (post-applypatch).
func TestGitAmSnapshots(t *testing.T) {
	h := newHookTest(t)
	h.run(h.bin, "init")
	h.run(h.bin, "hooks", "install")
	if err := os.WriteFile(filepath.Join(h.repo, "f.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.run("git", "add", "f.txt")
	h.run("git", "commit", "-q", "-m", "f")
	out := h.run("git", "format-patch", "-1", "-o", t.TempDir(), "HEAD")
	h.run("git", "reset", "-q", "--hard", "HEAD~1")
	h.run(h.bin, "add", "learned while applying a patch")
	h.run("git", "am", "-q", strings.TrimSpace(out))
	if got := snapFile(h.t, h.env, h.repo, "refs/memsync/snapshots:memories.md"); !strings.Contains(got, "learned while applying a patch") {
		t.Fatalf("git am took no snapshot:\n%s", got)
	}
}
