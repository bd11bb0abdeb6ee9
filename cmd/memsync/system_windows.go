package main

import "os/exec"

// Native Windows is not supported yet: memsync builds there and says so
// (main), nothing more. system_unix.go has the real calls.

const unsupported = "memsync does not run on native Windows yet: it needs Unix file locks, permissions and process groups.\n" +
	"Run it in WSL (Windows Subsystem for Linux), where it works as on Linux: https://learn.microsoft.com/windows/wsl/install"

func ownSession(*exec.Cmd) {}

func leaveSession() {}
