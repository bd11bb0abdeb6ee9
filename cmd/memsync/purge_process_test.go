package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/fakesecret"
)

// appendByHand appends text to the memory file as an editor would.
func appendByHand(t *testing.T, repo, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(repo, ".agent", "memories.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotRefusesHandWrittenSecret: a secret written into the memory
// file by hand is not snapshotted: the post-commit hook warns in one line
// naming the entry and rule (never the key) and the commit stands; memsync
// snapshot refuses with exit 5; sync pushes nothing of it; once the entry
// carries Secret-Allowed for the rule, it is snapshotted.
func TestSnapshotRefusesHandWrittenSecret(t *testing.T) {
	env, root, remote := bareRemote(t)
	repo := filepath.Join(root, "a")
	gitRun(t, env, root, "clone", "-q", remote, repo)
	memsyncIn(t, env, repo, "hooks", "install")
	memsyncIn(t, env, repo, "add", "the build needs go 1.24")
	gitRun(t, env, repo, "commit", "-q", "--allow-empty", "-m", "one")
	before := strings.TrimSpace(gitRun(t, env, repo, "rev-parse", "refs/memsync/snapshots"))

	key := fakesecret.AWSKey(11)
	appendByHand(t, repo, "\n## Deploy\n- ID: handkey00001\n- Content: aws_access_key_id = "+key+"\n")
	cmd := exec.Command("git", "commit", "--allow-empty", "-m", "two")
	cmd.Dir, cmd.Env = repo, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git commit failed (a hook must never break it): %v\n%s", err, out)
	}
	if got := strings.TrimSpace(gitRun(t, env, repo, "log", "-1", "--format=%s")); got != "two" {
		t.Errorf("the commit did not stand: HEAD is %q", got)
	}
	var warnings []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "memsync") {
			warnings = append(warnings, l)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "handkey00001") || !strings.Contains(warnings[0], "aws-access-token") {
		t.Errorf("want one warning line naming the entry and the rule, got:\n%s", out)
	}
	if strings.Contains(string(out), key) {
		t.Errorf("the hook printed the key:\n%s", out)
	}
	if got := strings.TrimSpace(gitRun(t, env, repo, "rev-parse", "refs/memsync/snapshots")); got != before {
		t.Errorf("the hook snapshotted the secret: %s -> %s", before, got)
	}

	stderr := refused(t, env, repo, "snapshot")
	for _, want := range []string{"handkey00001", "aws-access-token", "line 1, column 21"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("snapshot's refusal does not say %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, key) {
		t.Errorf("the refusal prints the key:\n%s", stderr)
	}
	refused(t, env, repo, "sync")
	if out := gitRun(t, env, root, "--git-dir="+remote, "log", "-p", "--all"); strings.Contains(out, key) {
		t.Fatalf("sync pushed the key")
	}

	// The override, written by hand too.
	appendByHand(t, repo, "- Secret-Allowed: aws-access-token\n")
	memsyncIn(t, env, repo, "snapshot")
	if got := gitRun(t, env, repo, "log", "-p", "refs/memsync/snapshots"); !strings.Contains(got, "handkey00001") {
		t.Errorf("the allowed entry was not snapshotted")
	}
}

// holds tells whether any object refs reach in the repository gitDir
// (commits, trees, blobs) holds s: git rev-list --objects, then the
// content of each with git cat-file --batch.
func holds(t *testing.T, env []string, gitDir, s string, refs ...string) bool {
	t.Helper()
	list := gitRun(t, env, filepath.Dir(gitDir), append([]string{"--git-dir=" + gitDir, "rev-list", "--objects"}, refs...)...)
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(list), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			ids = append(ids, f[0])
		}
	}
	if len(ids) == 0 {
		t.Fatalf("%s: no objects reachable from %v", gitDir, refs)
	}
	cmd := exec.Command("git", "--git-dir="+gitDir, "cat-file", "--batch")
	cmd.Env, cmd.Stdin = env, strings.NewReader(strings.Join(ids, "\n")+"\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(out), s)
}

