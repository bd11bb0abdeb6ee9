package memsync

import (
	"context"
	"errors"

	"github.com/memsync/memsync/internal/history"
	"github.com/memsync/memsync/internal/policy"
	"github.com/memsync/memsync/memfile"
)

// ErrSecret is what a write returns (wrapped in a *memfile.SecretError,
// which names the rule and the position) for an entry that holds what
// gitleaks' published rules take for a credential: add, import, restore,
// resolve and the fold of a worktree copy all refuse it.
var ErrSecret = memfile.ErrSecret

type allowSecretsKey struct{}

// AllowSecrets returns a context under which a Memory's writes (Add,
// Import, Restore, Resolve) let in what the secret rules find: the override
// for a false positive. Each entry let in this way records the rules in its
// "Secret-Allowed" bullet, so the choice is visible and later writes of the
// entry pass. Owner and admin only: a worker's write under it is refused.
func AllowSecrets(ctx context.Context) context.Context {
	return context.WithValue(ctx, allowSecretsKey{}, true)
}

// secretsAllowed tells whether ctx comes from AllowSecrets.
func secretsAllowed(ctx context.Context) bool {
	ok, _ := ctx.Value(allowSecretsKey{}).(bool)
	return ok
}

// allowAsked records in e the rules that find a secret in it when ctx comes
// from AllowSecrets; the write's store.Store.Validate then lets it in (and
// refuses a secret otherwise). A worker may not ask.
func (m *Memory) allowAsked(ctx context.Context, e *memfile.Entry) error {
	if !secretsAllowed(ctx) {
		return nil
	}
	if err := m.allow(policy.OpSecret); err != nil {
		return err
	}
	e.AllowSecrets()
	return nil
}

// admitSecrets is the check of a write that moves stored entries without
// validating them (Restore): allowAsked, then memfile.CheckSecrets.
func (m *Memory) admitSecrets(ctx context.Context, e *memfile.Entry) error {
	if err := m.allowAsked(ctx, e); err != nil {
		return err
	}
	return m.forRole(memfile.CheckSecrets(e))
}

// workerSecretError is a secret refusal a worker sees: its hint offers no
// override, which a worker may not use.
type workerSecretError struct{ error }

func (e *workerSecretError) Unwrap() error { return e.error }

// forRole marks a secret refusal for a worker's hint (workerSecretError).
func (m *Memory) forRole(err error) error {
	if err != nil && m.role == policy.Worker && errors.Is(err, ErrSecret) {
		return &workerSecretError{err}
	}
	return err
}

// workerSecretHint is the advice a worker gets for a secret refusal.
func workerSecretHint(err error) string {
	if se := new(history.SecretError); errors.As(err, &se) {
		return "nothing was snapshotted, merged or pushed; this role may not change entry " + se.ID + " nor let its secret in: tell the user (an owner or admin takes it out)"
	}
	return "take the secret out of the entry and save it again (and rotate it if it is a real one: it was on this machine in clear); " +
		"this role may not store what the secret rules find: if it is no secret, tell the user"
}

// secretSnapshotHint is the advice that goes with a snapshot or a merge
// refused for a secret in the entry id (a *history.SecretError).
func secretSnapshotHint(id string) string {
	return "nothing was snapshotted or pushed; take the secret out ('memsync edit " + id + "') or the entry ('memsync delete " + id +
		"'), and rotate the key if it is a real one; if it is no secret, add the line '- " + memfile.SecretAllowedField + ": RULE' to the entry"
}
