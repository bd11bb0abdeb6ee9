package store

import (
	"errors"
	"github.com/memsync/memsync/memfile"
	"testing"

	"github.com/memsync/memsync/internal/fakesecret"
)

// TestSecretInType: the type is scanned as written, before NormalizeType
// lower-cases it: a user's -t value, a hand-written heading's type, and a
// ralph type tag; and the heading is scanned as one line, so a type that
// names a key and a title that holds it are found together.
func TestSecretInType(t *testing.T) {
	key := fakesecret.AWSKey(21)
	s := Open(t.TempDir())
	check := func(what string, e *memfile.Entry, field string) {
		t.Helper()
		var se *memfile.SecretError
		if err := memfile.CheckSecrets(e); !errors.As(err, &se) {
			t.Errorf("%s: CheckSecrets = %v, want a SecretError", what, err)
			return
		}
		if f := se.Findings[0]; f.Field != field || f.Line != 1 {
			t.Errorf("%s: found at %s line %d, want %s line 1", what, f.Field, f.Line, field)
		}
	}
	e := s.NewEntry(key, "deploy notes", "the deploy user", nil)
	check("NewEntry's type", &e, "type")
	if err := s.Validate(&e); !errors.Is(err, memfile.ErrSecret) {
		t.Errorf("Validate of a type holding a key: %v", err)
	}

	f := memfile.Parse([]byte("# Memories\n\n## " + key + ": deploy notes\n- ID: handkey00001\n- Content: the deploy user\n"))
	if len(f.Entries) != 1 || f.Entries[0].Type == "" {
		t.Fatalf("the heading's type was not read: %+v", f.Entries)
	}
	check("a hand-written heading's type", &f.Entries[0], "type")

	ralph := "# Memories\n\n## Patterns\n\n### mem-1770245557-134c\n> the deploy user\n<!-- tags: type:" + key + " | created: 2026-02-04 -->\n"
	f = memfile.Parse([]byte(ralph))
	if len(f.Entries) != 1 || f.Entries[0].Type == "" {
		t.Fatalf("the ralph type tag was not read: %+v", f.Entries)
	}
	check("a ralph type tag", &f.Entries[0], "type")

	// Edit's way in: the type set on a stored entry.
	e = s.NewEntry("", "deploy notes", "the deploy user", nil)
	if err := memfile.CheckSecrets(&e); err != nil {
		t.Fatalf("a clean entry: %v", err)
	}
	e.SetType(key)
	check("SetType", &e, "type")

	// The generic rule needs the key word and the value on one line: the
	// heading is scanned as written, type and title together.
	generic := "8dyfuiRyq=vVc3RRr_edRk-fK__JItpZ"
	f = memfile.Parse([]byte("# Memories\n\n## Api Key: " + generic + "\n- ID: handkey00002\n- Content: the staging one\n"))
	check("a heading 'Key Word: secret'", &f.Entries[0], "type")
	// A finding in the title is placed in the title.
	f = memfile.Parse([]byte("# Memories\n\n## Deploy: user " + key + "\n- ID: handkey00003\n- Content: the staging one\n"))
	check("a title after a type", &f.Entries[0], "title")
	var se *memfile.SecretError
	if errors.As(memfile.CheckSecrets(&f.Entries[0]), &se) && se.Findings[0].Column != 6 {
		t.Errorf("the finding is at column %d of the title, want 6", se.Findings[0].Column)
	}

	// An ordinary type is no secret, in any spelling.
	for _, typ := range []string{"pattern", "Architecture Decision", "FIX"} {
		e := s.NewEntry(typ, "deploy notes", "the deploy user", nil)
		if err := memfile.CheckSecrets(&e); err != nil {
			t.Errorf("type %q: %v", typ, err)
		}
	}
}
