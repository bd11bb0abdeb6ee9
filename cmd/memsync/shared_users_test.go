package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sharedUsers makes a group and two users in it for the test (removed when
// it ends), or skips the test, saying why, where that is not possible.
func sharedUsers(t *testing.T) (group string, users [2]string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making two users in one group needs root; skipped")
	}
	for _, tool := range []string{"groupadd", "groupdel", "useradd", "userdel", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s to make and run as two users; skipped", tool)
		}
	}
	id := os.Getpid() % 100000
	group = fmt.Sprintf("msg%d", id)
	if out, err := exec.Command("groupadd", group).CombinedOutput(); err != nil {
		t.Skipf("groupadd is not permitted here (%v: %s); skipped", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { _ = exec.Command("groupdel", group).Run() })
	for i, n := range []string{"a", "b"} {
		users[i] = fmt.Sprintf("ms%s%d", n, id)
		if out, err := exec.Command("useradd", "-M", "-N", "-g", group, "-s", "/bin/sh", users[i]).CombinedOutput(); err != nil {
			t.Skipf("useradd is not permitted here (%v: %s); skipped", err, strings.TrimSpace(string(out)))
		}
		u := users[i]
		t.Cleanup(func() {
			if out, err := exec.Command("userdel", u).CombinedOutput(); err != nil {
				t.Errorf("userdel %s: %v: %s", u, err, out)
			}
		})
	}
	return group, users
}

