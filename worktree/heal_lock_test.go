package worktree

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// moveLock never leaves the old lock path missing or naming another file:
// a ralph that starts while the memory moves would create a lock file of its
// own there and rewrite the memory beside the other writers, losing their
// entries. Checked after each of moveLock's steps, and at the end.
func TestMoveLockKeepsTheOldPath(t *testing.T) {
	dir := t.TempDir()
	oldLock := filepath.Join(dir, "ralph", "memories.md.lock")
	newLock := filepath.Join(dir, "home", "memories.md.lock")
	for _, d := range []string{filepath.Dir(oldLock), filepath.Dir(newLock)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{oldLock, newLock} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inode := func(p string) uint64 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	want := inode(oldLock)
	steps := 0
	defer func(f func()) { lockMoveStep = f }(lockMoveStep)
	lockMoveStep = func() {
		steps++
		if got := inode(oldLock); got != want {
			t.Fatalf("after step %d the old lock path names inode %d, want %d", steps, got, want)
		}
	}
	if err := moveLock(oldLock, newLock); err != nil {
		t.Fatal(err)
	}
	if steps == 0 {
		t.Fatal("no step checked")
	}
	if inode(oldLock) != want || inode(newLock) != want {
		t.Fatal("the lock's inode did not move to the home, reachable from the old path")
	}
	if fi, err := os.Lstat(oldLock); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the old lock path is no link: %v", err)
	}
	if _, err := os.Lstat(newLock + ".move"); !os.IsNotExist(err) {
		t.Fatalf("a temp link is left: %v", err)
	}
}
