package main

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync"
)

// TestVersionLdflags: a binary built with -ldflags "-X main.version=..."
// reports that version in 'memsync --version', 'memsync version --json' and
// the MCP server's initialize answer.
func TestVersionLdflags(t *testing.T) {
	const want = "v9.8.7-ldflags-test"
	bin := filepath.Join(t.TempDir(), "memsync")
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-ldflags", "-X main.version="+want, "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	dir := t.TempDir()

	// The commit is there only when go build stamped one: a build inside a
	// git checkout (dirty or not), not in a tree without .git or with
	// -buildvcs=false. The binary's own build info says which.
	commit, modified := builtCommit(t, bin)
	wantLine := "memsync " + want
	if commit != "" {
		wantLine += " (commit " + commit
		if modified {
			wantLine += ", modified"
		}
		wantLine += ")"
	}
	wantLine += " " + runtime.Version() + "\n"
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != wantLine {
		t.Errorf("memsync --version = %q, want %q", got, wantLine)
	}
	out, err = exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var b memsync.BuildInfo
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("version --json: %v\n%s", err, out)
	}
	if b.Version != want || b.GoVersion != runtime.Version() || b.Commit != commit || b.Modified != modified {
		t.Errorf("version --json = %+v, want version %s, commit %q (modified %v) and go %s", b, want, commit, modified, runtime.Version())
	}

	cmd := exec.Command(bin, "mcp")
	cmd.Dir, cmd.Env = dir, env
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	if got := cs.InitializeResult().ServerInfo.Version; got != want {
		t.Errorf("MCP server reports version %q, want %q", got, want)
	}
}

// builtCommit is the revision go build recorded in bin, and whether the
// tree was modified; "" when it recorded none.
func builtCommit(t *testing.T, bin string) (commit string, modified bool) {
	t.Helper()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return commit, modified
}
