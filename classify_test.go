package memsync

import (
	"errors"
	"testing"
)

// TestClassifyUnknownRole: a role that is not owner, admin or worker, from
// Options.Role or MEMSYNC_ROLE, is a usage error (exit 2) as Classify tells
// it, for every front door, not only for the command line's own check.
func TestClassifyUnknownRole(t *testing.T) {
	_, dir := openRepo(t, Options{})
	_, err := Open(dir, Options{Role: "root"})
	if !errors.Is(err, ErrUnknownRole) {
		t.Fatalf("Options.Role root: %v", err)
	}
	if k, _ := Classify(err); k != KindUsage {
		t.Errorf("Options.Role root: kind %v, want KindUsage", k)
	}
	t.Setenv("MEMSYNC_ROLE", "superuser")
	_, err = Open(dir, Options{})
	if k, _ := Classify(err); !errors.Is(err, ErrUnknownRole) || k != KindUsage {
		t.Errorf("MEMSYNC_ROLE superuser: %v, kind %v, want ErrUnknownRole, KindUsage", err, k)
	}
}
