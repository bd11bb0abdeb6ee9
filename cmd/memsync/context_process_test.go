package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/memfile"
)

// runHook runs 'memsync context --agent AGENT' in dir with input on
// stdin; it fails the test unless memsync exits 0.
func runHook(tb testing.TB, env []string, dir, agent, input string, args ...string) (stdout, stderr string, took time.Duration) {
	tb.Helper()
	cmd := exec.Command(memsyncBinary(tb), append([]string{"context", "--agent", agent}, args...)...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if err != nil {
		tb.Fatalf("memsync context: %v\n%s%s", err, out.String(), errb.String())
	}
	return out.String(), errb.String(), took
}

// hookContext is the additionalContext of a hook's output, "" for none;
// the output must be the documented JSON for event.
func hookContext(tb testing.TB, out, event string) string {
	tb.Helper()
	if out == "" {
		return ""
	}
	var v struct {
		H struct {
			Event   string `json:"hookEventName"`
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || v.H.Event != event || v.H.Context == "" {
		tb.Fatalf("not the hook output for %s: %v\n%s", event, err, out)
	}
	return v.H.Context
}

func promptInput(agent, session, prompt string) string {
	event := map[string]string{"claude": "UserPromptSubmit", "gemini": "BeforeAgent"}[agent]
	b, _ := json.Marshal(map[string]string{"session_id": session, "hook_event_name": event, "prompt": prompt, "cwd": "", "transcript_path": "/t"})
	return string(b)
}

// TestContextFramedAsInject: the context a prompt adds is inject's memory
// block for that prompt, byte for byte (every entry matches it), for both
// agents; the same session does not get it again, another session does.
func TestContextFramedAsInject(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	bin := memsyncBinary(t)
	for _, c := range []string{"Increase the CI timeout to 600 seconds", "The CI cache is cold after a release: warm it", "CI runs ```sh fences``` in docs: keep them short\n# not a heading\n---"} {
		cmd := exec.Command(bin, "add", c, "-t", "solution", "--tags", "ci")
		cmd.Dir, cmd.Env = repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("add: %v\n%s", err, out)
		}
	}
	prompt := "the CI timeout and the cold cache"
	cmd := exec.Command(bin, "inject", "--json", "--mode", "manual", "--budget", "1500", prompt)
	cmd.Dir, cmd.Env = repo, env
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var inj struct {
		Memories string
		Entries  []struct{ ID string }
	}
	if err := json.Unmarshal(out, &inj); err != nil || len(inj.Entries) != 3 {
		t.Fatalf("inject: %v\n%s", err, out)
	}
	for _, agent := range []string{"claude", "gemini"} {
		event := map[string]string{"claude": "UserPromptSubmit", "gemini": "BeforeAgent"}[agent]
		stdout, stderr, _ := runHook(t, env, repo, agent, promptInput(agent, "one", prompt))
		if got := hookContext(t, stdout, event); got != inj.Memories || stderr != "" {
			t.Fatalf("%s: the context is not inject's block:\n%s\nwant\n%s\nstderr: %s", agent, got, inj.Memories, stderr)
		}
		if stdout, _, _ := runHook(t, env, repo, agent, promptInput(agent, "one", prompt)); stdout != "" {
			t.Fatalf("%s: the same session got the entries again:\n%s", agent, stdout)
		}
		if stdout, _, _ := runHook(t, env, repo, agent, promptInput(agent, "two", prompt)); hookContext(t, stdout, event) != inj.Memories {
			t.Fatalf("%s: another session did not get them:\n%s", agent, stdout)
		}
	}
}

// TestContextConcurrentSession: 8 hooks of one session at once, each
// prompt matching every entry under a budget of a few: no entry is given
// twice, every one is given once, and the record stays whole.
func TestContextConcurrentSession(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	bin := memsyncBinary(t)
	const n = 40
	var b strings.Builder
	b.WriteString(memfile.Header + "\n")
	for i := range n {
		fmt.Fprintf(&b, "\n## Fix: retry %d\n- Tags: ci\n- Date: 2026-11-%02d\n- Content: The retry loop %d times out on a cold cache %s\n", i, 1+i%28, i, strings.Repeat("x", 600))
	}
	add := exec.Command(bin, "add", "make the layout")
	add.Dir, add.Env = repo, env
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(repo, ".git", "memsync", "memories.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 3 {
				stdout, stderr, _ := runHook(t, env, repo, "claude", promptInput("claude", "shared", "the retry loop times out"), "--timeout", "10s")
				if stderr != "" {
					t.Errorf("stderr: %s", stderr)
				}
				mu.Lock()
				for _, l := range strings.Split(hookContext(t, stdout, "UserPromptSubmit"), "\n") {
					if strings.HasPrefix(l, "[") {
						seen[l]++
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for l, k := range seen {
		if k > 1 {
			t.Errorf("given %d times: %s", k, l)
		}
	}
	if len(seen) != n {
		t.Errorf("%d entries given, want %d", len(seen), n)
	}
	if stdout, _, _ := runHook(t, env, repo, "claude", promptInput("claude", "shared", "the retry loop times out")); stdout != "" {
		t.Fatalf("the record lost entries:\n%s", stdout)
	}
}

// TestContextFailsOpen: a damaged memory (conflict markers, binary junk),
// a folder outside any repository and the memory's lock held by another
// process past the bound: exit 0, nothing on stdout, within the bound.
func TestContextFailsOpen(t *testing.T) {
	env := testGitEnv(t)
	bin := memsyncBinary(t)
	const bound = 300 * time.Millisecond
	// within is the bound plus the start of a process on a busy machine.
	const within = bound + 2*time.Second
	fresh := func(t *testing.T) string {
		repo := newRepo(t, env)
		add := exec.Command(bin, "add", "Increase the CI timeout to 600 seconds", "-t", "solution")
		add.Dir, add.Env = repo, env
		if out, err := add.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if stdout, _, _ := runHook(t, env, repo, "claude", promptInput("claude", "check", "the CI timeout")); stdout == "" {
			t.Fatal("a sound memory added nothing")
		}
		return repo
	}
	appendTo := func(t *testing.T, repo, junk string) {
		f, err := os.OpenFile(filepath.Join(repo, ".git", "memsync", "memories.md"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = f.Close() }()
		if _, err := f.WriteString(junk); err != nil {
			t.Fatal(err)
		}
	}
	check := func(t *testing.T, dir, wantErr string) {
		t.Helper()
		for _, agent := range []string{"claude", "gemini"} {
			stdout, stderr, took := runHook(t, env, dir, agent, promptInput(agent, "s-"+agent, "the CI timeout"), "--timeout", bound.String())
			empty := map[string]string{"claude": "", "gemini": "{}\n"}[agent]
			if wantErr == "" {
				empty = ""
			}
			if stdout != empty || took > within {
				t.Fatalf("%s: stdout %q (want %q), took %s (bound %s)", agent, stdout, empty, took, within)
			}
			if wantErr == "" && stderr != "" || wantErr != "" && (!strings.Contains(stderr, wantErr) || strings.Count(stderr, "\n") != 1) {
				t.Fatalf("%s: stderr %q, want one line with %q", agent, stderr, wantErr)
			}
		}
	}
	t.Run("conflict markers", func(t *testing.T) {
		repo := fresh(t)
		appendTo(t, repo, "\n<<<<<<< ours\n## Fix: a\n- Content: x\n=======\n## Fix: b\n- Content: y\n>>>>>>> theirs\n")
		check(t, repo, "memories.md:")
	})
	t.Run("binary junk", func(t *testing.T) {
		repo := fresh(t)
		appendTo(t, repo, "\n\x00\x01\xff\xfe garbage \x00\n## Fix: \x00\xc3\x28\n")
		check(t, repo, "memories.md:")
	})
	t.Run("no repository", func(t *testing.T) {
		check(t, t.TempDir(), "")
	})
	t.Run("lock held", func(t *testing.T) {
		if _, err := exec.LookPath("flock"); err != nil {
			t.Skip("flock(1) not installed")
		}
		repo := fresh(t)
		holder := exec.Command("flock", filepath.Join(repo, ".git", "memsync", "memories.md.lock"), "sh", "-c", "echo held; exec sleep 30")
		holder.Env = env
		out, err := holder.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := holder.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()
		buf := make([]byte, 5)
		if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
			t.Fatalf("flock did not take the lock: %q %v", buf, err)
		}
		check(t, repo, "nothing added")
	})
}

// BenchmarkContextProcess: the whole 'memsync context --agent claude'
// process for a prompt of a new session, on a memory of 1,000 and of
// 30,000 generated entries (search index built): the median and the 99th
// percentile of its wall time, in ms (scripts/bench-context runs it).
func BenchmarkContextProcess(b *testing.B) {
	env := testGitEnv(b)
	bin := memsyncBinary(b)
	for _, n := range []int{1000, 30000} {
		repo := newRepo(b, env)
		for _, args := range [][]string{{"add", "make the layout"}} {
			cmd := exec.Command(bin, args...)
			cmd.Dir, cmd.Env = repo, env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v\n%s", err, out)
			}
		}
		if err := os.WriteFile(filepath.Join(repo, ".git", "memsync", "memories.md"), memfile.GenerateFile(n*411, 1), 0o644); err != nil {
			b.Fatal(err)
		}
		runProcess(b, env, repo, bin, "search", "warm", "--limit", "1") // builds the index
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			var times []time.Duration
			i := 0
			for b.Loop() {
				i++
				stdout, stderr, took := runHook(b, env, repo, "claude", promptInput("claude", fmt.Sprint("bench-", i), "Why does the retry loop time out when the cache is cold?"), "--timeout", "10s")
				if stdout == "" || stderr != "" {
					b.Fatalf("nothing added: %s", stderr)
				}
				times = append(times, took)
			}
			slices.Sort(times)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(times[len(times)/2]), "ms-median")
			b.ReportMetric(ms(times[(len(times)*99)/100]), "ms-p99")
		})
	}
}
