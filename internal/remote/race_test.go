package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/testgit"
)

// TestSyncLostRacesLeaveNothing: a remote whose pre-receive hook lets a
// rival's snapshot land first on each of the first 6 pushes (more than the
// 5 tries sync once had). Sync gets through on the 7th try; the merges of
// the 6 lost tries are nowhere: not in the clone's history, not among its
// objects; the memory holds the rivals' entries and its own.
func TestSyncLostRacesLeaveNothing(t *testing.T) {
	defer func(b time.Duration) { backoffBase = b }(backoffBase)
	backoffBase = time.Millisecond
	cs := clones(t, 2)
	a, rival := cs[0], cs[1]
	bare := filepath.Join(filepath.Dir(a.Repo.WorkTree), "remote.git")
	const lost = 6
	add(t, rival, "rival 0")
	if _, err := Sync(context.Background(), rival, "origin", Options{}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= lost; i++ { // rival snapshots, each a child of the last
		add(t, rival, fmt.Sprintf("rival %d", i))
		if _, err := rival.Take(context.Background(), "", history.Provenance{}); err != nil {
			t.Fatal(err)
		}
		testgit.Git(t, rival.Repo.WorkTree, "push", "-q", "origin", fmt.Sprintf("%s:refs/rivals/%d", history.Ref, i))
	}
	hook := `#!/bin/sh
read old new ref
echo "$new" >> pushed
n=$(cat count 2>/dev/null || echo 0)
if [ "$n" -lt ` + fmt.Sprint(lost) + ` ]; then
	n=$((n + 1)); echo $n > count
	unset GIT_QUARANTINE_PATH
	git update-ref ` + history.Ref + ` refs/rivals/$n
fi
`
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	add(t, a, "from a")
	res, err := Sync(context.Background(), a, "origin", Options{})
	if err != nil || !res.Pushed || res.Tries != lost+1 {
		t.Fatalf("tries %d, pushed %v: %v", res.Tries, res.Pushed, err)
	}
	data, err := os.ReadFile(filepath.Join(bare, "pushed"))
	if err != nil {
		t.Fatal(err)
	}
	pushed := strings.Fields(string(data))
	if len(pushed) != lost+1 {
		t.Fatalf("the remote saw %d pushes", len(pushed))
	}
	head := testgit.Git(t, a.Repo.WorkTree, "rev-parse", history.Ref)
	if remote := testgit.Git(t, bare, "rev-parse", history.Ref); head != remote || strings.TrimSpace(head) != pushed[lost] {
		t.Fatalf("local %s, remote %s, last pushed %s", head, remote, pushed[lost])
	}
	for _, m := range pushed[:lost] {
		if out, err := testgit.GitErr(a.Repo.WorkTree, "cat-file", "-t", m); err == nil {
			t.Errorf("the merge %s of a lost try is still here (%s)", m, strings.TrimSpace(out))
		}
	}
	if n := strings.TrimSpace(testgit.Git(t, a.Repo.WorkTree, "rev-list", "--count", "--merges", history.Ref)); n != "1" {
		t.Errorf("%s holds %s merges, want 1", history.Ref, n)
	}
	f, err := a.Store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != lost+2 {
		t.Fatalf("a holds %d entries, want %d", len(f.Entries), lost+2)
	}
}
