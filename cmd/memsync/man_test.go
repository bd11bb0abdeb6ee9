//go:build !urfave_cli_no_docs

// The man page is rendered here, in a test, never in the binary: a release
// build with -tags urfave_cli_no_docs leaves urfave/cli's man and markdown
// generator out, so that memsync starts without it.

//go:generate go test . -run ^TestManPage$ -update

package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// manPage is the path of the man page shipped in docs/.
var manPage = filepath.Join(repoRoot, "docs", "memsync.1")

// TestManPage: docs/memsync.1 is the man page urfave/cli renders from the
// app's commands and flags as they are (go generate, or this test with
// -update, rewrites it), and man and groff read it without a warning.
func TestManPage(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	describeAll(app)
	man, err := app.ToManWithSection(1)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(manPage, []byte(man), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shipped, err := os.ReadFile(manPage)
	if err != nil {
		t.Fatal(err)
	}
	if string(shipped) != man {
		t.Fatalf("%s is not the man page of the commands as they are: run 'go generate ./cmd/memsync' and commit it", manPage)
	}
	for _, want := range []string{".TH memsync 1", "\n.SH NAME\nmemsync \\- ", "\n.SH worktree\n", "\\fB--no-pager\\fP"} {
		if !strings.Contains(man, want) {
			t.Errorf("the man page lacks %q", want)
		}
	}
	if strings.Contains(man, "\n.SH hook\n") {
		t.Error("the man page lists the plumbing command hook")
	}

	// groff parses it with every warning on, and man renders it.
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed (apt-get install groff-base): the man page was not rendered")
	}
	var stderr bytes.Buffer
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", manPage)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("groff -man -ww: %v\n%s", err, stderr.String())
	}
	manCmd, err := exec.LookPath("man")
	if err != nil {
		t.Skip("man is not installed (apt-get install man-db): groff read the page, man was not run")
	}
	cmd = exec.Command(manCmd, "-l", manPage)
	cmd.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80", "LANG=C.UTF-8")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("man -l %s: %v", manPage, err)
	}
	for _, want := range []string{"NAME", "memsync - one shared, durable memory", "GLOBAL OPTIONS", "COMMANDS", "inject"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("man -l renders no %q:\n%s", want, out)
		}
	}
}
