//go:build !unix

package worktree

import "os"

// readSmallFile reads a whole (small) file; see readfile_unix.go.
func readSmallFile(path string) ([]byte, error) { return os.ReadFile(path) }
