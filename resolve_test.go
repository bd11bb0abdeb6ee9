package memsync

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/memsync/memsync/internal/merge"
	"github.com/memsync/memsync/memfile"
)

// withConflict adds content and records a conflict on its entry, as a sync
// that met another version of it does; it returns the entry.
func withConflict(t *testing.T, m *Memory, content string) Entry {
	t.Helper()
	a := add(t, m, content)
	f, err := m.load(context.Background(), View{})
	if err != nil {
		t.Fatal(err)
	}
	i, err := f.Find(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	theirs := f.Entries[i]
	theirs.Content = "their version of " + content
	if err := merge.Log(m.conflictLog, "test", []merge.Conflict{{ID: a.ID, Ours: f.Entries[i], Theirs: theirs}}); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestResolveRefusesBinaryFields: an edited entry whose bullet holds
// invalid UTF-8 or a NUL (made by hand, or read back from an editor's file
// by Conflict.Edited) is refused before it is written; it went into the
// memory file and damaged it (every read warned, the next rewrite made a
// backup).
func TestResolveRefusesBinaryFields(t *testing.T) {
	ctx := context.Background()
	m, _ := openRepo(t, Options{})
	fromText, err := (&Conflict{}).Edited([]byte("## Edited\n- Tags: x\n- Content: fine\n- Note: \xff\xfe\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i, edited := range []Entry{
		{Content: "by hand", Fields: map[string]string{"Note": "bad \xff bytes"}},
		{Content: "by hand", Fields: map[string]string{"Note": "nul \x00 byte"}},
		fromText,
	} {
		a := withConflict(t, m, "the build uses ninja "+string(rune('a'+i)))
		if _, err := m.Resolve(ctx, a.ID, Resolution{Keep: KeepEdit, Edited: &edited}); !errors.Is(err, memfile.ErrInvalid) {
			t.Errorf("%d: resolve with %q: %v, want ErrInvalid", i, edited.Fields, err)
		}
	}
	data, err := os.ReadFile(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	if ps := memfile.Parse(data).Problems; len(ps) > 0 {
		t.Fatalf("the memory file is damaged: %v", ps)
	}
}

// TestResolveRefusesEmptyEdit: an edited entry with no content is refused
// (ErrEmpty, as Add and Edit refuse it) and the conflict stays; it replaced
// the entry by one with no content, title or date.
func TestResolveRefusesEmptyEdit(t *testing.T) {
	ctx := context.Background()
	m, _ := openRepo(t, Options{})
	for i, edited := range []Entry{{}, {Title: "kept title", Content: " \n\t "}} {
		a := withConflict(t, m, "the build uses ninja "+string(rune('a'+i)))
		if _, err := m.Resolve(ctx, a.ID, Resolution{Keep: KeepEdit, Edited: &edited}); !errors.Is(err, ErrEmpty) || !errors.Is(err, memfile.ErrInvalid) {
			t.Errorf("%d: resolve with an empty entry: %v, want ErrEmpty", i, err)
		}
		if got, err := m.Get(ctx, View{}, a.ID); err != nil || got[0].Content != a.Content {
			t.Errorf("%d: the entry is now %+v (%v)", i, got, err)
		}
		if _, err := m.Conflict(ctx, a.ID); err != nil {
			t.Errorf("%d: the conflict is gone: %v", i, err)
		}
	}
}

// TestResolveExact: Resolution.Exact settles only the conflict whose whole
// ID the reference is; without it the reference may be a prefix (as
// `memsync resolve` takes one). A page that showed a conflict settled by
// another process meanwhile used to settle the conflict whose ID starts
// with the one it showed.
func TestResolveExact(t *testing.T) {
	ctx := context.Background()
	m, _ := openRepo(t, Options{})
	a := withConflict(t, m, "the pool size is ten")
	prefix := a.ID[:len(a.ID)-1] // settled elsewhere: no conflict has this whole ID
	if _, err := m.Resolve(ctx, prefix, Resolution{Keep: KeepTheirs, Exact: true}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Resolve(%q, Exact): %v, want ErrNotFound", prefix, err)
	}
	if cs, err := m.Conflicts(ctx); err != nil || len(cs) != 1 {
		t.Fatalf("conflicts after the exact miss: %+v, %v", cs, err)
	}
	res, err := m.Resolve(ctx, prefix, Resolution{Keep: KeepTheirs})
	if err != nil || res.ID != a.ID {
		t.Fatalf("Resolve(%q) by prefix: %+v, %v", prefix, res, err)
	}
}
