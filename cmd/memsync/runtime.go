package main

import (
	"os"
	"runtime/debug"
)

// oneShotMemoryLimit is the heap a one-shot command grows to before its
// first garbage collection (tuneOneShot).
const oneShotMemoryLimit = 32 << 20

// tuneOneShot tunes the Go runtime for a command that does its work once and
// exits (every command but mcp and ui): no garbage collection until the
// memory reaches oneShotMemoryLimit, then as usual at that limit, so that a
// short command spends no time collecting what exit frees at once. A GOGC or
// GOMEMLIMIT in the environment wins: then the runtime does as it says.
// docs/performance.md gives the figures.
func tuneOneShot() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(oneShotMemoryLimit)
	debug.SetGCPercent(-1)
}
