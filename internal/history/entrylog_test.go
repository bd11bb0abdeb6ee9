package history

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// entryHistory is a made-up history around entry idA: added, left alone
// while others change, edited in a snapshot without a record (an older
// memsync's) and in one whose record is cut (Memsync-More), archived,
// edited in the archive, restored, edited on a branch that a merge brings
// in, removed, and added again. It returns the snapshots in order.
func entryHistory(t *testing.T) (*History, string) {
	t.Helper()
	h, dir := testRepo(t)
	h.AcceptRemoval = true // a made-up history, written by hand
	many := func(n int, content string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString("\n" + entry(fmt.Sprintf("many%02d", i), fmt.Sprintf("bulk %d", i), content))
		}
		return b.String()
	}
	hostile := "## Pattern: title \x1b]0;pwned\x07 with\tcontrols\n- ID: hostile01\n- Content: x\n"
	steps := []struct {
		old          bool
		active, arch string
	}{
		{active: entry(idA, "A", "one")},
		{active: entry(idA, "A", "one") + "\n" + entry(idB, "B", "b")},
		{old: true, active: entry(idA, "A", "two") + "\n" + entry(idB, "B", "b")},
		{old: true, active: entry(idA, "A", "two") + "\n" + entry(idB, "B", "b2")},
		{active: entry(idA, "A", "two") + "\n" + entry(idB, "B", "b2") + many(25, "m")},
		{active: entry(idA, "A", "three") + "\n" + entry(idB, "B", "b2") + many(25, "m2")},
		{active: entry(idB, "B", "b2") + "\n" + hostile, arch: entry(idA, "A", "three")},
		{active: entry(idB, "B", "b3") + "\n" + hostile, arch: entry(idA, "A", "three")},
		{active: entry(idB, "B", "b3"), arch: entry(idA, "A", "three, archived")},
		{active: entry(idB, "B", "b3") + "\n" + entry(idA, "A", "three, archived")},
	}
	for _, s := range steps {
		write(t, h.Store.ArchivePath(), memfile.Header+"\n"+s.arch)
		if s.old {
			takeOld(t, h, memfile.Header+"\n"+s.active)
			continue
		}
		write(t, h.Store.Path(), memfile.Header+"\n"+s.active)
		take(t, h, "")
	}
	// A branch from here edits A; ours adds C; the merge brings the edit in.
	base, err := h.head()
	if err != nil {
		t.Fatal(err)
	}
	theirs := branch(t, h, dir, base.String(), memfile.Header+"\n"+entry(idB, "B", "b3")+"\n"+entry(idA, "A", "four, theirs"))
	ours := branch(t, h, dir, base.String(), memfile.Header+"\n"+entry(idB, "B", "b3")+"\n"+entry(idA, "A", "three, archived")+"\n"+entry(idC, "C", "c"))
	testgit.Git(t, dir, "update-ref", Ref, ours)
	res, err := h.MergeFrom(context.Background(), theirs, MergeOptions{Source: "test"})
	if err != nil || res.Kind != Merged {
		t.Fatalf("merge: %+v %v", res, err)
	}
	h.AcceptRemoval = true
	write(t, h.Store.ArchivePath(), memfile.Header+"\n")
	write(t, h.Store.Path(), memfile.Header+"\n"+entry(idB, "B", "b3")+"\n"+entry(idC, "C", "c"))
	take(t, h, "removed")
	write(t, h.Store.Path(), memfile.Header+"\n"+entry(idB, "B", "b3")+"\n"+entry(idC, "C", "c")+"\n"+entry(idA, "A", "again"))
	take(t, h, "again")
	return h, dir
}