// TestPurgeTwoClones: purge takes an entry out of every snapshot here and
// on the remote; the other clone's sync drops it from its memory and
// history and never brings it back; an old history pushed again by a stale
// clone is cleaned by the next sync; --prune leaves no object holding it.
func TestPurgeTwoClones(t *testing.T) {
	env, root, remote := bareRemote(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, c := range []string{a, b} {
		gitRun(t, env, root, "clone", "-q", remote, c)
	}
	key := fakesecret.AWSKey(12)
	memsyncIn(t, env, a, "add", "first: retry the upstream with backoff")
	memsyncIn(t, env, a, "snapshot")
	memsyncIn(t, env, a, "add", "--allow-secret", "deploy user\naws_access_key_id = "+key)
	var id string
	for _, l := range strings.Split(memsyncIn(t, env, a, "list"), "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.Contains(l, "deploy user") {
			id = f[1]
		}
	}
	memsyncIn(t, env, a, "snapshot")
	memsyncIn(t, env, a, "add", "third: the cache key is the path")
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	if !strings.Contains(memsyncIn(t, env, b, "list"), "deploy user") {
		t.Fatal("clone b did not get the entry")
	}
	memsyncIn(t, env, b, "add", "b learned this")
	memsyncIn(t, env, b, "sync")
	stale := strings.TrimSpace(gitRun(t, env, b, "rev-parse", "refs/memsync/snapshots"))
	gitRun(t, env, b, "update-ref", "refs/keep/stale", stale) // the sync that applies the purge prunes
	// A third clone merges b's and pushes its own ref, so b's ref on the
	// remote is an ancestor of c's, and both reach the key.
	c := filepath.Join(root, "c")
	gitRun(t, env, root, "clone", "-q", remote, c)
	memsyncIn(t, env, c, "add", "c learned this")
	memsyncIn(t, env, c, "sync")
	remoteRefs := func() []string {
		return strings.Fields(gitRun(t, env, root, "--git-dir="+remote, "for-each-ref", "--format=%(refname)", "refs/memsync/"))
	}
	if refs := remoteRefs(); len(refs) != 4 || !holds(t, env, remote, key, refs...) {
		t.Fatalf("the remote's refs before the purge: %q", refs)
	}

	if dry, stderr, code := memsyncRun(t, env, a, "purge", "--dry-run", "--secret", "aws-access-token"); code != exitNotFound {
		t.Errorf("--secret finds an entry whose Secret-Allowed names the rule (exit %d):\n%s%s", code, dry, stderr)
	}
	dry := memsyncIn(t, env, a, "purge", "--dry-run", id)
	if !strings.Contains(dry, id) || !strings.Contains(dry, "would purge 1 entry") {
		t.Errorf("purge --dry-run:\n%s", dry)
	}
	if !holds(t, env, filepath.Join(a, ".git"), key, "refs/memsync/snapshots") {
		t.Fatal("a dry run changed the history")
	}
	out := memsyncIn(t, env, a, "purge", "--prune", id)
	if !strings.Contains(out, "pushed the new history to origin") {
		t.Errorf("purge did not push:\n%s", out)
	}
	if strings.Contains(out, key) {
		t.Errorf("purge printed the key:\n%s", out)
	}
	for _, ref := range remoteRefs() {
		if holds(t, env, remote, key, ref) {
			t.Errorf("the remote's %s still reaches the key", ref)
		}
	}
	for _, c := range []struct{ gitDir, ref string }{{filepath.Join(a, ".git"), "refs/memsync/snapshots"}, {remote, "refs/memsync/snapshots"}} {
		if holds(t, env, c.gitDir, key, c.ref) {
			t.Errorf("%s: %s still reaches the key", c.gitDir, c.ref)
		}
		if log := gitRun(t, env, root, "--git-dir="+c.gitDir, "log", "-p", c.ref); strings.Contains(log, key) || strings.Contains(log, "deploy user") {
			t.Errorf("%s: git log -p shows the entry", c.gitDir)
		}
	}
	// --prune: no object of clone a holds it any more.
	cmd := exec.Command("git", "--git-dir="+filepath.Join(a, ".git"), "cat-file", "--batch-all-objects", "--batch")
	cmd.Env = env
	if all, err := cmd.Output(); err != nil || strings.Contains(string(all), key) {
		t.Errorf("after --prune an object of clone a holds the key (err %v)", err)
	}
	if strings.Contains(memsyncIn(t, env, a, "list"), "deploy user") {
		t.Error("the entry is still in a's memory")
	}

	// The other clone's sync drops it, and it never comes back.
	out = memsyncIn(t, env, b, "sync")
	if !strings.Contains(out, "purged 1 entry") {
		t.Errorf("b's sync does not say it purged the entry:\n%s", out)
	}
	for range 2 {
		memsyncIn(t, env, a, "sync")
		memsyncIn(t, env, b, "sync")
	}
	for _, c := range []string{a, b} {
		list := memsyncIn(t, env, c, "list")
		if strings.Contains(list, "deploy user") || !strings.Contains(list, "b learned this") || !strings.Contains(list, "first: retry") {
			t.Errorf("%s after syncs:\n%s", c, list)
		}
		if holds(t, env, filepath.Join(c, ".git"), key, "refs/memsync/snapshots") {
			t.Errorf("%s: the history reaches the key after sync", c)
		}
	}
	if holds(t, env, remote, key, "refs/memsync/snapshots") {
		t.Error("the remote reaches the key after the syncs")
	}

	// A stale clone pushes the old history over the new one (plain git):
	// the next sync cleans it.
	gitRun(t, env, b, "push", "-q", "--force", "origin", stale+":refs/memsync/snapshots")
	if !holds(t, env, remote, key, "refs/memsync/snapshots") {
		t.Fatal("the stale push did not bring the old history back (test broken)")
	}
	memsyncIn(t, env, a, "sync")
	if holds(t, env, remote, key, "refs/memsync/snapshots") {
		t.Error("a sync did not clean the old history off the remote")
	}
	if list := memsyncIn(t, env, a, "list"); strings.Contains(list, "deploy user") || !strings.Contains(list, "b learned this") {
		t.Errorf("a after the stale push and a sync:\n%s", list)
	}
}

