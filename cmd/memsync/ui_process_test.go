package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// uiProcess is a running `memsync ui`.
type uiProcess struct {
	cmd     *exec.Cmd
	started uiStarted     // what it printed: the URL (with the token), the address, the memory
	base    string        // http://127.0.0.1:PORT
	stderr  *lockedBuffer // what it says to people
	done    chan struct{} // closed when the process has ended
	err     error         // how it ended
}

// startUI starts `memsync ui ARGS...` in dir as a real process and reads
// the address it prints (as text, or with --json as JSON).
func startUI(t *testing.T, env []string, dir string, args ...string) *uiProcess {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), append([]string{"ui"}, args...)...)
	p := &uiProcess{cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Dir, cmd.Env, cmd.Stderr = dir, env, p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	printed := make(chan uiStarted, 1)
	go func() {
		br := bufio.NewReader(out)
		var s uiStarted
		if slices.Contains(args, "--json") {
			_ = json.NewDecoder(br).Decode(&s) // what it buffered past the value is no output of interest
		} else {
			line, _ := br.ReadString('\n')
			s.URL, _ = strings.CutPrefix(strings.TrimSpace(line), "memsync ui: ")
		}
		printed <- s
		_, _ = io.Copy(io.Discard, br) // so the process never blocks on a full pipe
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	select {
	case p.started = <-printed:
		base, _, hasToken := strings.Cut(p.started.URL, "/?token=")
		if !hasToken || !strings.HasPrefix(base, "http://127.0.0.1:") {
			t.Fatalf("memsync ui printed %+v\n%s", p.started, p.stderr)
		}
		p.base = base
	case <-time.After(20 * time.Second):
		t.Fatalf("memsync ui printed no address in 20s\n%s", p.stderr)
	}
	return p
}

// stop interrupts the page as Ctrl-C does: it ends promptly with the
// shell's code for an interrupted command, and its port is closed.
func (p *uiProcess) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
		var ee *exec.ExitError
		if !errors.As(p.err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("memsync ui after Ctrl-C: %v, want exit code 130\n%s", p.err, p.stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("memsync ui still runs 10s after Ctrl-C")
	}
	if c, err := net.DialTimeout("tcp", strings.TrimPrefix(p.base, "http://"), time.Second); err == nil {
		_ = c.Close()
		t.Fatal("the port still answers after Ctrl-C")
	}
}

// TestUICommand: memsync ui as a person runs it: --json says where it
// listens; the printed URL opens the page, a request without its token is
// refused; the browser opener gets the URL, and without one the address is
// printed only; Ctrl-C ends it; bad addresses and a busy port are errors
// with the documented exit codes.
func TestUICommand(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsyncIn(t, env, repo, "add", "a fact for the page")

	ui := startUI(t, env, repo, "--json", "--no-open")
	if ui.started.Addr != strings.TrimPrefix(ui.base, "http://") || filepath.Base(ui.started.Memory) != "memories.md" {
		t.Fatalf("--json printed %+v", ui.started)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	get := func(c *http.Client, url string) (int, string) {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(http.DefaultClient, ui.base+"/"); code != http.StatusForbidden || strings.Contains(body, "a fact") {
		t.Fatalf("without the token: %d\n%s", code, body)
	}
	if code, body := get(&http.Client{Jar: jar}, ui.started.URL); code != http.StatusOK || !strings.Contains(body, "a fact for the page") {
		t.Fatalf("the printed URL: %d\n%s", code, body)
	}
	ui.stop(t)

	// A browser opener on PATH opens the page, without the token in its
	// argv (which ps shows every user): it gets a file only this user may
	// read, which leads to the URL, and which is gone once the page stops.
	// With no opener, the address is printed only and the page runs all
	// the same.
	bin := t.TempDir()
	opened := filepath.Join(t.TempDir(), "opened")
	script := "#!/bin/sh\n{ printf '%s\\n' \"$*\"; printf '%s %s\\n' \"$(stat -c '%a' \"$1\")\" \"$(stat -c '%a' \"$(dirname \"$1\")\")\"; cat \"$1\"; } > " + opened + ".tmp\nmv " + opened + ".tmp " + opened + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"git", "stat", "cat", "mv", "dirname"} {
		p, err := exec.LookPath(tool)
		if tool != "git" && err != nil {
			t.Skipf("no %s on PATH for the fake opener", tool)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	withPath := func(path string) []string {
		out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "PATH=") })
		return append(out, "PATH="+path)
	}
	if runtime.GOOS != "darwin" { // xdg-open's turn (macOS has open)
		ui = startUI(t, withPath(bin), repo)
		_, token, _ := strings.Cut(ui.started.URL, "?token=")
		var got []string
		for deadline := time.Now().Add(10 * time.Second); ; {
			if b, err := os.ReadFile(opened); err == nil {
				got = strings.SplitN(string(b), "\n", 3)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("xdg-open was not run\n%s", ui.stderr)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if len(got) < 3 || strings.Contains(got[0], token) || !filepath.IsAbs(got[0]) {
			t.Fatalf("xdg-open's argv and what it read: %q (the token is %s)", got, token)
		}
		if got[1] != "600 700" {
			t.Errorf("the file xdg-open got, and its folder, have modes %s, want 600 700", got[1])
		}
		if !strings.Contains(got[2], html.EscapeString(ui.started.URL)) {
			t.Errorf("the file xdg-open got does not lead to %s:\n%s", ui.started.URL, got[2])
		}
		if !strings.Contains(ui.stderr.String(), "opened with xdg-open") {
			t.Errorf("stderr: %s", ui.stderr)
		}
		ui.stop(t)
		if _, err := os.Stat(filepath.Dir(got[0])); !os.IsNotExist(err) {
			t.Errorf("the file with the token is left after the page stopped: %v", err)
		}
	}
	noOpener := t.TempDir()
	if err := os.Symlink(gitPath, filepath.Join(noOpener, "git")); err != nil {
		t.Fatal(err)
	}
	ui = startUI(t, withPath(noOpener), repo)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(ui.stderr.String(), "Ctrl-C stops the page") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(ui.stderr.String(), "no browser opener (xdg-open, open) found: open that address in a browser") {
		t.Errorf("without an opener, stderr: %s", ui.stderr)
	}
	ui.stop(t)

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	outside := t.TempDir()
	for _, c := range []struct {
		dir  string
		args []string
		code int
		want string
	}{
		{repo, []string{"ui", "--no-open", "--addr", busy.Addr().String()}, exitError, "hint: pick another port"},
		{repo, []string{"ui", "--addr", "0.0.0.0:0"}, exitUsage, "loopback"},
		{repo, []string{"ui", "--addr", "192.0.2.1:8080"}, exitUsage, "loopback"},
		{repo, []string{"ui", "--addr", "8080"}, exitUsage, "HOST:PORT"},
		{repo, []string{"ui", "--addr", "127.0.0.1:99999"}, exitUsage, "HOST:PORT"},
		{repo, []string{"ui", "extra"}, exitUsage, "ui takes no arguments"},
		{repo, []string{"--global", "ui"}, exitUsage, "git repository's memory"},
		{outside, []string{"ui", "--no-open"}, exitNoRepo, "not inside a git repository"},
	} {
		_, stderr, code := memsyncRun(t, env, c.dir, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("memsync %v: exit %d, want %d with %q\n%s", c.args, code, c.code, c.want, stderr)
		}
	}
	out, _ := memsyncOut(t, env, repo, "ui", "--help")
	for _, want := range []string{"--addr HOST:PORT", "--no-open", "loopback", "token", "/conflicts", "Ctrl-C"} {
		if !strings.Contains(out, want) {
			t.Errorf("ui --help lacks %q:\n%s", want, out)
		}
	}
}
