package policy

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	privileged := map[Op]bool{
		OpDelete: true, OpRestore: true, OpArchive: true, OpGC: true, OpPromote: true, OpImport: true,
		OpRollback: true, OpResolve: true, OpSyncForce: true, OpEdit: true, OpPurge: true, OpSecret: true,
	}
	names := map[string]Op{}
	for _, op := range Ops() {
		name := op.String()
		if name == "" || strings.HasPrefix(name, "op(") {
			t.Errorf("Op %d has no name", int(op))
		}
		if prev, dup := names[name]; dup {
			t.Errorf("Op %d and %d are both named %q", int(prev), int(op), name)
		}
		names[name] = op
		if Owner.Check(op) != nil || Admin.Check(op) != nil {
			t.Errorf("owner/admin refused %s", op)
		}
		err := Worker.Check(op)
		if !privileged[op] {
			if err != nil {
				t.Errorf("worker %s: %v", op, err)
			}
			continue
		}
		var re *RefusedError
		if !errors.As(err, &re) || re.Op != op || !errors.Is(err, ErrRefused) {
			t.Errorf("worker %s: %v", op, err)
		}
	}
	for op := range privileged {
		if _, ok := names[op.String()]; !ok {
			t.Errorf("privileged %s missing from Ops()", op)
		}
	}
	if got := Worker.Check(OpSyncForce).Error(); got != "role worker may not sync --force (only owner and admin may)" {
		t.Errorf("message: %q", got)
	}
	for _, op := range []Op{0, Op(len(ops)), -1} {
		if err := Worker.Check(op); !errors.Is(err, ErrRefused) {
			t.Errorf("worker, unknown op %d: %v (want refused)", int(op), err)
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
