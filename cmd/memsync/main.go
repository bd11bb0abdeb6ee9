// Command memsync gives AI coding agents one shared, durable memory per git
// repository: .agent/memories.md in the primary worktree, shared by every
// worktree, written under one file lock.
//
// This package is only the command line: it parses flags, calls the
// packages that do the work, and prints. See README.md for the commands, the
// JSON shapes and the exit codes.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
