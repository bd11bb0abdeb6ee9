package main

import (
	"os"
	"runtime/debug"
)

// oneShotMemoryLimit is the memory a one-shot command grows to before its
// first garbage collection (tuneOneShot): search, inject and list of a
// memory of 30k entries (12 MB) allocate about that much in all.
const oneShotMemoryLimit = 48 << 20

// oneShotFileFactor times the memory file is the limit for a larger memory
// (fitOneShot).
const oneShotFileFactor = 6

// oneShotTuned tells whether tuneOneShot set the limit (and fitOneShot may
// raise it).
var oneShotTuned bool

// tuneOneShot tunes the Go runtime for a command that does its work once and
// exits (every command but mcp and ui): no garbage collection until the
// memory reaches oneShotMemoryLimit, then collections at that limit, so
// that a short command spends no time collecting what its exit frees at
// once. A GOGC or GOMEMLIMIT in the environment wins: then the runtime does
// as it says. docs/performance.md gives the figures.
func tuneOneShot() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(oneShotMemoryLimit)
	debug.SetGCPercent(-1)
	oneShotTuned = true
}

// fitOneShot raises the limit to six times the size of the memory file at
// path where that is more: the parsed memory takes about three times its
// file, an add's near-duplicate check about as much again, and a limit
// below what a command keeps would collect over and over (an add to 12 MB
// took half again as long at four times).
func fitOneShot(path string) {
	if !oneShotTuned {
		return
	}
	if fi, err := os.Stat(path); err == nil && oneShotFileFactor*fi.Size() > oneShotMemoryLimit {
		debug.SetMemoryLimit(oneShotFileFactor * fi.Size())
	}
}
