// Command memsync gives AI coding agents one shared, durable memory per git
// repository: .agent/memories.md in the primary worktree, shared by every
// worktree, written under one file lock.
//
// This package is only the command line: it parses flags, calls the
// packages that do the work, and prints. See docs/commands.md for the commands, the
// JSON shapes and the exit codes.
package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

func main() {
	if unsupported != "" {
		_, _ = os.Stderr.WriteString(unsupported + "\n")
		os.Exit(exitError)
	}
	ctx, interrupted := signalContext()
	code := runContext(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	if sig := interrupted(); sig != 0 {
		code = 128 + int(sig) // the shell's code for a command a signal ended: 130, 143
	}
	os.Exit(code)
}

// editing is set while an editor runs in the terminal (runEditor): a SIGINT
// then is the terminal's ^C, which belongs to the editor (as git ignores it
// while its editor runs), not to memsync.
var editing atomic.Bool

// signalContext is a context cancelled by the first SIGINT or SIGTERM: the
// command under way stops, its git processes end (package gitcmd) and its
// locks are released as it returns. A second signal ends memsync at once.
// interrupted tells the signal that came, 0 for none.
func signalContext() (ctx context.Context, interrupted func() syscall.Signal) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	got := make(chan syscall.Signal, 1)
	go func() {
		sig := (<-ch).(syscall.Signal)
		for sig == syscall.SIGINT && editing.Load() {
			sig = (<-ch).(syscall.Signal)
		}
		got <- sig
		signal.Reset(syscall.SIGINT, syscall.SIGTERM)
		cancel()
	}()
	return ctx, func() syscall.Signal {
		select {
		case sig := <-got:
			return sig
		default:
			return 0
		}
	}
}
