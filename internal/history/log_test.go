package history

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// takeOld snapshots text as a memsync before change records did: the same
// commit without the record's trailers.
func takeOld(t *testing.T, h *History, text string) string {
	t.Helper()
	write(t, h.Store.Path(), text)
	old, err := h.head()
	if err != nil {
		t.Fatal(err)
	}
	files, err := h.readLiveLocked()
	if err != nil {
		t.Fatal(err)
	}
	b := &batch{}
	tree := addTreeV1(b, files)
	data := encodeCommit(tree, []plumbing.Hash{old}, time.Now(), message("", h.CurrentProvenance("post-commit"), "", record{}, false), h.identity())
	commit := b.add(newObject(plumbing.CommitObject, data))
	if err := h.publish(b, commit, old); err != nil {
		t.Fatal(err)
	}
	return commit.String()
}

// diffLog is the log as memsync computed it before change records: each
// snapshot's active file compared with its first parent's.
func diffLog(t *testing.T, h *History) []LogEntry {
	t.Helper()
	var out []LogEntry
	s, err := h.Head()
	for err == nil {
		cur, perr := h.parsed(s.Commit)
		if perr != nil {
			t.Fatal(perr)
		}
		parent := &memfile.File{}
		if s.Parent != "" {
			if parent, perr = h.parsed(s.Parent); perr != nil {
				t.Fatal(perr)
			}
		}
		out = append(out, LogEntry{Snapshot: *s, Entries: len(cur.Entries), Counts: Count(Compare(parent, cur))})
		if s.Parent == "" {
			break
		}
		s, err = h.Read(s.Parent)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLogRecordedEqualsCompared: a history of snapshots with change
// records and older ones without, edits, removals, entries without IDs, a
// damaged file and a merge snapshot: Log (which reads the records) says
// what comparing each snapshot with its parent says, whole and with -n.
func TestLogRecordedEqualsCompared(t *testing.T) {
	h, dir := testRepo(t)
	h.AcceptRemoval = true // a made-up history, written by hand
	noID := "## Fix: no id here\n- Tags: t\n- Date: 2026-01-01\n- Content: derived\n"
	texts := []struct {
		old  bool
		text string
	}{
		{true, memfile.Header + "\n" + entry(idA, "A", "1")},
		{true, memfile.Header + "\n" + entry(idA, "A", "1") + "\n" + entry(idB, "B", "2")},
		{false, memfile.Header + "\n" + entry(idA, "A", "1 edited") + "\n" + entry(idB, "B", "2") + "\n" + entry(idC, "C", "3")},
		{false, memfile.Header + "\n" + entry(idC, "C", "3") + "\n" + noID},
		{true, memfile.Header + "\n" + entry(idC, "C", "3 again") + "\n" + noID},
		{false, memfile.Header + "\n" + entry(idC, "C", "3 again") + "\n" + strings.Replace(noID, "derived", "edited", 1)},
		{false, memfile.Header + "\n" + entry(idC, "C", "3 again") + "\n## Pattern: torn\n- Content: cut"},
		{false, memfile.Header + "\n"},
		{false, memfile.Header + "\n" + entry(idB, "B", "back")},
	}
	var hashes []string
	for _, x := range texts {
		if x.old {
			hashes = append(hashes, takeOld(t, h, x.text))
		} else {
			hashes = append(hashes, take(t, h, "").Snapshot.Commit)
		}
	}
	// A merge snapshot: theirs branches off the third snapshot.
	ours := hashes[len(hashes)-1]
	theirs := branch(t, h, dir, hashes[2], memText("t=theirs", "u=more"))
	testgit.Git(t, dir, "update-ref", Ref, ours)
	write(t, h.Store.Path(), memfile.Header+"\n"+entry(idB, "B", "back"))
	res, err := h.MergeFrom(context.Background(), theirs, MergeOptions{Source: "test"})
	if err != nil || res.Kind != Merged {
		t.Fatalf("merge: %+v %v", res, err)
	}
	h.AcceptRemoval = true        // branch resets it
	take(t, h, "after the merge") // nothing new: no snapshot
	write(t, h.Store.Path(), memText("t=theirs"))
	take(t, h, "")

	want := diffLog(t, h)
	got, err := h.Log(0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Log:\n%+v\ncompared:\n%+v", got, want)
	}
	for n := 1; n <= len(want)+1; n++ {
		got, err := h.Log(n)
		if err != nil || !reflect.DeepEqual(got, want[:min(n, len(want))]) {
			t.Fatalf("Log(%d): %+v %v", n, got, err)
		}
	}
	// The old ones record nothing; every other one does.
	recordedN := 0
	for _, e := range want {
		c, err := readCommit(h.st, plumbing.NewHash(e.Commit))
		if err != nil {
			t.Fatal(err)
		}
		_, _, ok := recorded(c.message)
		if ok {
			recordedN++
		}
		if wasOld := strings.Contains(strings.Join(hashes, " "), e.Commit) && texts[indexOf(hashes, e.Commit)].old; ok == wasOld {
			t.Fatalf("snapshot %s (%s): recorded %v", e.Commit, e.Subject, ok)
		}
	}
	if recordedN != len(want)-3 {
		t.Fatalf("%d of %d snapshots recorded", recordedN, len(want))
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// TestRecordBounded: the record of a snapshot that adds many entries with
// hostile titles has one line per entry up to maxTitled, then Memsync-More;
// each line is one line of bounded length without control characters, and
// git reads them all as trailers.
func TestRecordBounded(t *testing.T) {
	h, dir := testRepo(t)
	var b strings.Builder
	b.WriteString(memfile.Header + "\n")
	hostile := []string{
		"tab\there\x1b[31m red\x07 bell",
		"carriage\rreturn",
		"line\u2028sep\u2029para\u0085nel",
		strings.Repeat("long ", 300),
		"bad \xff\xfe utf8",
		"Memsync-Entries: 999",
	}
	const n = 30
	for i := range n {
		title := fmt.Sprintf("entry %d %s", i, hostile[i%len(hostile)])
		fmt.Fprintf(&b, "\n## Pattern: %s\n- ID: id%02d\n- Content: c\n", title, i)
	}
	write(t, h.Store.Path(), b.String())
	s := take(t, h, "").Snapshot

	msg := testgit.Git(t, dir, "log", "-1", "--format=%B", Ref)
	var titled, more int
	for _, l := range strings.Split(msg, "\n") {
		if strings.IndexFunc(l, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }) >= 0 || !utf8.ValidString(l) {
			t.Fatalf("a control character or bad UTF-8 in %q", l)
		}
		if utf8.RuneCountInString(l) > len(trailerChanged)+2+maxID+1+maxTitle {
			t.Fatalf("line too long (%d runes): %q", utf8.RuneCountInString(l), l)
		}
		switch k, v, _ := strings.Cut(l, ": "); k {
		case trailerAdded:
			titled++
			if !strings.HasPrefix(v, fmt.Sprintf("id%02d entry ", titled-1)) {
				t.Fatalf("line %d: %q", titled, l)
			}
		case trailerMore:
			more++
			if v != fmt.Sprint(n-maxTitled) {
				t.Fatalf("%q", l)
			}
		}
	}
	if titled != maxTitled || more != 1 {
		t.Fatalf("%d titled lines and %d More lines in:\n%s", titled, more, msg)
	}
	// git's own trailer parser sees the whole record.
	parsed := testgit.Git(t, dir, "-c", "trailer.separators=:", "log", "-1", "--format=%(trailers:only,unfold)", Ref)
	if got := strings.Count(parsed, "\n") + 1; got != 4+2+maxTitled+1 { // provenance (4), entries, changes, titled, more
		t.Fatalf("git reads %d trailers:\n%s", got, parsed)
	}
	got, err := h.Log(1)
	if err != nil || len(got) != 1 || got[0].Commit != s.Commit || got[0].Entries != n || got[0].Counts != (Counts{Added: n}) {
		t.Fatalf("Log: %+v %v", got, err)
	}
}
