package memsync

import (
	"context"

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
// entry pass.
func AllowSecrets(ctx context.Context) context.Context {
	return context.WithValue(ctx, allowSecretsKey{}, true)
}

// secretsAllowed tells whether ctx comes from AllowSecrets.
func secretsAllowed(ctx context.Context) bool {
	ok, _ := ctx.Value(allowSecretsKey{}).(bool)
	return ok
}

// allowAsked records in e the rules that find a secret in it when ctx comes
// from AllowSecrets; the write's memfile.Store.Validate then lets it in (and
// refuses a secret otherwise).
func allowAsked(ctx context.Context, e *memfile.Entry) {
	if secretsAllowed(ctx) {
		e.AllowSecrets()
	}
}

// admitSecrets is the check of a write that moves stored entries without
// validating them (Restore): allowAsked, then memfile.CheckSecrets.
func admitSecrets(ctx context.Context, e *memfile.Entry) error {
	allowAsked(ctx, e)
	return memfile.CheckSecrets(e)
}

// secretSnapshotHint is the advice that goes with a snapshot or a merge
// refused for a secret in the entry id (a *history.SecretError).
func secretSnapshotHint(id string) string {
	return "nothing was snapshotted or pushed; take the secret out ('memsync edit " + id + "') or the entry ('memsync delete " + id +
		"'), and rotate the key if it is a real one; if it is no secret, add the line '- " + memfile.SecretAllowedField + ": RULE' to the entry"
}
