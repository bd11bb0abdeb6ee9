// Package policy holds the roles (owner, admin, worker, …) and what each may do. Roles are
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
// decided (delete, restore, archive, gc, promote, import, edit), nor let in
// what the secret rules find.
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

// Op is an operation a role may or may not do. Being a type, a misspelt
// operation does not compile, where a misspelt string would have passed as
// one that anybody may do.
type Op int

// The operations. The zero Op is no operation; Check refuses it, like any
// value outside this list, to a worker.
const (
	OpAdd       Op = iota + 1 // save an entry
	OpShow                    // show one entry
	OpList                    // list entries
	OpSearch                  // search entries or the archive
	OpSummary                 // summarize
	OpSync                    // sync with a remote
	OpDelete                  // delete entries
	OpRestore                 // move archived entries back
	OpArchive                 // move entries to the archive
	OpGC                      // archive by the limits
	OpPromote                 // copy an entry to the global layer
	OpImport                  // import foreign memories
	OpRollback                // roll the memory back to a snapshot
	OpResolve                 // resolve sync conflicts
	OpSyncForce               // sync past a refusal (sync --force)
	OpEdit                    // change an entry's content, title, tags or type
	OpPurge                   // rewrite the history without entries
	OpSecret                  // let in what the secret rules find (--allow-secret)
)

// ops names each operation as messages show it; privileged marks those
// only owner and admin may do.
var ops = [...]struct {
	name       string
	privileged bool
}{
	OpAdd:       {"add", false},
	OpShow:      {"show", false},
	OpList:      {"list", false},
	OpSearch:    {"search", false},
	OpSummary:   {"summary", false},
	OpSync:      {"sync", false},
	OpDelete:    {"delete", true},
	OpRestore:   {"restore", true},
	OpArchive:   {"archive", true},
	OpGC:        {"gc", true},
	OpPromote:   {"promote", true},
	OpImport:    {"import", true},
	OpRollback:  {"rollback", true},
	OpResolve:   {"resolve", true},
	OpSyncForce: {"sync --force", true},
	OpEdit:      {"edit", true},
	OpPurge:     {"purge", true},
	OpSecret:    {"let a secret in", true},
}

// Ops returns every operation, in the order of their constants.
func Ops() []Op {
	out := make([]Op, 0, len(ops)-1)
	for op := OpAdd; int(op) < len(ops); op++ {
		out = append(out, op)
	}
	return out
}

func (op Op) valid() bool { return op > 0 && int(op) < len(ops) }

// String is the operation's name as messages show it ("delete",
// "sync --force").
func (op Op) String() string {
	if !op.valid() {
		return fmt.Sprintf("op(%d)", int(op))
	}
	return ops[op].name
}

// Privileged reports whether only owner and admin may do op (true for an
// unknown Op).
func (op Op) Privileged() bool { return !op.valid() || ops[op].privileged }

// RefusedError names the role and the operation it may not do.
type RefusedError struct {
	Role Role
	Op   Op
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("role %s may not %s (only owner and admin may)", e.Role, e.Op)
}

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Unwrap() error { return ErrRefused }

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
func (r Role) Check(op Op) error {
	if r == Worker && op.Privileged() {
		return &RefusedError{Role: r, Op: op}
	}
	return nil
}
