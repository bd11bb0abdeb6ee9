package main

import (
	"os"
	"os/exec"

	"github.com/urfave/cli/v2"
)

func maintainCommand() command {
	return command{name: "maintain", usage: "pack memsync's history in the object store now",
		args:  noArgs("maintain"),
		opens: repoOnly,
		run: func(s *session, c *cli.Context) error {
			res, err := s.m.Maintain(c.Context)
			return s.print(res, err, func() {
				if res.Rolled == 0 {
					s.printf("nothing to pack\n")
					return
				}
				s.printf("rolled %d packs into one\n", res.Rolled)
			})
		},
	}
}

// detachMaintain starts `memsync -C gitDir maintain` in a session of its
// own, its streams on /dev/null, and does not wait for it: the packing a
// snapshot or sync leaves due runs after the command has returned, as git's
// gc --auto runs (memsync.Options.Detach).
func detachMaintain(gitDir string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, "-C", gitDir, "maintain")
	ownSession(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reaped where the command lives on (mcp, ui)
	return nil
}
