package memsync

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/memsync/memsync/memfile"
)

// TestAddFieldNames: Entry.Fields become bullets, so a name the memory file
// cannot hold as one ("- Name: value") is refused before anything is
// written; one that can reads back as it was given.
func TestAddFieldNames(t *testing.T) {
	m, _ := openRepo(t, Options{})
	ctx := context.Background()
	bad := []string{
		"Note\n",                // the bullet breaks over two lines
		"x\n- Author",           // and forges another
		"Why: because",          // a colon ends the name early
		"Colour\x1b[31m",        // a terminal escape
		" Lead",                 // edge spaces do not read back
		strings.Repeat("k", 41), // longer than a bullet's name
		"Ünïcode",
	}
	for _, name := range bad {
		_, err := m.Add(ctx, Entry{Content: "fields named " + name, Fields: map[string]string{name: "v"}})
		if !errors.Is(err, memfile.ErrInvalid) {
			t.Errorf("field %q: %v, want ErrInvalid", name, err)
		} else if k, _ := Classify(err); k != KindRefused {
			t.Errorf("field %q: kind %v, want KindRefused", name, k)
		}
	}
	if data, err := os.ReadFile(m.Path()); err == nil {
		t.Fatalf("refused adds wrote the memory:\n%s", data)
	}
	for _, name := range []string{"Note", "Ticket-id", "reviewed_by", "Seen in 2"} {
		e, err := m.Add(ctx, Entry{Content: "fields named " + name, Fields: map[string]string{name: "v"}})
		if err != nil {
			t.Fatalf("field %q: %v", name, err)
		}
		got, err := m.Get(ctx, View{}, e.ID)
		if err != nil || got[0].Fields[name] != "v" {
			t.Fatalf("field %q: read back %v %v", name, got, err)
		}
	}
}

// TestAddFieldValues: a field's value is one line of printable text, as the
// MCP server asks of its own: invalid UTF-8 (which damaged the memory file:
// every later read warned of it and the next rewrite made a backup), a bidi
// override, a line separator or a C1 control are refused, the Key's too.
func TestAddFieldValues(t *testing.T) {
	m, _ := openRepo(t, Options{})
	ctx := context.Background()
	for _, name := range []string{"Note", memfile.KeyField} {
		for _, v := range []string{"bad \xff\xfe bytes", "a\u202eb", "a\u2028b", "a\u0085b", "a\tb"} {
			_, err := m.Add(ctx, Entry{Content: "a value of " + name, Fields: map[string]string{name: v}})
			if !errors.Is(err, memfile.ErrInvalid) {
				t.Errorf("%s %q: %v, want ErrInvalid", name, v, err)
			}
		}
	}
	if data, err := os.ReadFile(m.Path()); err == nil {
		t.Fatalf("refused adds wrote the memory:\n%q", data)
	}
	e, err := m.Add(ctx, Entry{Content: "a value", Fields: map[string]string{"Note": "naïve — fine ✓"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := m.Get(ctx, View{}, e.ID); err != nil || got[0].Fields["Note"] != "naïve — fine ✓" {
		t.Fatalf("read back %v %v", got, err)
	}
}
