package hooks

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestChainedHookKeepsItsName: a chained shell script runs with "$0" the
// hook's own path (hook managers dispatch on it: husky v9 runs
// .husky/$(basename "$0")), its arguments, its shell (bash arrays work under
// #!/usr/bin/env bash, -e from the "#!" line holds) and its exit status.
func TestChainedHookKeepsItsName(t *testing.T) {
	for _, tc := range []struct {
		name, hook string
		code       int
	}{
		{"sh", "#!/bin/sh\necho \"$0|$*\"\n", 0},
		{"no #! line", "echo \"$0|$*\"\nexit 4\n", 4},
		{"env bash", "#!/usr/bin/env bash\na=(x y)\necho \"$0|$*|${a[1]}\"\n", 0},
		{"sh -e", "#!/bin/sh -e\necho \"$0|$*\"\nfalse\necho not reached\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testRepo(t)
			dir := filepath.Join(r.CommonDir, "hooks")
			path := filepath.Join(dir, "post-checkout")
			if err := os.WriteFile(path, []byte(tc.hook), 0o755); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Install(r, "/nonexistent/memsync"); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(path, "a b", "c")
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			err := cmd.Run()
			var ee *exec.ExitError
			if code := 0; errors.As(err, &ee) {
				code = ee.ExitCode()
				if code != tc.code {
					t.Fatalf("exit %d, want %d", code, tc.code)
				}
			} else if err != nil || tc.code != 0 {
				t.Fatalf("err %v, want exit %d", err, tc.code)
			}
			want := path + "|a b c"
			if tc.name == "env bash" {
				want += "|y"
			}
			if got := strings.TrimSpace(stdout.String()); got != want {
				t.Fatalf("the chained hook printed %q, want %q", got, want)
			}
		})
	}
}

// TestChainCommand: how each kind of kept hook is run.
func TestChainCommand(t *testing.T) {
	direct := `"$0` + OrigSuffix + `" "$@"`
	sourced := ` -c '. "$0` + OrigSuffix + `"' "$0" "$@"`
	for hook, want := range map[string]string{
		"#!/bin/sh\n":                 `'/bin/sh'` + sourced,
		"#!/bin/sh -e\n":              `'/bin/sh' '-e'` + sourced,
		"#!/usr/bin/env sh\n. x\n":    `'/usr/bin/env' 'sh'` + sourced,
		"#!/usr/bin/env bash\r\n":     `'/usr/bin/env' 'bash'` + sourced,
		"#!/bin/bash\n":               `'/bin/bash'` + sourced,
		"echo no shebang\n":           `'/bin/sh'` + sourced,
		"#!/usr/bin/env python3\n":    direct,
		"#!/usr/bin/env -S bash -e\n": direct,
		"#!/bin/zsh\n":                direct, // zsh sets $0 to the sourced file
		"\x7fELF\x02\x01\x01\x00\x00": direct,
		"":                            direct,
	} {
		if got := chainCommand([]byte(hook)); got != want {
			t.Errorf("%q: %s, want %s", hook, got, want)
		}
	}
	if got := chainCommand(nil); got != direct {
		t.Errorf("nil: %s", got)
	}
}

// FuzzChainCommand: whatever the first line of a kept hook, the command that
// runs it is valid sh (sh -n) and one line.
func FuzzChainCommand(f *testing.F) {
	for _, s := range []string{"#!/bin/sh", "#!/bin/sh -e", "#!/usr/bin/env bash\r", "#!/bin/bash -eu'x", "echo hi",
		"#!/usr/bin/env python3", "#! /bin/dash\t-x", "#!/bin/sh \x00", "\x7fELF\x02", "#!/bin/sh \x85\u2028", ""} {
		f.Add(s)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		f.Skip("no sh")
	}
	f.Fuzz(func(t *testing.T, first string) {
		cmd := chainCommand([]byte(first + "\nexit 0\n"))
		if strings.ContainsAny(cmd, "\n\x00") {
			t.Fatalf("%q: command holds a newline or a NUL byte: %q", first, cmd)
		}
		if out, err := exec.Command(sh, "-n", "-c", cmd).CombinedOutput(); err != nil {
			t.Fatalf("%q: sh -n refuses %q: %v\n%s", first, cmd, err, out)
		}
	})
}

// TestEditLefthook: memsync's commands go into a user's lefthook-local.yml
// beside what is there (comments too), and come out leaving it as it was.
func TestEditLefthook(t *testing.T) {
	user := "# mine\npre-push:\n  commands:\n    lint:\n      run: make lint\npost-commit:\n  commands:\n    mark:\n      run: echo hi\n"
	run := map[string]string{}
	for _, n := range Names() {
		run[n] = ""
	}
	run["post-commit"] = lefthookRun("post-commit", "/bin/memsync")
	added, ours, err := editLefthook([]byte(user), run)
	if err != nil || ours {
		t.Fatalf("add: ours %v, err %v", ours, err)
	}
	for _, want := range []string{"# mine", "run: make lint", "run: echo hi", "hook post-commit {0}"} {
		if !strings.Contains(string(added), want) {
			t.Fatalf("added config lacks %q:\n%s", want, added)
		}
	}
	run["post-commit"] = ""
	removed, ours, err := editLefthook(added, run)
	if err != nil || ours || string(removed) != user {
		t.Fatalf("remove: ours %v, err %v, got\n%s\nwant\n%s", ours, err, removed, user)
	}
	run["post-merge"] = lefthookRun("post-merge", "/bin/memsync")
	alone, _, _ := editLefthook(nil, run)
	run["post-merge"] = ""
	if empty, ours, err := editLefthook(alone, run); err != nil || !ours || len(empty) != 0 {
		t.Fatalf("memsync's own config: ours %v, err %v, left %q", ours, err, empty)
	}
}