// oracle lists, by parsing every file of every snapshot Ref reaches, the
// snapshots whose entry id differs from their first parent's, in the
// active file or the archive.
func oracle(t *testing.T, h *History, dir, id string) map[string]bool {
	t.Helper()
	find := func(b []byte) *memfile.Entry {
		f := memfile.Parse(b)
		for i := range f.Entries {
			if f.Entries[i].ID == id {
				return &f.Entries[i]
			}
		}
		return nil
	}
	differ := func(a, b *memfile.Entry) bool {
		if a == nil || b == nil {
			return a != b
		}
		return !sameEntry(a, b)
	}
	out := map[string]bool{}
	for _, c := range strings.Fields(testgit.Git(t, dir, "rev-list", Ref)) {
		s, err := h.Read(c)
		if err != nil {
			t.Fatal(err)
		}
		after, err := h.Files(c)
		if err != nil {
			t.Fatal(err)
		}
		var before Files
		if s.Parent != "" {
			if before, err = h.Files(s.Parent); err != nil {
				t.Fatal(err)
			}
		}
		if differ(find(before.Memory), find(after.Memory)) || differ(find(before.Archive), find(after.Archive)) {
			out[c] = true
		}
	}
	return out
}

// TestEntryLogExact: EntryLog lists exactly the snapshots that parsing
// every snapshot's files finds changing the entry (through records,
// snapshots without one, cut records, the archive and a merge's second
// parent), newest first, each with the right kind and diff.
func TestEntryLogExact(t *testing.T) {
	h, dir := entryHistory(t)
	for _, id := range []string{idA, idB, idC, "hostile01", "many07"} {
		got, err := h.EntryLog(EntryRef{IDs: []string{id}}, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		want := oracle(t, h, dir, id)
		have := map[string]bool{}
		for i, e := range got {
			have[e.Commit] = true
			if i > 0 && e.Time > got[i-1].Time {
				t.Fatalf("%s: not newest first: %s after %s", id, e.Time, got[i-1].Time)
			}
			if len(e.Changes) != 1 || e.Changes[0].ID != id || e.Changes[0].Diff != nil {
				t.Fatalf("%s: changes %+v", id, e.Changes)
			}
		}
		if len(have) != len(got) || !reflect.DeepEqual(have, want) {
			t.Fatalf("%s: EntryLog lists %d snapshots %v, parsing every snapshot finds %v", id, len(got), have, want)
		}
	}

	got, err := h.EntryLog(EntryRef{IDs: []string{idA}}, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range got {
		ch := e.Changes[0]
		k := ch.Kind
		if ch.Archive {
			k += " in the archive"
		}
		kinds = append(kinds, k)
		if ch.Diff == nil {
			t.Fatalf("no diff with patch: %+v", ch)
		}
	}
	// Newest first: added again, removed, changed by the merge and by
	// the branch it merged, restored, edited in the archive, archived,
	// changed with a cut record and without a record, added.
	want := []string{Added, Removed, Changed, Changed, Restored, Changed + " in the archive", Archived, Changed, Changed, Added}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	last := got[len(got)-1].Changes[0]
	if !strings.Contains(*last.Diff, "+- Content: one\n") || strings.Contains(*last.Diff, "\n-") {
		t.Fatalf("diff of the first add: %q", *last.Diff)
	}
	if d := *got[5].Changes[0].Diff; !strings.Contains(d, "-- Content: three\n+- Content: three, archived\n") {
		t.Fatalf("diff of the archive edit: %q", d)
	}

	// -n bounds the list; an alias (another ID of the same entry) is
	// followed too; a prefix of a gone entry's ID finds it, a prefix two
	// entries share is ambiguous.
	if two, err := h.EntryLog(EntryRef{IDs: []string{idA}}, 2, false); err != nil || len(two) != 2 || two[1].Commit != got[1].Commit {
		t.Fatalf("limit 2: %+v %v", two, err)
	}
	both, err := h.EntryLog(EntryRef{IDs: []string{idC, "hostile01"}}, 0, false)
	if err != nil || len(both) != len(oracle(t, h, dir, idC))+len(oracle(t, h, dir, "hostile01")) {
		t.Fatalf("two IDs: %d snapshots, %v", len(both), err)
	}
	if p, err := h.EntryLog(EntryRef{Prefix: "hostile"}, 0, false); err != nil || len(p) != 2 {
		t.Fatalf("prefix: %+v %v", p, err)
	}
	if _, err := h.EntryLog(EntryRef{Prefix: "many0"}, 0, false); !errors.Is(err, memfile.ErrAmbiguous) {
		t.Fatalf("an ambiguous prefix: %v", err)
	}
}

// TestEntryLogDerived: an entry without a stored ID (as orch writes them)
// is followed by its derived ID while its text is unchanged.
func TestEntryLogDerived(t *testing.T) {
	h, dir := testRepo(t)
	noID := "## Fix: no id here\n- Tags: t\n- Date: 2026-01-01\n- Content: derived\n"
	for _, text := range []string{entry(idB, "B", "1"), entry(idB, "B", "1") + "\n" + noID, entry(idB, "B", "2") + "\n" + noID, entry(idB, "B", "2")} {
		write(t, h.Store.Path(), memfile.Header+"\n"+text)
		h.AcceptRemoval = true
		take(t, h, "")
	}
	f := memfile.Parse([]byte(memfile.Header + "\n" + noID))
	id := f.Entries[0].ID
	got, err := h.EntryLog(EntryRef{IDs: []string{id}, Derived: true}, 0, false)
	if err != nil || len(got) != 2 || got[0].Changes[0].Kind != Removed || got[1].Changes[0].Kind != Added {
		t.Fatalf("derived: %+v %v", got, err)
	}
	if want := oracle(t, h, dir, id); len(want) != 2 || !want[got[0].Commit] || !want[got[1].Commit] {
		t.Fatalf("oracle %v", want)
	}
}

// TestLogChangesRecordedEqualsCompared: the entries LogChanges names from
// the snapshots' records are those comparing each snapshot with its first
// parent names (what -p does), for every snapshot of a history with
// records, cut records, none and a merge; and most came from records.
func TestLogChangesRecordedEqualsCompared(t *testing.T) {
	h, _ := entryHistory(t)
	stat, err := h.LogChanges(0, false)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := h.LogChanges(0, true)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := h.Log(0)
	if err != nil || len(stat) != len(plain) || len(patch) != len(plain) {
		t.Fatalf("%d, %d and %d snapshots, %v", len(stat), len(patch), len(plain), err)
	}
	fromRecords := 0
	for i := range stat {
		if _, complete := recordedChanges(readMessage(t, h, stat[i].Commit)); complete {
			fromRecords++
		}
		var compared []EntryChange
		for _, ch := range patch[i].Changes {
			if ch.Diff == nil || *ch.Diff == "" {
				t.Fatalf("snapshot %d: change without a diff: %+v", i, ch)
			}
			ch.Diff = nil
			compared = append(compared, ch)
		}
		if compared == nil {
			compared = []EntryChange{}
		}
		if !reflect.DeepEqual(stat[i].Changes, compared) {
			t.Fatalf("snapshot %d (%s):\nrecords: %+v\ncompared: %+v", i, stat[i].Subject, stat[i].Changes, compared)
		}
		if stat[i].Changes == nil {
			t.Fatalf("snapshot %d: nil changes", i)
		}
		c := Counts{}
		for _, ch := range stat[i].Changes {
			switch ch.Kind {
			case Added:
				c.Added++
			case Removed:
				c.Removed++
			case Changed:
				c.Changed++
			}
		}
		if c != stat[i].Counts {
			t.Fatalf("snapshot %d: counts %+v, changes %+v", i, stat[i].Counts, c)
		}
		stat[i].Changes = nil
		if !reflect.DeepEqual(stat[i], plain[i]) {
			t.Fatalf("snapshot %d: %+v, Log says %+v", i, stat[i], plain[i])
		}
	}
	if fromRecords < len(stat)-5 { // two without a record, three with more than 20 changes
		t.Fatalf("only %d of %d snapshots named their entries in a complete record", fromRecords, len(stat))
	}
}