// TestSharedRepositoryTwoUsers: two real users of one group work in one
// repository made with git init --shared=group, each with umask 022. Each
// adds to the memory and takes snapshots; the other reads them, adds after
// them, and commits with git: memsync's files, folders and snapshot objects
// are shared as git's own are. A memory file made before the repository was
// shared (not group-writable) fails the other user's add with the file
// named and the fix.
func TestSharedRepositoryTwoUsers(t *testing.T) {
	group, users := sharedUsers(t)
	// A world-traversable folder for the binary, the homes and the work
	// (t.TempDir's folders are 0700 root's).
	base, err := os.MkdirTemp("", "memsync-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "memsync")
	copyFile(t, memsyncBinary(t), bin, 0o755)
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o775); err != nil {
		t.Fatal(err)
	}
	chown(t, work, "root:"+group)
	if err := os.Chmod(work, 0o2775); err != nil {
		t.Fatal(err)
	}
	homes := map[string]string{}
	for _, u := range users {
		home := filepath.Join(base, "home-"+u)
		if err := os.Mkdir(home, 0o700); err != nil {
			t.Fatal(err)
		}
		cfg := fmt.Sprintf("[user]\n\tname = %s\n\temail = %s@memsync.invalid\n[safe]\n\tdirectory = *\n[init]\n\tdefaultBranch = main\n[maintenance]\n\tautoDetach = false\n", u, u)
		if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		chown(t, home, u+":"+group)
		chown(t, filepath.Join(home, ".gitconfig"), u+":"+group)
		homes[u] = home
	}
	// tryAs runs a command as user u (umask 022) in dir.
	tryAs := func(u, dir string, args ...string) (string, error) {
		t.Helper()
		sh := append([]string{"--reuid=" + u, "--regid=" + group, "--init-groups", "--", "sh", "-c", `umask 022; exec "$@"`, "sh"}, args...)
		cmd := exec.Command("setpriv", sh...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + homes[u], "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C", "MEMSYNC_HOOKS_WAIT=1"}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// as is tryAs for a command that must succeed.
	as := func(u, dir string, args ...string) string {
		t.Helper()
		out, err := tryAs(u, dir, args...)
		if err != nil {
			t.Fatalf("as %s: %v: %v\n%s", u, args, err, out)
		}
		return out
	}
	a, b := users[0], users[1]
	repo := filepath.Join(work, "repo")
	as(a, work, "git", "init", "-q", "--shared=group", repo)
	as(a, repo, "git", "commit", "-q", "--allow-empty", "-m", "init")
	as(a, repo, bin, "add", "from a")
	as(a, repo, bin, "snapshot")

	as(b, repo, bin, "add", "from b")
	as(b, repo, bin, "snapshot")
	if out := as(b, repo, "git", "log", "--format=%s", "refs/memsync/snapshots"); strings.Count(out, "\n") < 2 {
		t.Fatalf("b sees the snapshots as:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(repo, "b.txt"), []byte("b's work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	chown(t, filepath.Join(repo, "b.txt"), b+":"+group)
	// git's own COMMIT_EDITMSG is not shared by git (a's commit made it
	// 0644): not memsync's to fix.
	if err := os.Chmod(filepath.Join(repo, ".git", "COMMIT_EDITMSG"), 0o664); err != nil {
		t.Fatal(err)
	}
	as(b, repo, "git", "add", "b.txt")
	as(b, repo, "git", "commit", "-q", "-m", "b's commit")
	as(b, repo, "git", "gc", "-q")

	as(a, repo, bin, "add", "from a again")
	as(a, repo, bin, "snapshot")
	out := as(a, repo, bin, "list")
	for _, want := range []string{"from a", "from b", "from a again"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the memory lost %q:\n%s", want, out)
		}
	}
	as(b, repo, "git", "fsck", "--no-progress")

	// What memsync made is shared with the group as git makes its own.
	for _, p := range []string{".git/memsync/memories.md", ".git/memsync/memories.md.lock", ".git/memsync/state/stamp.json", ".git/memsync/state/access.log"} {
		if fi, err := os.Stat(filepath.Join(repo, p)); err != nil || fi.Mode().Perm()&0o060 != 0o060 {
			t.Errorf("%s: not group-readable and writable (%v, %v)", p, fi.Mode(), err)
		}
	}
	for _, p := range []string{".agent", ".git/memsync", ".git/memsync/state", ".git/refs/memsync"} {
		if fi, err := os.Stat(filepath.Join(repo, p)); err != nil || fi.Mode()&os.ModeSetgid == 0 || fi.Mode().Perm()&0o070 != 0o070 {
			t.Errorf("%s: not a setgid folder the group may write (%v, %v)", p, fi.Mode(), err)
		}
	}

	objects, _ := filepath.Glob(filepath.Join(repo, ".git", "objects", "??"))
	for _, d := range objects {
		if fi, err := os.Stat(d); err != nil || fi.Mode()&os.ModeSetgid == 0 || fi.Mode().Perm()&0o070 != 0o070 {
			t.Errorf("%s: not a setgid folder the group may write (%v, %v)", d, fi.Mode(), err)
		}
		files, _ := filepath.Glob(filepath.Join(d, "*"))
		for _, f := range files {
			if fi, err := os.Stat(f); err != nil || fi.Mode().Perm()&0o040 == 0 {
				t.Errorf("%s: an object the group may not read (%v, %v)", f, fi.Mode(), err)
			}
		}
	}

	// A memory file made before the repository was shared.
	if err := os.Chmod(filepath.Join(repo, ".agent", "memories.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	chown(t, filepath.Join(repo, ".agent", "memories.md"), a+":"+group)
	out, err = tryAs(b, repo, bin, "add", "b cannot write")
	if err == nil {
		t.Fatalf("b wrote a file only a may write:\n%s", out)
	}
	file := filepath.Join(repo, ".git", "memsync", "memories.md") // the memory itself; .agent/memories.md links to it
	for _, w := range []string{file, "permission denied", "chmod g+w " + file, "git config core.sharedRepository group"} {
		if !strings.Contains(out, w) {
			t.Errorf("b's failed add does not say %q:\n%s", w, out)
		}
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = src.Close() }()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

func chown(t *testing.T, path, owner string) {
	t.Helper()
	if out, err := exec.Command("chown", owner, path).CombinedOutput(); err != nil {
		t.Fatalf("chown %s %s: %v: %s", owner, path, err, out)
	}
}
