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
	"runtime/debug"
)

func main() {
	// memsync runs briefly over at most a few 10 MB files: trade a little
	// memory for fewer garbage collections.
	debug.SetGCPercent(400)
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
