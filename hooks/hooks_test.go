package hooks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/gitrepo"
	"github.com/memsync/memsync/internal/testgit"
)

func testRepo(t *testing.T) *gitrepo.Repo {
	t.Helper()
	dir := testgit.Isolate(t)
	testgit.Git(t, dir, "init", "-q", ".")
	r, err := gitrepo.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type fileState struct {
	mode os.FileMode
	data []byte
	link string
}

func state(t *testing.T, path string) fileState {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	s := fileState{mode: fi.Mode()}
	if fi.Mode()&os.ModeSymlink != 0 {
		s.link, _ = os.Readlink(path)
		return s
	}
	s.data, _ = os.ReadFile(path)
	return s
}

// TestInstallUninstallRestoresExactly: a hook file with an unusual mode and
// a hook that is a symlink are chained, and come back exactly.
func TestInstallUninstallRestoresExactly(t *testing.T) {
	r := testRepo(t)
	dir := filepath.Join(r.CommonDir, "hooks")
	commit := filepath.Join(dir, "post-commit")
	if err := os.WriteFile(commit, []byte("#!/bin/sh\necho mine\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(commit, 0o701); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(t.TempDir(), "shared-hook")
	if err := os.WriteFile(shared, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	merge := filepath.Join(dir, "post-merge")
	if err := os.Symlink(shared, merge); err != nil {
		t.Fatal(err)
	}
	before := map[string]fileState{commit: state(t, commit), merge: state(t, merge)}

	got, hs, err := Install(r, "/usr/local/bin/memsync")
	if err != nil || got != dir || len(hs) != len(Names()) {
		t.Fatalf("Install: %s %v %v", got, hs, err)
	}
	for path, st := range before {
		if s := state(t, path+OrigSuffix); s.mode != st.mode || !bytes.Equal(s.data, st.data) || s.link != st.link {
			t.Fatalf("%s kept as %+v, was %+v", path, s, st)
		}
	}
	rep, err := Report(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range rep.Hooks {
		want := StateInstalled
		if h.Name == "post-commit" || h.Name == "post-merge" {
			want = StateChained
		}
		if h.State != want {
			t.Fatalf("%s is %s, want %s", h.Name, h.State, want)
		}
	}
	// Again: nothing changes.
	snap := state(t, commit)
	if _, hs, err := Install(r, "/usr/local/bin/memsync"); err != nil || hs[0].Action != "unchanged" {
		t.Fatalf("second install: %v %v", hs, err)
	}
	if s := state(t, commit); !bytes.Equal(s.data, snap.data) {
		t.Fatal("second install changed the script")
	}

	if _, _, err := Uninstall(r); err != nil {
		t.Fatal(err)
	}
	for path, st := range before {
		if s := state(t, path); s.mode != st.mode || !bytes.Equal(s.data, st.data) || s.link != st.link {
			t.Fatalf("%s restored as %+v, was %+v", path, s, st)
		}
		if _, err := os.Lstat(path + OrigSuffix); err == nil {
			t.Fatalf("%s left behind", path+OrigSuffix)
		}
	}
	for _, n := range []string{"post-rewrite", "post-checkout"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			t.Fatalf("%s not removed", n)
		}
	}
}

// TestScriptWithoutMemsync: with memsync gone, a hook prints one line,
// still runs the chained hook and keeps its exit status.
func TestScriptWithoutMemsync(t *testing.T) {
	r := testRepo(t)
	dir := filepath.Join(r.CommonDir, "hooks")
	if err := os.WriteFile(filepath.Join(dir, "post-checkout"), []byte("#!/bin/sh\necho chained \"$@\"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Install(r, "/nonexistent/memsync"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"post-commit": 0, "post-checkout": 3} {
		cmd := exec.Command(filepath.Join(dir, name), "a", "b", "1")
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Fatalf("%s exited %d, want %d", name, code, want)
		}
		if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "memsync not found") {
			t.Fatalf("%s stderr: %q", name, stderr.String())
		}
		if name == "post-checkout" && stdout.String() != "chained a b 1\n" {
			t.Fatalf("chained hook output %q", stdout.String())
		}
	}
}

// A handler that runs out of time is stopped: Run cancels its context and
// returns only after it returned, with the one warning line; nothing of it
// runs on.
func TestRunStopsItsHandler(t *testing.T) {
	var out bytes.Buffer
	var finished atomic.Bool
	Run(context.Background(), "post-commit", func(ctx context.Context) string {
		<-ctx.Done()
		time.Sleep(20 * time.Millisecond) // winding down after the cancel
		finished.Store(true)
		return "not printed"
	}, Options{Stderr: &out, Timeout: 10 * time.Millisecond})
	if !finished.Load() {
		t.Fatal("Run returned with its handler still running")
	}
	if out.String() != "memsync: warning: post-commit hook: gave up after 10ms; the memory is unchanged by it\n" {
		t.Fatalf("output %q", out.String())
	}
	// A handler done in time: its warning, once.
	out.Reset()
	Run(context.Background(), "post-merge", func(context.Context) string { return "trouble" }, Options{Stderr: &out})
	if out.String() != "memsync: warning: post-merge hook: trouble\n" {
		t.Fatalf("output %q", out.String())
	}
}

func TestDirHooksPath(t *testing.T) {
	r := testRepo(t)
	for _, c := range [][2]string{
		{"", filepath.Join(r.CommonDir, "hooks")},
		{".githooks", filepath.Join(r.WorkTree, ".githooks")},
		{"../elsewhere/x", filepath.Join(filepath.Dir(r.WorkTree), "elsewhere", "x")},
		{"/abs/olute/hooks/", "/abs/olute/hooks"},
	} {
		value, want := c[0], c[1]
		if value != "" {
			if out, err := exec.Command("git", "-C", r.WorkTree, "config", "core.hooksPath", value).CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
		}
		if got := Dir(r); got != want {
			t.Errorf("core.hooksPath %q: %s; want %s", value, got, want)
		}
	}
}

// TestDirReadsConfigFiles: Dir finds core.hooksPath in the global config
// ("~/" expanded) and in a linked worktree's config.worktree, without
// spawning git (git is off PATH).
func TestDirReadsConfigFiles(t *testing.T) {
	r := testRepo(t)
	home := os.Getenv("HOME")
	testgit.Git(t, r.WorkTree, "config", "--global", "core.hooksPath", "~/global-hooks")
	testgit.Git(t, r.WorkTree, "commit", "-q", "--allow-empty", "-m", "init")
	linkedTop := filepath.Join(filepath.Dir(r.WorkTree), "linked")
	testgit.Git(t, r.WorkTree, "worktree", "add", "-q", linkedTop)
	testgit.Git(t, r.WorkTree, "config", "extensions.worktreeConfig", "true")
	testgit.Git(t, linkedTop, "config", "--worktree", "core.hooksPath", "wt-hooks")
	linked, err := gitrepo.Discover(linkedTop)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	if got, want := Dir(r), filepath.Join(home, "global-hooks"); got != want {
		t.Errorf("global ~/ value: %s, want %s", got, want)
	}
	if got, want := Dir(linked), filepath.Join(linkedTop, "wt-hooks"); got != want {
		t.Errorf("linked worktree's config.worktree: %s, want %s", got, want)
	}
}

// TestOutdatedScript: the scripts install writes are today's, also one
// that chains a hook that was there and one whose memsync path needs
// quoting; a script an older memsync wrote (a post-commit that git waits
// for, or one without the bin= line) is reported outdated, alone, until
// install writes it again.
func TestOutdatedScript(t *testing.T) {
	r := testRepo(t)
	dir := filepath.Join(r.CommonDir, "hooks")
	if err := os.WriteFile(filepath.Join(dir, "post-merge"), []byte("#!/bin/sh\necho mine\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := "/opt/it's here/memsync"
	if _, _, err := Install(r, bin); err != nil {
		t.Fatal(err)
	}
	outdated := func() []string {
		t.Helper()
		st, err := Report(r)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, h := range st.Hooks {
			if h.Outdated {
				names = append(names, h.Name)
			}
		}
		return names
	}
	if got := outdated(); len(got) != 0 {
		t.Fatalf("outdated right after install: %v", got)
	}
	older := `#!/bin/sh
` + Marker + `
bin=` + shellQuote(bin) + `
memsync=$bin
[ -x "$memsync" ] || memsync=$(command -v memsync 2>/dev/null) || memsync=
if [ ! -x "$0` + OrigSuffix + `" ] && [ -n "$memsync" ]; then
	exec "$memsync" hook post-commit "$@" </dev/null
fi
exit 0
`
	if err := os.WriteFile(filepath.Join(dir, "post-commit"), []byte(older), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "post-rewrite"), []byte("#!/bin/sh\n"+Marker+"\nexec memsync hook post-rewrite \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(outdated(), " "); got != "post-commit post-rewrite" {
		t.Fatalf("outdated: %q", got)
	}
	if _, _, err := Install(r, bin); err != nil {
		t.Fatal(err)
	}
	if got := outdated(); len(got) != 0 {
		t.Fatalf("outdated after install: %v", got)
	}
}

// TestQuotedAfter: the memsync path a script, husky's block or lefthook's
// command names is read back as it was written, quotes and all, so that
// what install writes today is never taken for outdated; an older line (a
// post-commit git waits for) is.
func TestQuotedAfter(t *testing.T) {
	for _, bin := range []string{"/usr/local/bin/memsync", "/opt/it's here/memsync", "/x/''/'y'", "/a b/\"c\"/$d"} {
		for _, name := range Names() {
			if got := quotedAfter(Script(name, bin, nil), "bin="); got != bin {
				t.Fatalf("script: %q, want %q", got, bin)
			}
			block := huskyBlock(name, bin)
			if got := quotedAfter(block, "m="); got != bin || huskyBlock(name, got) != block {
				t.Fatalf("husky: %q, want %q", got, bin)
			}
			run := lefthookRun(name, bin)
			if got := quotedAfter(run, "m="); got != bin || lefthookRun(name, got) != run {
				t.Fatalf("lefthook: %q, want %q", got, bin)
			}
		}
	}
	older := "m='/usr/local/bin/memsync'; [ -x \"$m\" ] || m=memsync; \"$m\" hook post-commit {0} </dev/null"
	if bin := quotedAfter(older, "m="); lefthookRun("post-commit", bin) == older {
		t.Fatal("an older lefthook command taken for today's")
	}
	if quotedAfter("bin=/unquoted\n", "bin=") != "" || quotedAfter("bin='open\n", "bin=") != "" {
		t.Fatal("a value not quoted as shellQuote quotes was read")
	}
}

// TestForegroundHookNeverFails: a memsync that fails (a binary cut short
// by an upgrade under way, an older memsync on PATH that knows no 'hook':
// here one that exits 2) does not fail the hooks git waits for: git
// checkout would exit with post-checkout's status, and husky runs its
// hook files with sh -e, where it would end the user's own lines after
// memsync's block. A chained hook's status is kept as ever.
func TestForegroundHookNeverFails(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "memsync")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"memsync: unknown command $1\" >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run := func(name, script string, env ...string) (int, string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/bin/sh", "-e", p, "0000000000000000000000000000000000000000", "1111111111111111111111111111111111111111", "1")
		cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	for _, name := range []string{"post-checkout", "post-merge", "post-commit"} {
		if code, out := run(name, Script(name, bin, nil), "MEMSYNC_HOOKS_WAIT=1"); code != 0 {
			t.Errorf("memsync's %s script exited %d:\n%s", name, code, out)
		}
		if code, out := run(name, "#!/usr/bin/env sh\n"+huskyBlock(name, bin)+"echo the user own line\n", "MEMSYNC_HOOKS_WAIT=1"); code != 0 || !strings.Contains(out, "the user own line") {
			t.Errorf("husky's %s (sh -e) exited %d:\n%s", name, code, out)
		}
	}
}
