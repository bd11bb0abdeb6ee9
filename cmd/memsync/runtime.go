package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
)

// oneShotMemoryLimit is the memory a one-shot command grows to before its
// first garbage collection (tuneOneShot): search, inject and list of a
// memory of 30k entries (12 MB) allocate about that much in all.
const oneShotMemoryLimit = 48 << 20

// oneShotFileFactor times the memory file is the limit for a larger memory
// (fitOneShot).
const oneShotFileFactor = 6

// oneShotTuned tells whether tuneOneShot set the limit and no collection
// has run since (then fitOneShot may raise it).
var oneShotTuned atomic.Bool

// tuneOneShot tunes the Go runtime for a command that does its work once and
// exits (every command but mcp and ui): no garbage collection until the
// memory reaches oneShotMemoryLimit, so that a short command spends no time
// collecting what its exit frees at once. The first collection hands the
// runtime back its defaults (GOGC=100, no limit): a command that keeps more
// than the limit (a sync of a large memory holds three versions of it)
// would otherwise collect over and over at the limit. A GOGC or GOMEMLIMIT
// in the environment wins: then the runtime does as it says.
// docs/performance.md gives the figures.
func tuneOneShot() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(oneShotMemoryLimit)
	debug.SetGCPercent(-1)
	oneShotTuned.Store(true)
	// A finalizer runs once a collection has found its object unreachable:
	// the first collection, as this one is dropped at once.
	sentinel := &struct{ _ [64]byte }{}
	runtime.SetFinalizer(sentinel, func(*struct{ _ [64]byte }) {
		oneShotTuned.Store(false)
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
}

// fitOneShot raises the limit to six times the size of the memory file at
// path where that is more, while no collection has run: the parsed memory
// takes about three times its file, an add's near-duplicate check about as
// much again.
func fitOneShot(path string) {
	if !oneShotTuned.Load() {
		return
	}
	if fi, err := os.Stat(path); err == nil && oneShotFileFactor*fi.Size() > oneShotMemoryLimit {
		debug.SetMemoryLimit(oneShotFileFactor * fi.Size())
	}
}
