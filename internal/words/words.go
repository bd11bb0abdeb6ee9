// Package words holds the small text helpers memsync's messages share.
package words

// Plural picks the singular or plural ending for n: Plural(n, "y", "ies").
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Short is a commit hash as messages show it: its first 12 characters.
func Short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
