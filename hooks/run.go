package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Bounds of a hook run.
const (
	DefaultTimeout     = 10 * time.Second // the whole handler
	DefaultLockTimeout = 3 * time.Second  // waiting for the memory lock
	// Grace is how long Run waits, once the time is up, for the handler to
	// stop: long enough for a ref update under way (a few small writes).
	Grace = time.Second
)

// Options of a hook run.
type Options struct {
	Stderr  io.Writer     // for the one warning line (os.Stderr when nil)
	Timeout time.Duration // DefaultTimeout when 0
}

// Handler does a hook's work and returns the warning to print ("" for
// none). It stops soon after ctx is done.
type Handler func(ctx context.Context) string

// Run runs handle, the work of git hook name, and never fails: trouble is
// one warning line on Stderr, and the git command stands. The work is
// bounded by o.Timeout (and by ctx): when the time is up, the context handle
// got is cancelled and Run waits for handle to return, at most Grace, so a
// hook timeout returns only after its work stopped (or, for a handler that
// ignores its context past Grace, abandoned it: every write memsync makes
// is atomic, temp file and rename, and a ref update is let finish before
// the time is up). Nothing outlives a Run that honours its context, and
// nothing is remembered from one Run to the next.
func Run(ctx context.Context, name string, handle Handler, o Options) {
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	done := make(chan string, 1)
	go func() { done <- handle(ctx) }()
	stopped := false
	select {
	case msg := <-done:
		if ctx.Err() == nil { // else it ran out of time too
			if msg != "" {
				fmt.Fprintf(o.Stderr, "memsync: warning: %s hook: %s\n", name, msg)
			}
			return
		}
		stopped = true
	case <-ctx.Done():
	}
	cancel()
	if !stopped {
		grace := time.NewTimer(Grace)
		defer grace.Stop()
		select {
		case <-done:
		case <-grace.C:
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		fmt.Fprintf(o.Stderr, "memsync: warning: %s hook: gave up after %s; the memory is unchanged by it\n", name, o.Timeout)
	} else {
		fmt.Fprintf(o.Stderr, "memsync: warning: %s hook: stopped: %v\n", name, ctx.Err())
	}
}
