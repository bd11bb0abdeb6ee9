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
	// memsync is a short-lived process whose heap is a few times the memory
	// file at most (≤ 10 MB by the cap): collecting garbage less often saves
	// a third of a rewrite's time (gc over 10 MB) for a few MB of memory.
	// GOGC in the environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