// entryID is the ID of the entry whose title holds title in memsync list's
// output ("" none).
func entryID(t *testing.T, env []string, dir, title string) string {
	t.Helper()
	for _, l := range strings.Split(memsyncIn(t, env, dir, "list"), "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.Contains(l, title) {
			return f[1]
		}
	}
	return ""
}

// refsHolding lists the refs under refs/memsync/ of the repository gitDir
// that reach an object holding s.
func refsHolding(t *testing.T, env []string, gitDir, s string) []string {
	t.Helper()
	var out []string
	for _, ref := range strings.Fields(gitRun(t, env, filepath.Dir(gitDir), "--git-dir="+gitDir, "for-each-ref", "--format=%(refname)", "refs/memsync/")) {
		if holds(t, env, gitDir, s, ref) {
			out = append(out, ref)
		}
	}
	return out
}

// TestPurgeRacesSyncs: clone a purges entries while clones b, c and d keep
// adding and syncing (real processes); after every clone syncs twice more,
// no memory lists the entry and no ref, on the remote or in any clone,
// reaches a snapshot that holds it. A clone that meets the purge must adopt
// it before it merges anything: a sync that merged another clone's old
// history first, then met the tombstones on the shared ref, pushed a merge
// whose tree was clean but whose parent held the entry, and no later sync
// or purge took it out. MEMSYNC_TEST_PURGE_RACES repeats the race.
func TestPurgeRacesSyncs(t *testing.T) {
	if testing.Short() {
		t.Skip("races real processes")
	}
	runs := 1
	if v, err := strconv.Atoi(os.Getenv("MEMSYNC_TEST_PURGE_RACES")); err == nil && v > 0 {
		runs = v
	}
	failed := 0
	for run := range runs {
		if !t.Run(fmt.Sprint(run), purgeRace) {
			failed++
		}
	}
	if runs > 1 {
		t.Logf("%d of %d races left the entry reachable", failed, runs)
	}
}

