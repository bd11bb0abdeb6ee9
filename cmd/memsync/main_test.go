package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/lock"
)

// update rewrites the files the tests generate and check, where they run:
// docs/memsync.1 (TestManPage) and docs/ui.png (TestUIBrowser).
var update = flag.Bool("update", false, "rewrite the generated files the tests check: docs/memsync.1 (TestManPage), docs/ui.png (TestUIBrowser)")

// cleanupM removes what the tests built once they all ran.
type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	code := c.m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	return code
}

func TestMain(m *testing.M) {
	testscript.Main(cleanupM{m}, map[string]func(){
		"memsync": func() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
		// holdlock PATH DURATION takes the writers' lock like memsync does and
		// keeps it: a real second process for lock-timeout scripts.
		"holdlock": func() {
			d, _ := time.ParseDuration(os.Args[2])
			l, err := lock.Exclusive(context.Background(), os.Args[1], time.Second)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			_ = os.WriteFile(os.Args[1]+".held", nil, 0o644)
			time.Sleep(d)
			_ = l.Release()
			os.Exit(0)
		},
	})
}

// gitEnv makes git in tests independent of the machine's configuration.
func gitEnv(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, ".home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	// Packing and hooks run in the foreground, within the script (testGitEnv).
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[maintenance]\n\tautoDetach = false\n"), 0o644); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"XDG_DATA_HOME":       filepath.Join(home, ".local", "share"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME":     "memsync test",
		"GIT_AUTHOR_EMAIL":    "test@memsync.invalid",
		"GIT_COMMITTER_NAME":  "memsync test",
		"GIT_COMMITTER_EMAIL": "test@memsync.invalid",
		"MEMSYNC_HOOKS_WAIT":  "1", // a commit's snapshot is there when git returns
	} {
		env.Setenv(k, v)
	}
	// A hook's or a developer's git variables must not leak into the scripts.
	vars := env.Vars[:0]
	for _, kv := range env.Vars {
		if !hasAnyPrefix(kv, "GIT_DIR=", "GIT_WORK_TREE=", "GIT_INDEX_FILE=", "GIT_COMMON_DIR=", "MEMSYNC_GLOBAL_DIR=") {
			vars = append(vars, kv)
		}
	}
	env.Vars = vars
	return nil
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:   "testdata/script",
		Setup: gitEnv,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// waitfile PATH waits (up to 10 s) until PATH exists.
			"waitfile": func(ts *testscript.TestScript, neg bool, args []string) {
				p := ts.MkAbs(args[0])
				for i := 0; i < 1000; i++ {
					if _, err := os.Stat(p); err == nil {
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
				ts.Fatalf("%s did not appear", p)
			},
			// capture NAME sets the variable NAME to the last command's stdout,
			// trimmed (an ID printed by add, to use later in the script).
			"capture": func(ts *testscript.TestScript, neg bool, args []string) {
				ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
			},
			// mode PATH PERM: the file's permission bits are PERM (octal).
			"mode": func(ts *testscript.TestScript, neg bool, args []string) {
				fi, err := os.Stat(ts.MkAbs(args[0]))
				ts.Check(err)
				if got := fmt.Sprintf("%04o", fi.Mode().Perm()); got != args[1] {
					ts.Fatalf("%s has mode %s, want %s", args[0], got, args[1])
				}
			},
			// snapfile REV:PATH prints a memory file a snapshot holds, rebuilt
			// with plain git (testgit.Show).
			"snapfile": func(ts *testscript.TestScript, neg bool, args []string) {
				out, err := testgit.ShowErr(ts.MkAbs("."), nil, args[0])
				if neg {
					if err == nil {
						ts.Fatalf("snapfile %s: found", args[0])
					}
					return
				}
				ts.Check(err)
				_, _ = ts.Stdout().Write([]byte(out))
			},
			// count N FILE PATTERN: FILE holds exactly N lines starting with PATTERN.
			"count": func(ts *testscript.TestScript, neg bool, args []string) {
				n := 0
				for _, l := range strings.Split(ts.ReadFile(args[1]), "\n") {
					if strings.HasPrefix(l, args[2]) {
						n++
					}
				}
				if fmt.Sprint(n) != args[0] {
					ts.Fatalf("%s has %d lines starting with %q, want %s", args[1], n, args[2], args[0])
				}
			},
		},
	})
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if len(s) >= len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}
