//go:build unix

package gitcmd

import (
	"os/exec"
	"syscall"
	"time"
)

// ownGroup runs cmd in a session, and so a process group, of its own, and
// has its cancel end the whole group: SIGTERM, then SIGKILL killDelay later.
// group_windows.go has the other side.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error {
		group := -cmd.Process.Pid
		time.AfterFunc(killDelay, func() { _ = syscall.Kill(group, syscall.SIGKILL) })
		return syscall.Kill(group, syscall.SIGTERM)
	}
}
