package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestSyncRacingClones: 8 clones of one bare remote, each a loop of real
// processes (an add, then `memsync sync`) for 4 rounds, all at once, so
// their pushes keep racing. Every sync gets through (a lost race is tried
// again, with backoff, for up to 30 s), a lost race leaves no merge commit
// behind (the remote's history has at most one merge per sync that
// pushed), and after quiet syncs every clone holds every entry.
func TestSyncRacingClones(t *testing.T) {
	env, root, remote := bareRemote(t)
	const clones, rounds = 8, 4
	dirs := make([]string, clones)
	for c := range dirs {
		dirs[c] = filepath.Join(root, fmt.Sprintf("clone%d", c))
		gitRun(t, env, root, "clone", "-q", remote, dirs[c])
		memsyncIn(t, env, dirs[c], "init")
	}
	var (
		mu       sync.Mutex
		failures []string
		ids      []string
		pushed   int
		wg       sync.WaitGroup
		start    = make(chan struct{})
	)
	for c, dir := range dirs {
		wg.Go(func() {
			<-start
			for r := range rounds {
				add := exec.Command(memsyncBinary(t), "add", fmt.Sprintf("clone %d round %d learned", c, r))
				add.Dir, add.Env = dir, env
				id, err := add.Output()
				sync := exec.Command(memsyncBinary(t), "sync")
				sync.Dir, sync.Env = dir, env
				out, serr := sync.CombinedOutput()
				mu.Lock()
				if err != nil {
					failures = append(failures, fmt.Sprintf("add in clone %d: %v", c, err))
				} else {
					ids = append(ids, strings.TrimSpace(string(id)))
				}
				if serr != nil {
					failures = append(failures, fmt.Sprintf("sync in clone %d round %d: %v\n%s", c, r, serr, out))
				} else if strings.Contains(string(out), "pushed ") {
					pushed++
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d of %d syncs or adds failed; the first:\n%s", len(failures), clones*rounds, failures[0])
	}
	merges, err := strconv.Atoi(strings.TrimSpace(gitRun(t, env, root, "--git-dir="+remote, "rev-list", "--count", "--merges", "refs/memsync/snapshots")))
	if err != nil {
		t.Fatal(err)
	}
	if merges > pushed {
		t.Errorf("the remote's history has %d merges for %d pushes: lost races left merge commits behind", merges, pushed)
	}
	for range 2 {
		for _, dir := range dirs {
			memsyncIn(t, env, dir, "sync")
		}
	}
	for c, dir := range dirs {
		have := memoryIDs(t, dir)
		for _, id := range ids {
			if !have[id] {
				t.Fatalf("clone %d lacks %s after quiet syncs", c, id)
			}
		}
	}
	t.Logf("%d syncs pushed, %d merges on the remote", pushed, merges)
}
