package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPurgeMostEntriesOtherCloneSyncs: a purge that takes out more than
// half of the entries is deliberate: the other clone's next plain sync
// applies it (no --force), and keeps what it added meanwhile.
func TestPurgeMostEntriesOtherCloneSyncs(t *testing.T) {
	env, root, remote := bareRemote(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, c := range []string{a, b} {
		gitRun(t, env, root, "clone", "-q", remote, c)
	}
	for _, s := range []string{"one: the cache key is the path", "two: retry with backoff", "three: pin the toolchain", "four: keep the lock short"} {
		memsyncIn(t, env, a, "add", s)
	}
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	var ids []string
	for _, l := range strings.Split(memsyncIn(t, env, a, "list"), "\n") {
		if f := strings.Fields(l); len(f) > 1 && !strings.Contains(l, "four:") && strings.Contains(l, ": ") {
			ids = append(ids, f[1])
		}
	}
	if len(ids) != 3 {
		t.Fatalf("ids %q in:\n%s", ids, memsyncIn(t, env, a, "list"))
	}
	memsyncIn(t, env, a, append([]string{"purge"}, ids...)...)
	memsyncIn(t, env, b, "add", "five: b learned this meanwhile")

	out, stderr, code := memsyncRun(t, env, b, "sync")
	if code != 0 {
		t.Fatalf("b's sync after a purge of 3 of 4 entries: exit %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, "purged 3 entries") {
		t.Errorf("b's sync does not say it applied the purge:\n%s%s", out, stderr)
	}
	list := memsyncIn(t, env, b, "list")
	for _, gone := range []string{"one:", "two:", "three:"} {
		if strings.Contains(list, gone) {
			t.Errorf("b still lists %q:\n%s", gone, list)
		}
	}
	for _, kept := range []string{"four:", "five:"} {
		if !strings.Contains(list, kept) {
			t.Errorf("b lost %q:\n%s", kept, list)
		}
	}
}
