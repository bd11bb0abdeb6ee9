package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/memfile"
)

// TestCrashSafeMoves: real memsync processes archive and restore entries in
// a loop and are killed with SIGKILL at random points, while another process
// keeps adding. Afterwards every entry is in the active file or the archive
// (both is allowed, neither never), both files parse, and the next move
// removes the duplicates a crash left.
func TestCrashSafeMoves(t *testing.T) {
	bin := memsyncBinary(t)
	env := testGitEnv(t)
	repo := newRepo(t, env)
	home := filepath.Join(repo, ".agent")
	st := &store.Store{Home: home}
	var ids []string
	f := &memfile.File{Preamble: memfile.Header + "\n"}
	for i := range 40 {
		e := st.NewEntry("pattern", "", fmt.Sprintf("learning %d: %s", i, strings.Repeat("text ", 200)), []string{"crash"})
		f.Entries = append(f.Entries, e)
		ids = append(ids, e.ID)
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.Path(), f.Render(), 0o644); err != nil {
		t.Fatal(err)
	}

	// Run until enough moves were killed and enough completed (a busy
	// machine needs longer), at most 60 s.
	const wantKills, wantDone = 60, 20
	deadline := time.Now().Add(60 * time.Second)
	stop := make(chan struct{})
	var added []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the appender: never killed, so each success must survive
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			cmd := exec.Command(bin, "add", fmt.Sprintf("appended %d", i), "--lock-timeout", "30s")
			cmd.Dir, cmd.Env = repo, env
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("add %d: %v", i, err)
				return
			}
			added = append(added, strings.TrimSpace(string(out)))
		}
	}()
	rng := rand.New(rand.NewPCG(1, 2))
	kills, done := 0, 0
	// Every third move runs to its end; its duration bounds the random kill
	// points of the others, so kills land anywhere in a move on a busy machine too.
	span := 20 * time.Millisecond
	for n := 0; kills < wantKills || done < wantDone; n++ {
		if time.Now().After(deadline) {
			close(stop)
			wg.Wait()
			t.Fatalf("the loop did not exercise both outcomes in time: %d killed, %d completed", kills, done)
		}
		verb := []string{"archive", "restore"}[rng.IntN(2)]
		args := []string{verb}
		for range 1 + rng.IntN(8) {
			args = append(args, ids[rng.IntN(len(ids))])
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = repo, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if n%3 != 0 {
			time.AfterFunc(time.Duration(rng.Int64N(int64(span))), func() {
				_ = cmd.Process.Signal(syscall.SIGKILL)
			})
		}
		err := cmd.Wait()
		if n%3 == 0 {
			span = time.Since(start)
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			kills++
		} else if err == nil {
			done++
		} else if !strings.Contains(out.String(), "no such entry") {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d moves killed, %d completed, %d adds", kills, done, len(added))

	where := func() (active, archive map[string]bool) {
		active, archive = map[string]bool{}, map[string]bool{}
		for k, p := range []string{st.Path(), st.ArchivePath()} {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			f := memfile.Parse(data)
			if len(f.Problems) > 0 {
				t.Fatalf("%s does not parse: %v", p, f.Problems)
			}
			for _, e := range f.Entries {
				if k == 0 {
					active[e.ID] = true
				} else {
					archive[e.ID] = true
				}
			}
		}
		return active, archive
	}
	active, archive := where()
	dups := 0
	for _, id := range append(append([]string(nil), ids...), added...) {
		if !active[id] && !archive[id] {
			t.Fatalf("entry %s is lost", id)
		}
		if active[id] && archive[id] {
			dups++
		}
	}
	t.Logf("%d entries in both files after the crashes", dups)

	// The next move removes what crashes left in both files.
	var ref string
	for id := range active {
		ref = id
		break
	}
	cmd := exec.Command(bin, "archive", ref)
	cmd.Dir, cmd.Env = repo, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("archive: %v\n%s", err, out)
	}
	active, archive = where()
	for id := range active {
		if archive[id] {
			t.Fatalf("entry %s is still in both files after a move", id)
		}
	}
	if len(active)+len(archive) != len(ids)+len(added) {
		t.Fatalf("%d + %d entries, want %d", len(active), len(archive), len(ids)+len(added))
	}
	if out := gitRun(t, env, repo, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("git status:\n%s", out)
	}
}
