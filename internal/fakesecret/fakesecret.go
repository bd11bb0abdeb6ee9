// Package fakesecret makes up keys that the secret rules find, for tests:
// no key-shaped literal needs to be in the source.
package fakesecret

import "math/rand/v2"

// Key is prefix, then n characters of alphabet from a generator seeded
// with seed.
func Key(seed uint64, prefix, alphabet string, n int) string {
	r := rand.New(rand.NewPCG(seed, 7))
	b := []byte(prefix)
	for range n {
		b = append(b, alphabet[r.IntN(len(alphabet))])
	}
	return string(b)
}

// AWSKey is a made-up AWS access key ID that gitleaks' aws-access-token
// rule finds.
func AWSKey(seed uint64) string { return Key(seed, "AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16) }
