package memsync

import (
	"context"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// Every operation that removes or replaces entries snapshots the memory
// first where the memory keeps history (hooks installed, or a snapshot ref),
// so an entry added since the last snapshot and then removed is in `log`
// and comes back with Rollback.
func TestDestructiveOpsSnapshotFirst(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		op    string
		hooks bool // history kept because hooks are installed (else: a snapshot ref exists)
		o     Options
		run   func(m *Memory, doomed Entry) error
	}{
		{"delete", false, Options{}, func(m *Memory, e Entry) error { _, err := m.Delete(ctx, e.ID); return err }},
		{"delete", true, Options{}, func(m *Memory, e Entry) error { _, err := m.Delete(ctx, e.ID); return err }},
		{"archive", false, Options{}, func(m *Memory, e Entry) error { _, err := m.Archive(ctx, e.ID); return err }},
		{"gc", false, Options{MaxEntries: new(1)}, func(m *Memory, e Entry) error { _, err := m.GC(ctx, GCOptions{}); return err }},
		{"promote", true, Options{}, func(m *Memory, e Entry) error { _, err := m.Promote(ctx, e.ID); return err }},
		{"resolve", false, Options{}, func(m *Memory, e Entry) error {
			f, err := m.load(ctx, View{})
			if err != nil {
				return err
			}
			ours := f.Entries[len(f.Entries)-1]
			theirs := ours
			theirs.Content = "theirs replaces it"
			if err := merge.Log(m.conflictLog, "test", []merge.Conflict{{ID: ours.ID, Ours: ours, Theirs: theirs}}); err != nil {
				return err
			}
			_, err = m.Resolve(ctx, e.ID, Resolution{Keep: KeepTheirs})
			return err
		}},
	} {
		name := tc.op + "/ref"
		if tc.hooks {
			name = tc.op + "/hooks"
		}
		t.Run(name, func(t *testing.T) {
			m, dir := lifecycleRepo(t, tc.o, "kept from the start")
			if tc.hooks {
				if _, err := m.InstallHooks(ctx, InstallHooksOptions{Executable: "memsync"}); err != nil {
					t.Fatal(err)
				}
			} else if _, err := m.Snapshot(ctx, SnapshotOptions{}); err != nil {
				t.Fatal(err)
			}
			doomed := add(t, m, "added after the last snapshot, then "+tc.op)
			if err := tc.run(m, doomed); err != nil {
				t.Fatal(err)
			}
			log, err := m.Log(ctx, LogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var before *LogEntry
			for i := range log {
				if log[i].Subject == "memsync snapshot before "+tc.op {
					before = &log[i]
				}
			}
			if before == nil {
				t.Fatalf("no snapshot before %s in the log: %+v", tc.op, log)
			}
			h, err := m.history(ctx)
			if err != nil {
				t.Fatal(err)
			}
			files, err := h.Files(before.Commit)
			if err != nil {
				t.Fatal(err)
			}
			if f := memfile.Parse(files.Memory); len(f.Entries) != 2 || f.Entries[1].ID != doomed.ID || f.Entries[1].Content != doomed.Content {
				t.Fatalf("the snapshot before %s holds %+v", tc.op, f.Entries)
			}
			if _, err := m.Rollback(ctx, before.Commit, doomed.ID); err != nil {
				t.Fatal(err)
			}
			if got, err := m.Get(ctx, View{}, doomed.ID); err != nil || len(got) != 1 || got[0].Content != doomed.Content {
				t.Fatalf("after rollback: %+v, %v", got, err)
			}
			cleanStatus(t, dir)
		})
	}
}

// A memory that keeps no history (no hooks, no snapshot ref) gets none from
// a delete: the ref is not created behind the user's back.
func TestDeleteWithoutHistoryTakesNoSnapshot(t *testing.T) {
	ctx := context.Background()
	m, dir := lifecycleRepo(t, Options{}, "one", "two")
	if _, err := m.Delete(ctx, "2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := testgit.GitErr(dir, "rev-parse", "--verify", "-q", history.Ref); strings.TrimSpace(got) != "" {
		t.Fatalf("delete created %s at %s", history.Ref, got)
	}
}
