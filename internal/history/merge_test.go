package history

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

func memText(entries ...string) string {
	var b strings.Builder
	b.WriteString(memfile.Header + "\n")
	for i, e := range entries {
		if i > 0 {
			b.WriteString("\n")
		}
		id, content, _ := strings.Cut(e, "=")
		b.WriteString("## " + id + "\n- ID: " + id + "\n- Content: " + content + "\n")
	}
	return b.String()
}

// branch makes a snapshot of text as a child of parent (moving Ref there
// first) and returns its hash; the live file is text afterwards.
func branch(t *testing.T, h *History, dir, parent, text string) string {
	t.Helper()
	if parent != "" {
		testgit.Git(t, dir, "update-ref", Ref, parent)
	}
	write(t, h.Store.Path(), text)
	h.AcceptRemoval = true // a made-up history, written by hand
	defer func() { h.AcceptRemoval = false }()
	return take(t, h, "").Snapshot.Commit
}

func TestMergeFrom(t *testing.T) {
	h, dir := testRepo(t)
	base := branch(t, h, dir, "", memText("a=1", "b=2", "c=3", "d=4"))
	theirs := branch(t, h, dir, base, memText("a=1", "b=2 theirs", "c=3", "d=4", "t=theirs new"))
	ours := branch(t, h, dir, base, memText("a=1 ours", "b=2", "d=4", "o=ours new"))

	// A dry run changes nothing.
	before, _ := os.ReadFile(h.Store.Path())
	res, err := h.MergeFrom(context.Background(), theirs, MergeOptions{DryRun: true, Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(h.Store.Path())
	if res.Kind != Merged || string(before) != string(after) || strings.TrimSpace(testgit.Git(t, dir, "rev-parse", Ref)) != ours {
		t.Fatalf("dry run: %+v, file or ref changed", res)
	}
	if len(res.Changes) != 2 { // b changed, t added
		t.Fatalf("dry run changes: %+v", res.Changes)
	}

	res, err = h.MergeFrom(context.Background(), theirs, MergeOptions{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != Merged || res.Base != base {
		t.Fatalf("%+v", res)
	}
	parents := strings.Fields(testgit.Git(t, dir, "rev-list", "--parents", "-n1", Ref))
	if len(parents) != 3 || parents[1] != ours || parents[2] != theirs {
		t.Fatalf("merge snapshot's parents: %v", parents)
	}
	f, _ := h.Store.Load()
	got := map[string]string{}
	for _, e := range f.Entries {
		got[e.ID] = e.Content
	}
	want := map[string]string{"a": "1 ours", "b": "2 theirs", "d": "4", "o": "ours new", "t": "theirs new"}
	if len(got) != len(want) {
		t.Fatalf("merged %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("merged %v, want %v", got, want)
		}
	}
	// Merging it again is nothing new.
	if res, err := h.MergeFrom(context.Background(), theirs, MergeOptions{}); err != nil || res.Kind != UpToDate {
		t.Fatalf("again: %+v %v", res, err)
	}
}

func TestMergeFromFastForwardAndGuard(t *testing.T) {
	h, dir := testRepo(t)
	base := branch(t, h, dir, "", memText("a=1", "b=2", "c=3", "d=4"))
	// theirs removes 3 of 4 entries, and no snapshot says it was deliberate
	// (one without a record, as an older memsync took it).
	write(t, h.Store.Path(), memText("a=1", "e=5"))
	b := &batch{}
	theirs := commitTree(t, h, b, addFiles(b, Files{Memory: []byte(memText("a=1", "e=5"))}, nil))
	branch(t, h, dir, base, memText("a=1", "b=2", "c=3", "d=4"))
	if _, err := h.MergeFrom(context.Background(), theirs, MergeOptions{}); !errors.Is(err, merge.ErrMassDeletion) {
		t.Fatalf("removing 3 of 4 entries: %v", err)
	}
	if got := strings.TrimSpace(testgit.Git(t, dir, "rev-parse", Ref)); got != base {
		t.Fatalf("a refused merge moved the ref to %s", got)
	}
	res, err := h.MergeFrom(context.Background(), theirs, MergeOptions{Force: true})
	if err != nil || res.Kind != FastForward || res.Snapshot != theirs {
		t.Fatalf("%+v %v", res, err)
	}
	data, _ := os.ReadFile(h.Store.Path())
	if string(data) != memText("a=1", "e=5") {
		t.Fatalf("fast-forward wrote %q", data)
	}
}

func TestMergeFromConflictLog(t *testing.T) {
	h, dir := testRepo(t)
	base := branch(t, h, dir, "", memText("a=one two three"))
	theirs := branch(t, h, dir, base, memText("a=uno"))
	branch(t, h, dir, base, memText("a=eins"))
	res, err := h.MergeFrom(context.Background(), theirs, MergeOptions{Source: "test"})
	if err != nil || len(res.Conflicts) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	rs, err := merge.LoadLog(ConflictLog(h.Repo))
	if err != nil || len(rs) != 1 || rs[0].ID != "a" || !strings.Contains(rs[0].Theirs, "uno") || !strings.Contains(rs[0].Ours, "eins") {
		t.Fatalf("log %+v %v", rs, err)
	}
	if data, _ := os.ReadFile(h.Store.Path()); !strings.Contains(string(data), "eins") {
		t.Fatalf("ours is not live: %s", data)
	}
}

// TestMergeFromMarkedLive: a live file with git conflict markers is merged
// by entry before the merge (both sides kept), and backed up.
func TestMergeFromMarkedLive(t *testing.T) {
	h, dir := testRepo(t)
	base := branch(t, h, dir, "", memText("a=1"))
	theirs := branch(t, h, dir, base, memText("a=1", "t=theirs"))
	testgit.Git(t, dir, "update-ref", Ref, base)
	write(t, h.Store.Path(), memfile.Header+"\n## a\n- ID: a\n- Content: 1\n\n<<<<<<< HEAD\n## x\n- ID: x\n- Content: x\n=======\n## y\n- ID: y\n- Content: y\n>>>>>>> b\n")
	res, err := h.MergeFrom(context.Background(), theirs, MergeOptions{Source: "test"})
	if err != nil || res.Kind != Merged || res.Backup == "" {
		t.Fatalf("%+v %v", res, err)
	}
	data, _ := os.ReadFile(h.Store.Path())
	f := memfile.Parse(data)
	if len(f.Problems) > 0 || len(f.Entries) != 4 {
		t.Fatalf("%v\n%s", f.Problems, data)
	}
}
