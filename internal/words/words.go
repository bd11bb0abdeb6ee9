// Package words holds the small text helpers memsync's messages share.
package words

import "fmt"

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

// Bytes is a size as messages show it: "1.5 MB", "12.0 KB", "800 B".
func Bytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// If is yes when ok, else no: the word a message picks by a condition.
func If(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}