func purgeRace(t *testing.T) {
	env, root, remote := bareRemote(t)
	a := filepath.Join(root, "a")
	racers := []string{filepath.Join(root, "b"), filepath.Join(root, "c"), filepath.Join(root, "d")}
	all := append([]string{a}, racers...)
	for _, d := range all {
		gitRun(t, env, root, "clone", "-q", remote, d)
		memsyncIn(t, env, d, "add", "first note of "+filepath.Base(d))
		memsyncIn(t, env, d, "sync")
	}
	// Three entries, purged one after another while the others race: three
	// chances for the race in each run.
	var keys, ids []string
	for i := range 3 {
		key := fakesecret.AWSKey(uint64(21 + i))
		title := fmt.Sprintf("deploy user %d", i)
		memsyncIn(t, env, a, "add", "--allow-secret", title+"\naws_access_key_id = "+key)
		keys, ids = append(keys, key), append(ids, entryID(t, env, a, title))
	}
	for _, d := range append(all, a) {
		memsyncIn(t, env, d, "sync")
	}
	if entryID(t, env, racers[1], "deploy user 2") != ids[2] {
		t.Fatal("clone c did not get the entries (test broken)")
	}

	var wg sync.WaitGroup
	done := make(chan struct{})
	for _, d := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				for _, args := range [][]string{{"add", fmt.Sprintf("%s note %d", filepath.Base(d), i)}, {"sync"}} {
					cmd := exec.Command(memsyncBinary(t), args...)
					cmd.Dir, cmd.Env = d, env
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Logf("%s: memsync %v (racing the purge): %v\n%s", filepath.Base(d), args, err, out)
					}
				}
			}
		}()
	}
	for _, id := range ids {
		time.Sleep(200 * time.Millisecond)
		cmd := exec.Command(memsyncBinary(t), "purge", id)
		cmd.Dir, cmd.Env = a, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("purge (racing syncs): %v\n%s", err, out)
		}
	}
	time.Sleep(200 * time.Millisecond)
	close(done)
	wg.Wait()

	for range 2 {
		for _, d := range all {
			memsyncIn(t, env, d, "sync")
		}
	}
	for i, key := range keys {
		for _, d := range all {
			if entryID(t, env, d, fmt.Sprintf("deploy user %d", i)) != "" {
				t.Errorf("%s lists purged entry %d", filepath.Base(d), i)
			}
			if refs := refsHolding(t, env, filepath.Join(d, ".git"), key); len(refs) > 0 {
				t.Errorf("%s: %v reach purged entry %d", filepath.Base(d), refs, i)
			}
		}
		if refs := refsHolding(t, env, remote, key); len(refs) > 0 {
			t.Errorf("the remote's %v reach purged entry %d", refs, i)
		}
	}
}

// TestPurgeMergeWithDirtyParent: a snapshot whose own tree is clean and
// carries the tombstones, merged with an old snapshot that still holds the
// purged entry (pushed with plain git to a clone ref), is rewritten by the
// next sync: its hash changes with its parent's, and no ref reaches the
// entry after the syncs.
func TestPurgeMergeWithDirtyParent(t *testing.T) {
	env, root, remote := bareRemote(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		gitRun(t, env, root, "clone", "-q", remote, d)
	}
	key := fakesecret.AWSKey(31)
	memsyncIn(t, env, a, "add", "first: retry the upstream")
	memsyncIn(t, env, a, "add", "--allow-secret", "deploy user\naws_access_key_id = "+key)
	id := entryID(t, env, a, "deploy user")
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	stale := strings.TrimSpace(gitRun(t, env, b, "rev-parse", "refs/memsync/snapshots"))
	gitRun(t, env, b, "update-ref", "refs/keep/stale", stale) // the sync that applies the purge prunes
	memsyncIn(t, env, a, "purge", id)
	memsyncIn(t, env, b, "sync")
	clean := strings.TrimSpace(gitRun(t, env, b, "rev-parse", "refs/memsync/snapshots"))
	merge := strings.TrimSpace(gitRun(t, env, b, "commit-tree", clean+"^{tree}", "-p", clean, "-p", stale, "-m", "memsync snapshot"))
	gitRun(t, env, b, "push", "-q", "origin", merge+":refs/memsync/clones/other-00000001")
	if !holds(t, env, remote, key, "refs/memsync/clones/other-00000001") {
		t.Fatal("the pushed merge does not reach the key (test broken)")
	}
	for range 2 {
		memsyncIn(t, env, a, "sync")
		memsyncIn(t, env, b, "sync")
	}
	for _, d := range []string{a, b} {
		if refs := refsHolding(t, env, filepath.Join(d, ".git"), key); len(refs) > 0 {
			t.Errorf("%s: %v reach the purged entry", filepath.Base(d), refs)
		}
	}
	if refs := refsHolding(t, env, remote, key); len(refs) > 0 {
		t.Errorf("the remote's %v reach the purged entry", refs)
	}
}

