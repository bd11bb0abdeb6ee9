//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// descendants are the processes under pid (children, theirs, ...), from /proc.
func descendants(pid int) []int {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parens.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 {
			parent[p], _ = strconv.Atoi(f[1])
		}
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// alive tells whether pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestSignalEndsGitAndFreesLock: SIGINT or SIGTERM during a sync whose git
// fetch hangs (an ssh transport that never answers) ends git and everything
// git started, memsync exits promptly with 130 or 143, and the memory's lock
// is free. git fetch (and its ssh) used to be left running, orphaned.
func TestSignalEndsGitAndFreesLock(t *testing.T) {
	needProc(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			env := testGitEnv(t)
			repo := newRepo(t, env)
			memsyncIn(t, env, repo, "add", "an entry before the sync")
			gitRun(t, env, repo, "remote", "add", "origin", "ssh://memsync.invalid/r.git")
			// git runs core.sshCommand through sh, with the host and the
			// command as arguments: a shell that waits, and its sleep.
			gitRun(t, env, repo, "config", "core.sshCommand", "sh -c 'sleep 600; :' ssh")

			cmd := exec.Command(memsyncBinary(t), "sync")
			cmd.Dir, cmd.Env = repo, env
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var under []int
			t.Cleanup(func() {
				for _, p := range under {
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
			})
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				under = descendants(cmd.Process.Pid)
				sleeping := false
				for _, p := range under {
					comm, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm")
					sleeping = sleeping || strings.TrimSpace(string(comm)) == "sleep"
				}
				if sleeping {
					break
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("no git fetch with its ssh under memsync sync after 30 s (processes %v); stderr:\n%s", under, stderr.String())
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				t.Logf("memsync sync after %v: %v", sig, err)
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("memsync sync still running 10 s after %v", sig)
			}
			if !strings.Contains(stderr.String(), "memsync: interrupted: ") {
				t.Errorf("stderr after %v:\n%s", sig, stderr.String())
			}
			if want := 128 + int(sig); cmd.ProcessState.ExitCode() != want {
				t.Errorf("exit code after %v: %d (%v), want %d; stderr:\n%s", sig, cmd.ProcessState.ExitCode(), cmd.ProcessState, want, stderr.String())
			}
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				var left []string
				for _, p := range under {
					if alive(p) {
						cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
						left = append(left, strconv.Itoa(p)+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
					}
				}
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("still running after memsync exited:\n%s", strings.Join(left, "\n"))
				}
			}
			add := exec.Command(memsyncBinary(t), "add", "an entry after the sync", "--lock-timeout", "2s")
			add.Dir, add.Env = repo, env
			if out, err := add.CombinedOutput(); err != nil {
				t.Fatalf("add after the interrupted sync: %v\n%s", err, out)
			}
		})
	}
}
