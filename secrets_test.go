package memsync

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// awsKeyFor is a made-up AWS access key ID (no key-shaped literal in the
// source) that gitleaks' aws-access-token rule finds.
func awsKeyFor(seed uint64) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	r := rand.New(rand.NewPCG(seed, 7))
	b := []byte("AKIA")
	for range 16 {
		b = append(b, alphabet[r.IntN(len(alphabet))])
	}
	return string(b)
}

// TestSecretInTypeGoAPI: Add and Edit scan the type as the caller gave it,
// before it is lower-cased; the memory file is left as it was.
func TestSecretInTypeGoAPI(t *testing.T) {
	ctx := context.Background()
	m, _ := openRepo(t, Options{})
	e := add(t, m, "the deploy user")
	before, err := os.ReadFile(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	key := awsKeyFor(41)
	if _, err := m.Add(ctx, Entry{Type: key, Content: "deploy notes"}); !errors.Is(err, ErrSecret) {
		t.Errorf("Add with the key as type: %v, want ErrSecret", err)
	}
	if _, err := m.Edit(ctx, e.ID, EditOptions{Type: &key}); !errors.Is(err, ErrSecret) {
		t.Errorf("Edit to the key as type: %v, want ErrSecret", err)
	}
	after, err := os.ReadFile(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) || strings.Contains(strings.ToUpper(string(after)), key) {
		t.Errorf("a refused write changed the memory:\n%s", after)
	}
}

// TestWorkerMayNotAllowSecret: a worker's Add under AllowSecrets, or with a
// Secret-Allowed bullet of its own, is refused whether or not the content
// holds a secret; its secret refusal offers no override; an owner's works.
func TestWorkerMayNotAllowSecret(t *testing.T) {
	ctx := context.Background()
	o, dir := openRepo(t, Options{})
	add(t, o, "the deploy user")
	w, err := Open(dir, Options{Role: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	key := awsKeyFor(42)
	for _, in := range []struct {
		ctx context.Context
		e   Entry
	}{
		{AllowSecrets(ctx), Entry{Content: "deploy key " + key}},
		{AllowSecrets(ctx), Entry{Content: "no secret here"}},
		{ctx, Entry{Content: "deploy key " + key, Fields: map[string]string{"Secret-Allowed": "aws-access-token"}}},
	} {
		_, err := w.Add(in.ctx, in.e)
		if kind, _ := Classify(err); kind != KindRefused || errors.Is(err, ErrSecret) || !strings.Contains(fmt.Sprint(err), "worker") {
			t.Errorf("worker Add %q: %v (kind %d), want the role's refusal", in.e.Content, err, kind)
		}
	}
	_, err = w.Add(ctx, Entry{Content: "deploy key " + key})
	kind, hint := Classify(err)
	if !errors.Is(err, ErrSecret) || kind != KindRefused {
		t.Fatalf("worker Add of a secret: %v", err)
	}
	if strings.Contains(hint, "allow") || strings.Contains(hint, "Secret-Allowed") || hint == "" {
		t.Errorf("a worker's hint offers the override, or none: %q", hint)
	}
	b, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), key) || strings.Contains(string(b), "no secret here") {
		t.Fatalf("a refused worker write reached the memory:\n%s", b)
	}

	if _, hint := Classify(func() error { _, err := o.Add(ctx, Entry{Content: "deploy key " + key}); return err }()); !strings.Contains(hint, "--allow-secret") {
		t.Errorf("an owner's hint does not give the override: %q", hint)
	}
	if _, err := o.Add(AllowSecrets(ctx), Entry{Content: "deploy key " + key}); err != nil {
		t.Errorf("owner Add under AllowSecrets: %v", err)
	}
}
