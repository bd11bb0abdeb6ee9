package memsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/fakesecret"
)

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
	key := fakesecret.AWSKey(41)
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
	key := fakesecret.AWSKey(42)
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
