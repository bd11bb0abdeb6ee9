package memory

import (
	"errors"
	"fmt"
	"strings"
)

// Role is who runs memsync, as seed 001 defines it: owners and admins may do
// everything, workers (agents in a loop) may read and save but not delete
// or restore.
type Role string

// The roles.
const (
	Owner  Role = "owner"
	Admin  Role = "admin"
	Worker Role = "worker"
)

// ErrForbidden is returned when the role may not do an operation.
var ErrForbidden = errors.New("not allowed for this role")

// ParseRole reads a role name (case-insensitive); "" is Owner.
func ParseRole(s string) (Role, error) {
	switch r := Role(strings.ToLower(strings.TrimSpace(s))); r {
	case "":
		return Owner, nil
	case Owner, Admin, Worker:
		return r, nil
	}
	return "", fmt.Errorf("unknown role %q (want owner, admin or worker)", s)
}

// Operations a role is checked for.
const (
	OpDelete  = "delete"
	OpRestore = "restore"
)

// Allow returns nil if the role may do op, else an error wrapping ErrForbidden.
func (r Role) Allow(op string) error {
	if r == Worker && (op == OpDelete || op == OpRestore) {
		return fmt.Errorf("%w: a worker may not %s memories (ask an owner or admin, or run with --role admin)", ErrForbidden, op)
	}
	return nil
}