// forgeSecretSnapshot writes, with plain git in clone dir, a snapshot on
// top of its newest one whose memory file also holds an entry with a
// secret and no Secret-Allowed, and pushes it to ref on origin.
func forgeSecretSnapshot(t *testing.T, env []string, dir, ref, id, key string) {
	t.Helper()
	head := strings.TrimSpace(gitRun(t, env, dir, "rev-parse", "refs/memsync/snapshots"))
	mem := snapFile(t, env, dir, head+":memories.md")
	mem += "\n## Deploy\n- ID: " + id + "\n- Date: 2026-01-02\n- Content: aws_access_key_id = " + key + "\n"
	blob := strings.TrimSpace(gitRunIn(t, env, dir, mem, "hash-object", "-w", "--stdin"))
	index := filepath.Join(t.TempDir(), "index")
	ienv := append(slices.Clone(env), "GIT_INDEX_FILE="+index)
	gitRun(t, ienv, dir, "read-tree", head)
	gitRun(t, ienv, dir, "rm", "-q", "-r", "--cached", "memories.md")
	gitRun(t, ienv, dir, "update-index", "--add", "--cacheinfo", "100644,"+blob+",memories.md")
	tree := strings.TrimSpace(gitRun(t, ienv, dir, "write-tree"))
	commit := strings.TrimSpace(gitRun(t, env, dir, "commit-tree", tree, "-p", head, "-m", "memsync snapshot"))
	gitRun(t, env, dir, "push", "-q", "--force", "origin", commit+":"+ref)
}

// TestSyncSecretOnCloneRefHint: a snapshot holding a secret on another
// clone's ref (written with plain git) makes sync refuse with exit 5 and a
// hint; running exactly the hinted command takes the entry out of every
// ref, and the next syncs of both clones succeed.
func TestSyncSecretOnCloneRefHint(t *testing.T) {
	env, root, remote := bareRemote(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		gitRun(t, env, root, "clone", "-q", remote, d)
		memsyncIn(t, env, d, "add", "note of "+filepath.Base(d))
		memsyncIn(t, env, d, "sync")
	}
	var sr struct{ Clone string }
	if err := json.Unmarshal([]byte(memsyncIn(t, env, b, "sync", "--json")), &sr); err != nil || sr.Clone == "" {
		t.Fatalf("sync --json: %v %+v", err, sr)
	}
	key := fakesecret.AWSKey(41)
	forgeSecretSnapshot(t, env, b, "refs/memsync/clones/"+sr.Clone, "forged000001", key)

	if _, errOut, code := memsyncRun(t, env, a, "purge", "--dry-run", "--secret", "aws-access-token"); code != 0 {
		t.Errorf("purge --dry-run --secret does not find the entry on b's ref: exit %d\n%s", code, errOut)
	}
	stderr := refused(t, env, a, "sync")
	m := regexp.MustCompile(`'(memsync [^']+)'`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("sync's refusal gives no command to run:\n%s", stderr)
	}
	args := strings.Fields(m[1])[1:]
	if out, errOut, code := memsyncRun(t, env, a, args...); code != 0 {
		t.Fatalf("the hinted %q: exit %d\n%s%s", m[1], code, out, errOut)
	}
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	memsyncIn(t, env, a, "sync")
	if refs := refsHolding(t, env, remote, key); len(refs) > 0 {
		t.Errorf("after %q and syncs the remote's %v reach the secret", m[1], refs)
	}
	if list := memsyncIn(t, env, a, "list"); !strings.Contains(list, "note of b") {
		t.Errorf("a lost b's entries:\n%s", list)
	}
}

