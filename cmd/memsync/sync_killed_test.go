package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSyncAfterKilledSync: a sync killed (kill -9) while its git push waits
// for the remote leaves that git running, and its push lands after the next
// sync fetched. That push came from this clone: the next sync must see its
// own earlier snapshot (or the very one it pushes) on its own ref, push
// over it (or leave it), keep its clone ID and
// add no clone ref on the remote (no note about "a copy of this
// repository"). The remote's pre-receive hook makes the timing certain: the
// killed sync's push waits 2 s, the next one's 4 s.
func TestSyncAfterKilledSync(t *testing.T) {
	env, root, remote := bareRemote(t)
	clone := filepath.Join(root, "a")
	gitRun(t, env, root, "clone", "-q", remote, clone)
	memsyncIn(t, env, clone, "add", "before the killed sync")
	memsyncIn(t, env, clone, "sync")
	id, err := os.ReadFile(filepath.Join(clone, ".git", "memsync", "clone"))
	if err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(remote, "hooks")
	hook := "#!/bin/sh\ncat >/dev/null\nd=" + hooks + "\n" +
		"if [ -e $d/slow1 ]; then rm $d/slow1; touch $d/in1; sleep 2; fi\n" +
		"if [ -e $d/slow2 ]; then rm $d/slow2; sleep 4; fi\n"
	if err := os.WriteFile(filepath.Join(hooks, "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	touch := func(name string) {
		if err := os.WriteFile(filepath.Join(hooks, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The next sync adds an entry of its own, then (again) none: the killed
	// sync's push holds all the next one has.
	for _, next := range []string{"pushed by the next sync", ""} {
		memsyncIn(t, env, clone, "add", "pushed by the killed sync before: "+next)
		touch("slow1")
		killed := exec.Command(memsyncBinary(t), "sync")
		killed.Dir, killed.Env = clone, env
		if err := killed.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if err := os.Remove(filepath.Join(hooks, "in1")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				_ = killed.Process.Kill()
				t.Fatal("the first sync's push never reached the remote's hook")
			}
		}
		_ = killed.Process.Kill() // SIGKILL: its git push goes on
		_ = killed.Wait()

		if next != "" {
			memsyncIn(t, env, clone, "add", next)
		}
		touch("slow2")
		out := memsyncIn(t, env, clone, "sync")
		if strings.Contains(out, "another repository") {
			t.Errorf("the next sync took the killed sync's push for another repository's:\n%s", out)
		}
		if now, _ := os.ReadFile(filepath.Join(clone, ".git", "memsync", "clone")); string(now) != string(id) {
			t.Fatalf("the clone ID changed from %q to %q", id, now)
		}
		if refs := strings.Fields(gitRun(t, env, remote, "for-each-ref", "--format=%(refname)", "refs/memsync/clones/")); len(refs) != 1 {
			t.Errorf("the remote holds %d clone refs of one clone: %v", len(refs), refs)
		}
		head := strings.TrimSpace(gitRun(t, env, clone, "rev-parse", "refs/memsync/snapshots"))
		if got := strings.TrimSpace(gitRun(t, env, remote, "rev-parse", "refs/memsync/clones/"+strings.TrimSpace(string(id)))); got != head {
			t.Errorf("the clone's ref on the remote is %s, its newest snapshot %s", got, head)
		}
	}
}
