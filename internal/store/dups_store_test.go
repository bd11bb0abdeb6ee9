package store

import (
	"github.com/memsync/memsync/memfile"
	"testing"
)

func sessionEntry(id, content, session string) memfile.Entry {
	e := memfile.Entry{ID: id, Title: id, Content: content}
	if session != "" {
		e.SetField("Session", session)
	}
	return e
}

// Import follows the rule Add follows: an entry another session saved is
// no duplicate of a session's entry; one saved without a session, or in the
// same session, is; an entry without a session is a duplicate of any.
func TestImportFollowsSessions(t *testing.T) {
	s := newStore(t)
	e := s.NewEntry("", "", "shared lesson", nil)
	e.SetField("Session", "s1")
	if _, err := s.Append(e); err != nil {
		t.Fatal(err)
	}
	in := []memfile.Entry{
		sessionEntry("i1", "Shared  lesson", "s1"),
		sessionEntry("i2", "shared lesson", ""),
		sessionEntry("i3", "shared lesson", "s2"),
		sessionEntry("i4", "shared lesson", "s2"), // one fact twice in the source
	}
	added, skipped, err := s.Import(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 1 || added[0].ID != "i3" || skipped != 3 {
		t.Fatalf("added %v, skipped %d; want i3 only, 3 skipped", added, skipped)
	}
	if added, skipped, err = s.Import(in, nil); err != nil || len(added) != 0 || skipped != 4 {
		t.Fatalf("a second import added %v, skipped %d (%v)", added, skipped, err)
	}
}
