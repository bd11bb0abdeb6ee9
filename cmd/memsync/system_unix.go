//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// The calls of memsync's command line that differ between systems, on
// Unix; system_windows.go has the other side.

// unsupported is why memsync does not run on this system; "" where it does.
const unsupported = ""

// ownSession has cmd start in a session, and so a process group, of its
// own: a terminal's hangup or ^C does not reach it.
func ownSession(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// leaveSession moves this process into a session of its own, as ownSession
// does for a child (it fails, harmlessly, for a group leader).
func leaveSession() { _, _ = syscall.Setsid() }
