package memsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/internal/searchidx"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/lock"
	"github.com/memsync/memsync/memfile"
)

// openRepo opens the memory of a new repository (and its first commit).
func openRepo(t *testing.T, o Options) (*Memory, string) {
	t.Helper()
	dir := testgit.Isolate(t)
	testgit.Git(t, dir, "init", "-q", ".")
	testgit.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	m, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return m, dir
}

func add(t *testing.T, m *Memory, content string) Entry {
	t.Helper()
	e, err := m.Add(context.Background(), Entry{Content: content})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A hook out of time stops its snapshot before the ref moves and leaves
// nothing behind in the process: the snapshots taken after it, in the same
// process, both work (no process-wide latch).
func TestSnapshotsAfterHookTimeout(t *testing.T) {
	ctx := context.Background()
	m, dir := openRepo(t, Options{})
	add(t, m, "first")
	var out bytes.Buffer
	RunHook(ctx, dir, "post-commit", nil, HookOptions{Stderr: &out, Timeout: time.Nanosecond})
	if !strings.Contains(out.String(), "gave up after 1ns") {
		t.Fatalf("hook output %q", out.String())
	}
	if got, _ := testgit.GitErr(dir, "rev-parse", "--verify", "-q", history.Ref); got != "" {
		t.Fatalf("the timed-out hook moved the ref to %s", got)
	}
	first, err := m.Snapshot(ctx, SnapshotOptions{})
	if err != nil || !first.Created {
		t.Fatalf("snapshot after the timeout: %+v, %v", first, err)
	}
	add(t, m, "second")
	second, err := m.Snapshot(ctx, SnapshotOptions{Message: "by hand"})
	if err != nil || !second.Created || second.Snapshot.Parent != first.Snapshot.Commit || second.Snapshot.Subject != "by hand" {
		t.Fatalf("second snapshot: %+v, %v", second, err)
	}
	// And the hook itself, in the same process.
	add(t, m, "third")
	out.Reset()
	RunHook(ctx, dir, "post-commit", nil, HookOptions{Stderr: &out})
	log, err := m.Log(ctx, LogOptions{})
	if err != nil || out.Len() > 0 || len(log) != 3 || log[0].Hook != "post-commit" {
		t.Fatalf("hook after the timeout: %q, %d snapshots, %v", out.String(), len(log), err)
	}
}

// Snapshot, Log, Diff and Rollback through the Go API give what the CLI
// prints.
func TestHistoryOperations(t *testing.T) {
	ctx := context.Background()
	m, _ := openRepo(t, Options{})
	if log, err := m.Log(ctx, LogOptions{}); err != nil || log == nil || len(log) != 0 {
		t.Fatalf("log without snapshots: %#v, %v", log, err)
	}
	if _, err := m.Diff(ctx, "", "", DiffOptions{}); !errors.Is(err, history.ErrNoSnapshot) {
		t.Fatalf("diff without snapshots: %v", err)
	}
	a := add(t, m, "alpha")
	s1, err := m.Snapshot(ctx, SnapshotOptions{})
	if err != nil || !s1.Created {
		t.Fatal(s1, err)
	}
	if again, err := m.Snapshot(ctx, SnapshotOptions{}); err != nil || again.Created || again.Snapshot.Commit != s1.Snapshot.Commit {
		t.Fatalf("unchanged memory: %+v, %v", again, err)
	}
	b := add(t, m, "beta")
	d, err := m.Diff(ctx, "", "", DiffOptions{Text: true})
	if err != nil || d.From != s1.Snapshot.Commit || d.To != LiveRev || len(d.Changes) != 1 ||
		d.Changes[0].Kind != history.Added || d.Changes[0].After.ID != b.ID || d.Text == nil || !strings.Contains(*d.Text, "beta") {
		t.Fatalf("diff: %+v, %v", d, err)
	}
	if _, err := m.Snapshot(ctx, SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	log, err := m.Log(ctx, LogOptions{N: 1})
	if err != nil || len(log) != 1 || log[0].Entries != 2 || log[0].Added != 1 {
		t.Fatalf("log: %+v, %v", log, err)
	}
	rb, err := m.Rollback(ctx, "~1")
	if err != nil || rb.Target != s1.Snapshot.Commit || rb.Snapshot == "" {
		t.Fatalf("rollback: %+v, %v", rb, err)
	}
	all, _ := m.List(ctx, View{})
	if len(all) != 1 || all[0].ID != a.ID {
		t.Fatalf("after the rollback: %+v", all)
	}
	if _, err := m.Rollback(ctx, "nosuchrev"); !errors.Is(err, history.ErrNotSnapshot) {
		t.Fatalf("rollback to nothing: %v", err)
	}
}

// Workers may not roll back or force a sync; the global layer has no
// history, but has its conflicts.
func TestHistoryRefusals(t *testing.T) {
	ctx := context.Background()
	w, _ := openRepo(t, Options{Role: "worker"})
	add(t, w, "alpha")
	if _, err := w.Snapshot(ctx, SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Rollback(ctx, "~0"); !errors.Is(err, policy.ErrRefused) {
		t.Fatalf("worker rollback: %v", err)
	}
	if res, err := w.Sync(ctx, "origin", SyncOptions{Force: true}); !errors.Is(err, policy.ErrRefused) || res.Remote != "origin" {
		t.Fatalf("worker sync --force: %v", err)
	}
	t.Setenv("MEMSYNC_GLOBAL_DIR", filepath.Join(t.TempDir(), "g"))
	g, err := Open("", Options{Global: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"snapshot": func() error { _, err := g.Snapshot(ctx, SnapshotOptions{}); return err },
		"log":      func() error { _, err := g.Log(ctx, LogOptions{}); return err },
		"diff":     func() error { _, err := g.Diff(ctx, "", "", DiffOptions{}); return err },
		"rollback": func() error { _, err := g.Rollback(ctx, "~1"); return err },
		"sync":     func() error { _, err := g.Sync(ctx, "", SyncOptions{}); return err },
	} {
		if err := call(); !errors.Is(err, ErrNoHistory) {
			t.Errorf("%s on the global layer: %v", name, err)
		}
	}
	if cs, err := g.Conflicts(ctx); err != nil || cs == nil || len(cs) != 0 {
		t.Fatalf("global conflicts: %#v, %v", cs, err)
	}
}

// Sync over a bare remote between two clones; then a sync whose context is
// done changes nothing.
func TestSyncAndContext(t *testing.T) {
	ctx := context.Background()
	root := testgit.Isolate(t)
	bare := filepath.Join(root, "remote.git")
	testgit.Git(t, root, "init", "-q", "--bare", bare)
	clone := func(name string) *Memory {
		dir := filepath.Join(root, name)
		testgit.Git(t, root, "clone", "-q", bare, dir)
		m, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := clone("a"), clone("b")
	e := add(t, a, "shared fact")
	res, err := a.Sync(ctx, "", SyncOptions{})
	if err != nil || res.Remote != "origin" || !res.Pushed {
		t.Fatalf("first sync: %+v, %v", res, err)
	}
	res, err = b.Sync(ctx, "origin", SyncOptions{DryRun: true})
	if err != nil || !res.DryRun || len(res.Changes) != 1 || res.Changes[0].After.ID != e.ID {
		t.Fatalf("dry run: %+v, %v", res, err)
	}
	if got, _ := b.List(ctx, View{}); len(got) != 0 {
		t.Fatalf("a dry run changed the memory: %+v", got)
	}
	add(t, b, "local fact")
	before, _ := os.ReadFile(b.Path())
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.Sync(done, "origin", SyncOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("sync with a cancelled context: %v", err)
	}
	if after, _ := os.ReadFile(b.Path()); !bytes.Equal(after, before) {
		t.Fatal("a cancelled sync changed the memory")
	}
	if res, err = b.Sync(ctx, "origin", SyncOptions{}); err != nil || res.Kind != history.Merged || !res.Pushed {
		t.Fatalf("sync: %+v, %v", res, err)
	}
	if got, _ := b.List(ctx, View{}); len(got) != 2 {
		t.Fatalf("after the sync: %+v", got)
	}
}

// Conflicts lists what was recorded; Resolve keeps a version, takes an
// TestSyncIndexesTheMerge: a sync's merge rewrites the memory; its search
// index is brought up to date while git pushes, so that it names every
// entry of the merged file before the sync returns, with no search since.
func TestSyncIndexesTheMerge(t *testing.T) {
	ctx := context.Background()
	root := testgit.Isolate(t)
	bare := filepath.Join(root, "remote.git")
	testgit.Git(t, root, "init", "-q", "--bare", bare)
	var ms []*Memory
	for _, name := range []string{"a", "b"} {
		dir := filepath.Join(root, name)
		testgit.Git(t, root, "clone", "-q", bare, dir)
		m, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	a, b := ms[0], ms[1]
	add(t, a, "the retry budget is 300 ms")
	if _, err := a.Sync(ctx, "", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	add(t, b, "the pool size is set where the config is loaded")
	if _, err := b.Search(ctx, "pool", SearchOptions{}); err != nil { // b's memory gets its index
		t.Fatal(err)
	}
	if res, err := b.Sync(ctx, "", SyncOptions{}); err != nil || res.Kind != history.Merged || !res.Pushed {
		t.Fatalf("sync: %+v, %v", res, err)
	}
	data, err := os.ReadFile(b.Path())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(b.store.StateDir, searchidx.FileName))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := searchidx.Decode(raw, data)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ix.Close() }()
	if n := len(memfile.Parse(data).Entries); n != 2 || ix.Len() != n {
		t.Fatalf("after the sync the index holds %d entries, the file %d", ix.Len(), n)
	}
}

// TestSyncIndexesWithoutWaiting: a sync indexes its merge while git
// pushes, but a cache is no reason to wait: another writer that takes the
// memory's lock as the merge lets it go (it queued behind it) and keeps it
// delays neither a sync that is done nor one whose context ended, and the
// search after it is right.
func TestSyncIndexesWithoutWaiting(t *testing.T) {
	root := testgit.Isolate(t)
	bare := filepath.Join(root, "remote.git")
	testgit.Git(t, root, "init", "-q", "--bare", bare)
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte("#!/bin/sh\ncat >/dev/null\nif [ -e slow ]; then sleep 3; fi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var ms []*Memory
	for _, name := range []string{"a", "b"} {
		dir := filepath.Join(root, name)
		testgit.Git(t, root, "clone", "-q", bare, dir)
		m, err := Open(dir, Options{LockTimeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	a, b := ms[0], ms[1]
	lp, err := a.store.LockPath()
	if err != nil {
		t.Fatal(err)
	}
	changed := a.store.Changed
	// The second sync's context ends while git pushes.
	for round, timeout := range []time.Duration{time.Minute, 1500 * time.Millisecond} {
		add(t, b, fmt.Sprintf("the pool size is set where the config is loaded, round %d", round))
		if _, err := b.Sync(context.Background(), "", SyncOptions{}); err != nil {
			t.Fatal(err)
		}
		add(t, a, fmt.Sprintf("the retry budget is 300 ms, round %d", round))
		if _, err := a.Search(context.Background(), "pool", SearchOptions{}); err != nil { // a's memory gets its index
			t.Fatal(err)
		}
		held := make(chan *lock.Lock, 1)
		a.store.Changed = func(f *os.File) {
			changed(f)
			go func() {
				l, err := lock.Exclusive(context.Background(), lp, 20*time.Second)
				if err != nil {
					t.Error(err)
				}
				held <- l
			}()
			time.Sleep(50 * time.Millisecond) // the writer waits in flock
		}
		slow := filepath.Join(bare, "slow") // a's pushes take 3 s
		if err := os.WriteFile(slow, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		start := time.Now()
		_, err := a.Sync(ctx, "", SyncOptions{})
		took := time.Since(start)
		cancel()
		_ = os.Remove(slow)
		a.store.Changed = changed
		select {
		case l := <-held:
			if l != nil {
				_ = l.Release()
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: the sync did not write its merge (%v)", round, err)
		}
		if round == 0 && err != nil {
			t.Fatal(err)
		}
		if took > 10*time.Second { // the push takes 3 s; the lock would take 20
			t.Fatalf("round %d: the sync took %s, waiting for the lock to index its merge (%v)", round, took.Round(time.Millisecond), err)
		}
	}
	hits, err := a.Search(context.Background(), "pool", SearchOptions{})
	if err != nil || len(hits) != 2 {
		t.Fatalf("search after the syncs: %d hits, %v", len(hits), err)
	}
}

// edited entry, refuses an archived one, and snapshots the result.
func TestConflictsResolve(t *testing.T) {
	ctx := context.Background()
	m, _ := openRepo(t, Options{})
	a, b := add(t, m, "the build uses ninja"), add(t, m, "tests run in ci")
	f, err := m.load(ctx, View{})
	if err != nil {
		t.Fatal(err)
	}
	record := func(e memfile.Entry, theirs string) {
		t.Helper()
		th := e
		th.Content = theirs
		if err := merge.Log(m.conflictLog, "test", []merge.Conflict{{ID: e.ID, Ours: e, Theirs: th}}); err != nil {
			t.Fatal(err)
		}
	}
	record(f.Entries[0], "the build uses bazel")
	record(f.Entries[1], "tests run locally")
	cs, err := m.Conflicts(ctx)
	if err != nil || len(cs) != 2 || cs[0].ID != a.ID || cs[0].Theirs.Content != "the build uses bazel" || !strings.Contains(cs[0].Diff, "bazel") {
		t.Fatalf("conflicts: %+v, %v", cs, err)
	}
	if text := cs[0].EditText(); !strings.Contains(text, "ninja") || !strings.Contains(text, "bazel") || strings.Index(text, "ninja") > strings.Index(text, "bazel") {
		t.Fatalf("edit text: %q", text)
	}
	if _, err := m.Resolve(ctx, "zzzzzzzzzzzz", Resolution{Keep: KeepOurs}); !errors.Is(err, memfile.ErrNotFound) {
		t.Fatalf("unknown conflict: %v", err)
	}
	if _, err := m.Resolve(ctx, a.ID, Resolution{Keep: KeepEdit}); !errors.Is(err, memfile.ErrInvalid) {
		t.Fatalf("edit without an entry: %v", err)
	}
	edited := entryOf(&f.Entries[0], 0) // an Entry made by hand: no file entry behind it
	edited.ID, edited.Content = "", "the build uses bazel 7"
	res, err := m.Resolve(ctx, a.ID[:8], Resolution{Keep: KeepEdit, Edited: &edited})
	if err != nil || res.ID != a.ID || res.Kept != KeepEdit || res.Entry.ID != a.ID || res.Snapshot == "" {
		t.Fatalf("resolve --edit: %+v, %v", res, err)
	}
	if got, _ := m.Get(ctx, View{}, a.ID); len(got) != 1 || got[0].Content != "the build uses bazel 7" {
		t.Fatalf("after the edit: %+v", got)
	}
	if _, err := m.store.Archive(b.ID); err != nil {
		t.Fatal(err)
	}
	var ae *ArchivedError
	if _, err := m.Resolve(ctx, b.ID, Resolution{Keep: KeepTheirs}); !errors.As(err, &ae) || ae.ID != b.ID {
		t.Fatalf("resolve of an archived entry: %v", err)
	}
	if _, err := m.Resolve(ctx, b.ID, Resolution{Keep: KeepOurs}); err != nil {
		t.Fatal(err)
	}
	if cs, err := m.Conflicts(ctx); err != nil || len(cs) != 0 {
		t.Fatalf("conflicts left: %+v, %v", cs, err)
	}
}

// The edited text of a conflict reads back as one entry with the
// conflict's ID; none left cancels; two are refused.
func TestConflictEdited(t *testing.T) {
	c := Conflict{ID: "abcdabcdabcd", ours: "## Note: a\n- Content: ours\n", theirs: "## Note: b\n- Content: theirs\n"}
	e, err := c.Edited([]byte("# comment\n\n## Note: merged\n- Content: both\n"))
	if err != nil || e.ID != c.ID || e.Content != "both" {
		t.Fatalf("one entry: %+v %v", e, err)
	}
	if _, err := c.Edited([]byte("# nothing\n")); !errors.Is(err, ErrEditCancelled) {
		t.Fatalf("no entry: %v", err)
	}
	if _, err := c.Edited([]byte(c.EditText())); err == nil || errors.Is(err, ErrEditCancelled) {
		t.Fatalf("both versions left: %v", err)
	}
}
