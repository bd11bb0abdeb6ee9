package history

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/gitrepo"
	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// testRepo makes a repository with one commit and a memory home, with git
// isolated from the machine's configuration.
func testRepo(t testing.TB) (*History, string) {
	t.Helper()
	dir := testgit.Isolate(t)
	testgit.Git(t, dir, "init", "-q", ".")
	testgit.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	r, err := gitrepo.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	return Open(r, store.Open(r.Home)), dir
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func take(t *testing.T, h *History, msg string) *Result {
	t.Helper()
	res, err := h.Take(context.Background(), msg, h.CurrentProvenance("post-commit"))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func entry(id, title, content string) string {
	return "## Pattern: " + title + "\n- Tags: t\n- Date: 2026-01-01\n- ID: " + id + "\n- Content: " + content + "\n"
}

const (
	idA = "aaaaaaaaaaaa"
	idB = "bbbbbbbbbbbb"
	idC = "cccccccccccc"
)

func TestTakeChainAndTrees(t *testing.T) {
	h, dir := testRepo(t)
	// No memory: nothing at all, not even a lock file or .agent.
	if res := take(t, h, ""); res.Created || res.Snapshot != nil {
		t.Fatalf("a snapshot without memory: %+v", res)
	}
	if _, err := os.Stat(h.Store.Home); err == nil {
		t.Fatal("Take created the memory home")
	}

	v1 := memfile.Header + "\n" + entry(idA, "A", "first")
	write(t, h.Store.Path(), v1)
	first := take(t, h, "")
	if !first.Created || first.Snapshot.Parent != "" {
		t.Fatalf("first snapshot: %+v", first)
	}
	if got := testgit.Show(t, dir, Ref+":memories.md"); got != v1 {
		t.Fatalf("tree holds %q, want %q", got, v1)
	}
	s := first.Snapshot
	if s.Hook != "post-commit" || s.Branch == "" || len(s.SourceCommit) != 40 || s.Worktree != "." {
		t.Fatalf("provenance: %+v", s)
	}
	if !strings.HasPrefix(s.Subject, "memsync snapshot (post-commit at ") {
		t.Fatalf("subject %q", s.Subject)
	}

	// Unchanged: no commit.
	if res := take(t, h, ""); res.Created || res.Snapshot.Commit != s.Commit {
		t.Fatalf("unchanged memory made a snapshot: %+v", res)
	}

	// The archive is part of the tree; the parent is the previous snapshot.
	arch := memfile.Header + "\n" + entry(idC, "C", "old")
	write(t, h.Store.ArchivePath(), arch)
	second := take(t, h, "with archive")
	if !second.Created || second.Snapshot.Parent != s.Commit || second.Snapshot.Subject != "with archive" {
		t.Fatalf("second snapshot: %+v", second.Snapshot)
	}
	if got := testgit.Show(t, dir, Ref+":archive/memories.md"); got != arch {
		t.Fatalf("archive in tree %q", got)
	}
	if got := testgit.Git(t, dir, "ls-tree", "-r", "--name-only", Ref); got != "archive/memories.md/000000\nformat\nmemories.md/000000" {
		t.Fatalf("tree names %q", got)
	}
	if got := testgit.Git(t, dir, "rev-list", "--count", Ref); got != "2" {
		t.Fatalf("%s snapshots", got)
	}

	// A damaged file is snapshotted byte for byte, and its damage reported.
	damaged := v1 + "<<<<<<< HEAD\n"
	write(t, h.Store.Path(), damaged)
	third := take(t, h, "")
	if !third.Created || len(third.Problems) != 1 {
		t.Fatalf("damaged: created %v, problems %v", third.Created, third.Problems)
	}
	if got := testgit.Show(t, dir, Ref+":memories.md"); got != damaged {
		t.Fatalf("damaged file not kept exactly: %q", got)
	}
	f, err := h.Files(third.Snapshot.Commit)
	if err != nil || string(f.Memory) != damaged || string(f.Archive) != arch {
		t.Fatalf("Files: %q %q %v", f.Memory, f.Archive, err)
	}
	if out := testgit.Git(t, dir, "fsck", "--strict", "--no-dangling"); strings.TrimSpace(out) != "" {
		t.Fatalf("fsck: %s", out)
	}
	// Snapshots leave the index and work tree alone: the memory home is
	// only untracked (this repository has no exclude rules for it).
	if out := testgit.Git(t, dir, "status", "--porcelain", "--untracked-files=all"); out != "" {
		t.Fatalf("status: %q", out)
	}
}

func TestLogAndCompare(t *testing.T) {
	h, _ := testRepo(t)
	if l, err := h.Log(0); err != nil || len(l) != 0 {
		t.Fatalf("empty log: %v %v", l, err)
	}
	write(t, h.Store.Path(), memfile.Header+"\n"+entry(idA, "A", "one")+"\n"+entry(idB, "B", "two"))
	take(t, h, "one")
	write(t, h.Store.Path(), memfile.Header+"\n"+entry(idA, "A", "one, edited")+"\n"+entry(idC, "C", "three"))
	take(t, h, "two")
	log, err := h.Log(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].Subject != "two" || log[1].Subject != "one" {
		t.Fatalf("log: %+v", log)
	}
	if c := log[0].Counts; c != (Counts{Added: 1, Removed: 1, Changed: 1}) || log[0].Entries != 2 {
		t.Fatalf("newest counts %+v, entries %d", c, log[0].Entries)
	}
	if c := log[1].Counts; c != (Counts{Added: 2}) {
		t.Fatalf("first counts %+v", c)
	}
	if l, _ := h.Log(1); len(l) != 1 {
		t.Fatalf("limit: %d", len(l))
	}
	before := memfile.Parse([]byte(memfile.Header + "\n" + entry(idA, "A", "one") + "\n" + entry(idB, "B", "two")))
	after := memfile.Parse([]byte(memfile.Header + "\n" + entry(idA, "A", "one, edited") + "\n" + entry(idC, "C", "three")))
	var got []string
	for _, c := range Compare(before, after) {
		got = append(got, c.Kind+" "+c.ID)
	}
	if want := "changed " + idA + ",added " + idC + ",removed " + idB; strings.Join(got, ",") != want {
		t.Fatalf("Compare: %v, want %s", got, want)
	}
}

func TestResolve(t *testing.T) {
	h, dir := testRepo(t)
	if _, err := h.Resolve(context.Background(), "~1"); err == nil {
		t.Fatal("resolved a revision without any snapshot")
	}
	write(t, h.Store.Path(), memfile.Header)
	first := take(t, h, "").Snapshot.Commit
	write(t, h.Store.Path(), memfile.Header+"\n"+entry(idA, "A", "x"))
	second := take(t, h, "").Snapshot.Commit
	for rev, want := range map[string]string{"~1": first, Ref: second, Ref + "~1": first, second[:10]: second, "memsync/snapshots^": first} {
		if got, err := h.Resolve(context.Background(), rev); err != nil || got != want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", rev, got, err, want)
		}
	}
	for _, rev := range []string{"HEAD", "nope", "-h", "~5"} {
		if _, err := h.Resolve(context.Background(), rev); err == nil {
			t.Errorf("Resolve(%q) succeeded", rev)
		}
	}
	_ = dir
}

func TestRollback(t *testing.T) {
	h, dir := testRepo(t)
	v1 := memfile.Header + "\n" + entry(idA, "A", "one") + "\n" + entry(idB, "B", "two")
	write(t, h.Store.Path(), v1)
	at := take(t, h, "").Snapshot.Commit

	// Later: A edited, B archived, C added.
	write(t, h.Store.Path(), memfile.Header+"\n"+entry(idA, "A", "one, edited")+"\n"+entry(idC, "C", "three"))
	write(t, h.Store.ArchivePath(), memfile.Header+"\n"+entry(idB, "B", "two"))

	// One entry: A as at the snapshot; C, which did not exist then, goes; B
	// comes back from the archive.
	p := h.CurrentProvenance("")
	res, err := h.Rollback(context.Background(), at, []string{"aaaa", idC, "bbbbbbbb"}, p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.IDs, ",") != idA+","+idC+","+idB || res.Before == "" || res.Snapshot == "" {
		t.Fatalf("result %+v", res)
	}
	live, err := h.Live()
	if err != nil {
		t.Fatal(err)
	}
	active, archive := memfile.Parse(live.Memory), memfile.Parse(live.Archive)
	if len(active.Entries) != 2 || active.Entries[0].Content != "one" || active.Entries[1].ID != idB || len(archive.Entries) != 0 {
		t.Fatalf("after entry rollback:\n%s\narchive:\n%s", live.Memory, live.Archive)
	}
	s, _ := h.Read(res.Snapshot)
	if s.Rollback != at || s.Parent != res.Before || !strings.HasPrefix(s.Subject, "memsync rollback to ") {
		t.Fatalf("rollback snapshot %+v", s)
	}

	// Undo: back to the snapshot taken before the rollback, exactly.
	beforeFiles, _ := h.Files(res.Before)
	if _, err := h.Rollback(context.Background(), res.Before, nil, p); err != nil {
		t.Fatal(err)
	}
	live, _ = h.Live()
	if !bytes.Equal(live.Memory, beforeFiles.Memory) || !bytes.Equal(live.Archive, beforeFiles.Archive) {
		t.Fatalf("undo: memory\n%s\narchive\n%s", live.Memory, live.Archive)
	}

	// The whole memory: exactly the bytes at the snapshot; its missing
	// archive becomes an empty one.
	if _, err := h.Rollback(context.Background(), at, nil, p); err != nil {
		t.Fatal(err)
	}
	live, _ = h.Live()
	if string(live.Memory) != v1 || string(live.Archive) != memfile.Header+"\n" {
		t.Fatalf("whole rollback: %q / %q", live.Memory, live.Archive)
	}
	// Again: nothing to do.
	res, err = h.Rollback(context.Background(), at, nil, p)
	if err != nil || res.Snapshot != "" {
		t.Fatalf("second rollback: %+v %v", res, err)
	}
	if _, err := h.Rollback(context.Background(), at, []string{"zzzzzzzz"}, p); err == nil {
		t.Fatal("rollback of an unknown entry succeeded")
	}
	if out := testgit.Git(t, dir, "fsck", "--strict", "--no-dangling"); strings.TrimSpace(out) != "" {
		t.Fatalf("fsck: %s", out)
	}
}

// TestBranchRemote: branch.<name>.remote from the repository config, with
// the branch name's case and dots kept, and from config.worktree under
// extensions.worktreeConfig.
func TestBranchRemote(t *testing.T) {
	h, dir := testRepo(t)
	testgit.Git(t, dir, "config", "branch.Feat/v1.2.remote", "up")
	if got := h.BranchRemote("Feat/v1.2"); got != "up" {
		t.Errorf("BranchRemote(Feat/v1.2) = %q", got)
	}
	if got := h.BranchRemote("feat/v1.2"); got != "" {
		t.Errorf("BranchRemote(feat/v1.2) = %q, want none (branch names are case-sensitive)", got)
	}
	testgit.Git(t, dir, "config", "extensions.worktreeConfig", "true")
	testgit.Git(t, dir, "config", "--worktree", "branch.wt.remote", "mine")
	if got := h.BranchRemote("wt"); got != "mine" {
		t.Errorf("BranchRemote(wt) from config.worktree = %q", got)
	}
}

// Snapshot commits go to every clone: they name the git user as author and
// committer (memsync's placeholder only when git has none) and the worktree
// by its path relative to the primary, never an absolute local path.
func TestSnapshotAttribution(t *testing.T) {
	h, dir := testRepo(t)
	testgit.Git(t, dir, "config", "user.name", "Ada Lovelace")
	testgit.Git(t, dir, "config", "user.email", "ada@example.com")
	for _, v := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(v, "") // empty is unset, for git and for memsync: the config names the user
	}
	write(t, h.Store.Path(), memfile.Header+"\n"+entry(idA, "A", "first"))
	take(t, h, "")
	out := testgit.Git(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%B", Ref)
	if !strings.HasPrefix(out, "Ada Lovelace <ada@example.com>|Ada Lovelace <ada@example.com>|") {
		t.Errorf("snapshot identity: %q", out)
	}
	if strings.Contains(out, dir) || !strings.Contains(out, "Memsync-Worktree: .\n") {
		t.Errorf("snapshot trailers name a local path: %q", out)
	}
}

// TestObjectKind: what a ref may hold is named from its header alone; an
// object larger than any snapshot's commit is never read.
func TestObjectKind(t *testing.T) {
	h, dir := testRepo(t)
	hashOf := func(args ...string) string {
		return strings.TrimSpace(testgit.Git(t, dir, args...))
	}
	commit := hashOf("rev-parse", "HEAD")
	testgit.Git(t, dir, "tag", "-a", "-m", "a tag", "v1")
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ hash, want string }{
		{commit, "commit"},
		{hashOf("rev-parse", "v1"), "tag"},
		{hashOf("rev-parse", "HEAD^{tree}"), "tree"},
		{hashOf("hash-object", "-w", "--stdin"), "blob"},
		{hashOf("hash-object", "-w", big), "object of 2097152 bytes"},
		{strings.Repeat("1", 40), "missing"},
		{"not a hash", "missing"},
	} {
		if got := h.ObjectKind(c.hash); got != c.want {
			t.Errorf("ObjectKind(%s) = %q, want %q", c.hash, got, c.want)
		}
	}
}
