//go:build unix

package fsutil_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitconfig"
)

// For each value of core.sharedRepository, the modes memsync gives a new
// object file and object folder are the ones git gives its own (git
// hash-object -w creates both, under this process's umask).
func TestSharedModesAsGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	for _, mask := range []int{0o022, 0o077, 0o002} {
		fsutil.SetUmask(t, mask)
		for _, v := range []string{"umask", "false", "", "group", "true", "1", "yes", "all", "world", "everybody", "2",
			"0640", "0660", "0664", "0600", "0666", "0644", "0"} {
			sharedModesAsGit(t, mask, v)
		}
	}
	// A mode the owner cannot read and write: git refuses it, so does memsync.
	if _, err := gitconfig.Parse([]byte("[core]\n\tsharedRepository = 0440\n")).SharedRepository(); err == nil {
		t.Error("core.sharedRepository = 0440 was accepted")
	}
	if n, _ := gitconfig.Parse([]byte("[core]\n\tsharedRepository\n")).SharedRepository(); fsutil.Shared(n) != fsutil.SharedGroup {
		t.Errorf("core.sharedRepository on its own is %o, want group", n)
	}
}

// sharedModesAsGit compares the modes of git's new object file and folder,
// under umask mask and core.sharedRepository=v, with memsync's.
func sharedModesAsGit(t *testing.T, mask int, v string) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("sh", append([]string{"-c", fmt.Sprintf("umask %03o; exec git \"$@\"", mask), "git"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		cmd.Stdin = strings.NewReader("content for " + v + "\n")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("config", "core.sharedRepository", v)
	hash := git("hash-object", "-w", "--stdin")
	obj := filepath.Join(dir, ".git", "objects", hash[:2], hash[2:])
	n, err := gitconfig.Parse([]byte("[core]\n\tsharedRepository = " + v + "\n")).SharedRepository()
	if err != nil {
		t.Fatalf("%q: %v", v, err)
	}
	s := fsutil.Shared(n)
	if fi, _ := os.Stat(obj); fi.Mode() != s.File(0o444) {
		t.Errorf("umask %03o, core.sharedRepository=%q: git's object file is %v, memsync's would be %v", mask, v, fi.Mode(), s.File(0o444))
	}
	if fi, _ := os.Stat(filepath.Dir(obj)); fi.Mode()&^os.ModeDir != s.Dir(0o777) {
		t.Errorf("umask %03o, core.sharedRepository=%q: git's object folder is %v, memsync's would be %v", mask, v, fi.Mode(), s.Dir(0o777))
	}
}
