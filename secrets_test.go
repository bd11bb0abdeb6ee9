package memsync

import (
	"context"
	"errors"
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
