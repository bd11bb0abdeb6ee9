package policy

import (
	"errors"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, op := range []string{"delete", "restore", "archive", "gc", "promote", "import"} {
		err := Worker.Check(op)
		var re *RefusedError
		if !errors.As(err, &re) || re.Op != op || !errors.Is(err, ErrRefused) {
			t.Fatalf("worker %s: %v", op, err)
		}
		if Owner.Check(op) != nil || Admin.Check(op) != nil {
			t.Fatalf("owner/admin refused %s", op)
		}
	}
	for _, op := range []string{"add", "search", "list", "show", "summary"} {
		if err := Worker.Check(op); err != nil {
			t.Fatalf("worker %s: %v", op, err)
		}
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]Role{"": Owner, "Worker": Worker, "admin\n": Admin, "owner": Owner} {
		if r, err := Parse(in); err != nil || r != want {
			t.Fatalf("Parse(%q) = %q, %v", in, r, err)
		}
	}
	if _, err := Parse("root"); !errors.Is(err, ErrUnknownRole) {
		t.Fatalf("Parse(root): %v", err)
	}
}
