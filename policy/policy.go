// Package policy holds the roles of seed 001 and what each may do. Roles are
// guardrails for agents, not security: they keep a worker loop from deleting
// or restoring what an owner decided, and a refused operation changes nothing.
package policy

import (
	"errors"
	"fmt"
	"strings"
)

// Role is who runs memsync.
type Role string

// The roles. Owner and admin may do everything; a worker may save, search,
// list, show, summarize and search the archive, but not change what others
// decided (delete, restore, archive, gc, promote, import).
const (
	Owner  Role = "owner"
	Admin  Role = "admin"
	Worker Role = "worker"
)

// Default is the role of a person at a terminal.
const Default = Owner

// ErrRefused is wrapped by every RefusedError.
var ErrRefused = errors.New("operation refused for this role")

// ErrUnknownRole is returned by Parse.
var ErrUnknownRole = errors.New("unknown role")

// RefusedError names the role and the operation it may not do.
type RefusedError struct {
	Role Role
	Op   string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("role %s may not %s (only owner and admin may)", e.Role, e.Op)
}

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// privileged are the operations only owner and admin may do.
var privileged = map[string]bool{
	"delete": true, "restore": true, "archive": true, "gc": true, "promote": true, "import": true,
	"rollback": true,
}

// Parse reads a role name; "" is Default.
func Parse(s string) (Role, error) {
	switch r := Role(strings.ToLower(strings.TrimSpace(s))); r {
	case "":
		return Default, nil
	case Owner, Admin, Worker:
		return r, nil
	}
	return "", fmt.Errorf("%w %q (owner, admin or worker)", ErrUnknownRole, s)
}

// Check returns a *RefusedError if the role may not do op.
func (r Role) Check(op string) error {
	if r == Worker && privileged[op] {
		return &RefusedError{Role: r, Op: op}
	}
	return nil
}
