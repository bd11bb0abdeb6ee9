package history

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/testgit"
)

// objectFiles lists every file under the objects folder and memsync's state
// folder (where a snapshot's temp files go).
func objectFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, root := range []string{filepath.Join(dir, ".git", "objects"), filepath.Join(dir, ".git", "memsync")} {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			out = append(out, strings.TrimPrefix(p, dir))
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	sort.Strings(out)
	return out
}

// A snapshot's objects are one pack git verifies, with no .keep left once
// the ref reaches them and no loose object; a snapshot that fails at the
// ref update leaves no file behind (no pack, no temp file), and the next
// one works.
func TestSnapshotWritesOneKeptPack(t *testing.T) {
	h, dir := testRepo(t)
	mem := h.Store.Path()
	write(t, mem, "# Memories\n\n"+entry(idA, "a", "first"))
	loose := func() string {
		l, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "??", "*"))
		return strings.Join(l, " ")
	}
	was := loose()
	take(t, h, "")
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*"))
	if len(packs) != 2 || !strings.HasSuffix(packs[0], ".idx") || !strings.HasSuffix(packs[1], ".pack") {
		t.Fatalf("objects/pack holds %v, want one pack and its index", packs)
	}
	testgit.Git(t, dir, "verify-pack", packs[0])
	if now := loose(); now != was {
		t.Fatalf("loose objects written: %s (were %s)", now, was)
	}
	testgit.Git(t, dir, "fsck", "--strict", "--no-dangling")
	before := objectFiles(t, dir)

	lockPath := filepath.Join(dir, ".git", "refs", "memsync", "snapshots.lock")
	write(t, lockPath, "")
	defer func(w time.Duration) { refLockWait = w }(refLockWait)
	refLockWait = 0
	write(t, mem, "# Memories\n\n"+entry(idA, "a", "first")+"\n"+entry(idB, "b", "second"))
	if _, err := h.Take(context.Background(), "", h.CurrentProvenance("")); err == nil {
		t.Fatal("the snapshot passed with the ref locked")
	}
	if after := objectFiles(t, dir); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Fatalf("the failed snapshot left files behind:\nbefore %v\nafter  %v", before, after)
	}
	if err := os.Remove(lockPath); err != nil {
		t.Fatal(err)
	}
	second := take(t, h, "")
	if !second.Created {
		t.Fatal("no snapshot after the failed one")
	}
	if got := testgit.Show(t, dir, Ref+":memories.md"); !strings.Contains(got, "second") {
		t.Fatalf("the snapshot holds %q", got)
	}
	if keeps, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.keep")); len(keeps) != 0 {
		t.Fatalf(".keep files left: %v", keeps)
	}
	testgit.Git(t, dir, "fsck", "--strict", "--no-dangling")
}
