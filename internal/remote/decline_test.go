package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/testgit"
)

// TestSyncDeclinedByRemote: a remote whose pre-receive hook declines the
// push is a refusal, not a race: Sync fails after one try with git's own
// reason (the hook's words), and the git it spawned ran with LC_ALL=C and
// GIT_TERMINAL_PROMPT=0 (the hook sees the pusher's environment over a
// local transport) even when the caller's environment says otherwise.
func TestSyncDeclinedByRemote(t *testing.T) {
	cs := clones(t, 1)
	a := cs[0]
	t.Setenv("LC_ALL", "de_DE.UTF-8")
	t.Setenv("GIT_TERMINAL_PROMPT", "1")
	bare := filepath.Join(filepath.Dir(a.Repo.WorkTree), "remote.git")
	hook := "#!/bin/sh\necho \"snapshots are frozen here (LC_ALL=$LC_ALL PROMPT=$GIT_TERMINAL_PROMPT)\" >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	add(t, a, "from a")
	res, err := Sync(context.Background(), a, "origin", Options{})
	if !errors.Is(err, ErrPush) || errors.Is(err, ErrRaced) {
		t.Fatalf("want ErrPush, got %v", err)
	}
	if res.Tries != 1 || res.Pushed {
		t.Fatalf("tries %d, pushed %v: a refusal is not retried", res.Tries, res.Pushed)
	}
	for _, want := range []string{"snapshots are frozen here", "LC_ALL=C ", "PROMPT=0", "pre-receive hook declined"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// Nothing reached the remote; the merged memory stays here.
	if out, _ := testgit.GitErr(bare, "rev-parse", "--verify", "-q", history.Ref); out != "" {
		t.Fatalf("remote has %s: %s", history.Ref, out)
	}
	if h, err := a.RefHash(history.Ref); err != nil || h == "" {
		t.Fatalf("local snapshot: %q %v", h, err)
	}
}
