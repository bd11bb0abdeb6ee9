package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/memsync/memsync/memfile"
)

// mountTmpfs mounts a tmpfs of size bytes on a new folder and unmounts it
// when the test ends; it skips the test, saying why, where mounting is not
// permitted (not root, no mount(8), a container without CAP_SYS_ADMIN).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("mounts a tmpfs the Linux way (mount -t tmpfs -o size=); skipped here")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root; skipped")
	}
	if _, err := exec.LookPath("mount"); err != nil {
		t.Skip("no mount(8) to mount a small tmpfs; skipped")
	}
	dir := filepath.Join(t.TempDir(), "full")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount -t tmpfs is not permitted here (%v: %s); skipped", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// TestAddOnFullDisk: a repository on a 64 KiB tmpfs whose memory fills it.
// Every add either lands whole or fails saying the disk is full and nothing
// was written: the memory file ends at a whole entry, holds each
// acknowledged entry once and nothing else, and doctor calls it ok. Once
// space is freed, adding the refused entry again stores one copy.
func TestAddOnFullDisk(t *testing.T) {
	env := testGitEnv(t)
	mnt := mountTmpfs(t, 64<<10)
	repo := filepath.Join(mnt, "repo")
	gitRun(t, env, mnt, "init", "-q", "--template=", repo)
	// A filler takes most of the space, so the memory fills the rest soon,
	// and frees it afterwards.
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, 40<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	var acked []string
	failed := ""
	for i := range 200 {
		// Entries of uneven sizes, so that writes end mid-page and the
		// full disk cuts one part-way.
		content := fmt.Sprintf("lesson %d: %s", i, strings.Repeat("abcdefghij", 50+i*37%250))
		cmd := exec.Command(memsyncBinary(t), "add", content)
		cmd.Dir, cmd.Env = repo, env
		out, err := cmd.CombinedOutput()
		if err == nil {
			acked = append(acked, content)
			continue
		}
		if !strings.Contains(string(out), "disk full") || !strings.Contains(string(out), "nothing was written") {
			t.Fatalf("add %d failed without saying the disk is full and nothing was written: %v\n%s", i, err, out)
		}
		failed = content
		break
	}
	if failed == "" {
		t.Fatalf("200 adds fit in 64 KiB: the disk never filled")
	}
	check := func(want []string) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(repo, ".agent", "memories.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(data), "\n") {
			t.Fatalf("the memory file ends mid-entry: ...%q", data[max(0, len(data)-80):])
		}
		if at, _, torn := memfile.Torn(data); torn {
			t.Fatalf("the memory file's last entry is torn at byte %d", at)
		}
		f := memfile.Parse(data)
		if len(f.Entries) != len(want) {
			t.Fatalf("the memory holds %d entries, %d were acknowledged", len(f.Entries), len(want))
		}
		for i, e := range f.Entries {
			if e.Content != want[i] {
				t.Fatalf("entry %d is %.40q..., want %.40q...", i, e.Content, want[i])
			}
		}
		out, _ := memsyncOut(t, env, repo, "doctor")
		if !strings.Contains(out, "memory") || strings.Contains(out, "torn") {
			t.Fatalf("doctor after the full disk:\n%s", out)
		}
	}
	check(acked)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	memsyncIn(t, env, repo, "add", failed)
	check(append(acked, failed))
}