// TestPurgePruneBackups: purge --prune takes the entry out of memsync's
// own copies too: a backup in the memory home (memories.md.bak-<time>, as
// a fold leaves), one beside the canonical file in the git dir
// (memories.md.bak-<hash>) and the search index; no file of the
// repository outside the work tree's own files holds the key after it.
func TestPurgePruneBackups(t *testing.T) {
	env, root, _ := bareRemote(t)
	a := filepath.Join(root, "a")
	gitRun(t, env, root, "clone", "-q", filepath.Join(root, "remote.git"), a)
	key := fakesecret.AWSKey(51)
	memsyncIn(t, env, a, "add", "first: keep the retry budget small")
	memsyncIn(t, env, a, "add", "--allow-secret", "deploy user\naws_access_key_id = "+key)
	id := entryID(t, env, a, "deploy user")
	memsyncIn(t, env, a, "search", "deploy")
	mem := readFile(t, filepath.Join(a, ".git", "memsync", "memories.md"))
	for _, p := range []string{filepath.Join(a, ".agent", "memories.md.bak-20260102T030405Z"), filepath.Join(a, ".git", "memsync", "memories.md.bak-00112233aabbccdd")} {
		if err := os.WriteFile(p, []byte(mem), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	memsyncIn(t, env, a, "purge", "--prune", id)
	for _, dir := range []string{filepath.Join(a, ".agent"), filepath.Join(a, ".git")} {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if b, _ := os.ReadFile(p); strings.Contains(string(b), key) || strings.Contains(string(b), "deploy user") {
				t.Errorf("%s still holds the purged entry", p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if out := memsyncIn(t, env, a, "search", "retry"); !strings.Contains(out, "retry budget") {
		t.Errorf("search after the purge:\n%s", out)
	}
}

// TestSyncAppliedPurgePrunes: a sync that applies another clone's purge
// drops the old objects here too (as purge --prune does) and says so: no
// object of the clone holds the purged text after it.
func TestSyncAppliedPurgePrunes(t *testing.T) {
	env, root, remote := bareRemote(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		gitRun(t, env, root, "clone", "-q", remote, d)
	}
	key := fakesecret.AWSKey(61)
	memsyncIn(t, env, a, "add", "first: keep the retry budget small")
	memsyncIn(t, env, a, "add", "--allow-secret", "deploy user\naws_access_key_id = "+key)
	id := entryID(t, env, a, "deploy user")
	memsyncIn(t, env, a, "sync")
	memsyncIn(t, env, b, "sync")
	memsyncIn(t, env, a, "purge", id)
	out := memsyncIn(t, env, b, "sync")
	if !strings.Contains(out, "purged 1 entry") || !strings.Contains(out, "git gc --prune=now") {
		t.Errorf("b's sync does not say it purged and pruned:\n%s", out)
	}
	cmd := exec.Command("git", "--git-dir="+filepath.Join(b, ".git"), "cat-file", "--batch-all-objects", "--batch")
	cmd.Env = env
	all, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(all), key) {
		t.Error("after the sync that applied the purge an object of clone b holds the key")
	}
	if list := memsyncIn(t, env, b, "list"); !strings.Contains(list, "retry budget") || strings.Contains(list, "deploy user") {
		t.Errorf("b after the sync:\n%s", list)
	}
}

// TestPurgeSaysWhatIsLeft: purge's output, as text and as --json, says
// what a person must still do: rotate the key, have every clone sync, drop
// the old objects in this clone (without --prune) and on the server.
func TestPurgeSaysWhatIsLeft(t *testing.T) {
	env, root, remote := bareRemote(t)
	a := filepath.Join(root, "a")
	gitRun(t, env, root, "clone", "-q", remote, a)
	for i := range 2 {
		memsyncIn(t, env, a, "add", "--allow-secret", fmt.Sprintf("deploy user %d\naws_access_key_id = %s", i, fakesecret.AWSKey(uint64(71+i))))
	}
	memsyncIn(t, env, a, "sync")
	wants := []string{"rotate", "every other clone run 'memsync sync'", "git gc --prune=now", "server"}
	out := memsyncIn(t, env, a, "purge", entryID(t, env, a, "deploy user 0"))
	_, left, _ := strings.Cut(out, "still to do:")
	for _, w := range wants {
		if !strings.Contains(left, w) {
			t.Errorf("purge's text does not say %q under 'still to do:':\n%s", w, out)
		}
	}
	var res struct{ Todo []string }
	if err := json.Unmarshal([]byte(memsyncIn(t, env, a, "purge", "--json", "--prune", entryID(t, env, a, "deploy user 1"))), &res); err != nil {
		t.Fatal(err)
	}
	todo := strings.Join(res.Todo, "\n")
	for _, w := range []string{"rotate", "every other clone", "server"} {
		if !strings.Contains(todo, w) {
			t.Errorf("purge --json's todo does not say %q: %q", w, res.Todo)
		}
	}
	if strings.Contains(todo, "drop the old objects here") {
		t.Errorf("purge --prune still asks to drop the objects here: %q", res.Todo)
	}
}
