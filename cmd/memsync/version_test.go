package main

import (
	"context"
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

	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, wantLine := string(out), "memsync "+want+" "+runtime.Version()+"\n"; got != wantLine {
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
	if b.Version != want || b.GoVersion != runtime.Version() {
		t.Errorf("version --json = %+v, want version %s and go %s", b, want, runtime.Version())
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
