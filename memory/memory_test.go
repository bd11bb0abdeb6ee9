package memory

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// repo is a fresh git repository with one commit.
func repo(t *testing.T) string {
	testgit.Isolate(t)
	dir := t.TempDir()
	testgit.Git(t, dir, "init", "-q")
	testgit.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	return dir
}

// TestFileStore: the default store through the Recorder and Retriever
// interfaces: memsync IDs, creation times, sources, and a second store on the
// same repository (another process, as far as the file is concerned) sees it
// all.
func TestFileStore(t *testing.T) {
	dir := repo(t)
	fs, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	fs.Type = "lesson"
	var rec Recorder = fs
	before := time.Now().Add(-time.Second)
	ms, err := rec.Record(context.Background(), []Item{
		{Input: "How do we cache tokens?", Output: "In Redis, for 10 minutes", Source: "loop-a"},
		{Output: "Never log secrets"},
	})
	if err != nil || len(ms) != 2 {
		t.Fatalf("record: %v %v", ms, err)
	}
	for _, m := range ms {
		if len(m.ID) != 12 {
			t.Fatalf("ID %q is no memsync ID", m.ID)
		}
		if m.CreatedAt.Before(before) || m.CreatedAt.After(time.Now().Add(time.Second)) {
			t.Fatalf("CreatedAt %v", m.CreatedAt)
		}
	}
	if ms[0].Source != "loop-a" || ms[0].Type != "lesson" || ms[0].Title != "How do we cache tokens?" {
		t.Fatalf("first: %+v", ms[0])
	}
	other, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ret Retriever = other
	found, err := ret.Retrieve(context.Background(), Query{Search: "redis cache", Limit: 5})
	if err != nil || len(found) != 1 || found[0].ID != ms[0].ID || !found[0].CreatedAt.Equal(ms[0].CreatedAt) || found[0].Score <= 0 {
		t.Fatalf("retrieve: %+v %v", found, err)
	}
	all, _ := ret.Retrieve(context.Background(), Query{})
	if len(all) != 2 || all[0].ID != ms[1].ID {
		t.Fatalf("empty search must list newest first: %+v", all)
	}
	if _, err := rec.Record(context.Background(), []Item{{}}); !errors.Is(err, memfile.ErrInvalid) {
		t.Fatalf("empty item: %v", err)
	}
	// The same content again is the stored entry, not a second one.
	again, err := rec.Record(context.Background(), []Item{{Output: "never log SECRETS "}})
	if err != nil || len(again) != 1 || again[0].ID != ms[1].ID {
		t.Fatalf("dedup: %+v %v", again, err)
	}
	all, _ = ret.Retrieve(context.Background(), Query{})
	if len(all) != 2 {
		t.Fatalf("after a duplicate: %d entries", len(all))
	}
	// The memory files are kept out of git status, as the CLI keeps them.
	if st := testgit.Git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("git status not clean:\n%s", st)
	}
}

type failing struct{ calls int }

func (f *failing) Record(context.Context, []Item) ([]Entry, error) {
	f.calls++
	return nil, errors.New("disk full")
}

// TestAgent: AutoUpdate records successes only, recording errors go to
// OnError and do not fail the operation, and a missing part is an error.
func TestAgent(t *testing.T) {
	ctx := context.Background()
	rec := &failing{}
	var reported []error
	a := &Agent{Recorder: rec, AutoUpdate: true, OnError: func(err error) { reported = append(reported, err) }}
	out, err := a.Invoke(ctx, "in", func(context.Context, string) (string, error) { return "out", nil })
	if out != "out" || err != nil || rec.calls != 1 || len(reported) != 1 {
		t.Fatalf("invoke: %q %v calls=%d reported=%v", out, err, rec.calls, reported)
	}
	boom := errors.New("boom")
	if _, err := a.Invoke(ctx, "in", func(context.Context, string) (string, error) { return "", boom }); !errors.Is(err, boom) || rec.calls != 1 {
		t.Fatalf("failed op: %v calls=%d", err, rec.calls)
	}
	if _, err := a.Retrieve(ctx, Query{}); !errors.Is(err, ErrNoRetriever) {
		t.Fatalf("no retriever: %v", err)
	}
	if _, err := (&Agent{}).Record(ctx, Item{Output: "x"}); !errors.Is(err, ErrNoRecorder) {
		t.Fatalf("no recorder: %v", err)
	}
}
