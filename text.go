package memsync

import (
	"github.com/memsync/memsync/internal/config"
	"github.com/memsync/memsync/internal/termsafe"
	"github.com/memsync/memsync/internal/words"
	"github.com/memsync/memsync/memfile"
)

// The text helpers below are how memsync's own messages spell things; a
// front door that prints results (the memsync command) uses them to read
// the same.

// Printable is s with what would drive a terminal (escape sequences, other
// control characters, bidirectional overrides) written as visible escapes;
// tabs and line ends stay. Text from a memory file, a snapshot or a remote
// goes through it before it is printed.
func Printable(s string) string { return termsafe.Text(s) }

// ShortHash is a commit hash as messages show it: its first 12 characters.
func ShortHash(hash string) string { return words.Short(hash) }

// Plural picks the singular or plural ending for n: Plural(n, "y", "ies").
func Plural(n int, one, many string) string { return words.Plural(n, one, many) }

// Size is a size in bytes as messages show it: "1.5 MB", "12.0 KB", "800 B".
func Size(n int64) string { return words.Bytes(n) }

// SplitList splits a comma-separated list as the configuration's lists
// are read: "a, b,,c" is [a b c].
func SplitList(s string) []string { return config.Split(s) }

// NormalizeType is the stored form of an entry type as a user types it:
// lower case, single spaces ("Architecture-Decision" is "architecture decision").
func NormalizeType(t string) string { return memfile.NormalizeType(t) }
