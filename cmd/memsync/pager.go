package main

import (
	"bufio"
	"cmp"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/urfave/cli/v2"
)

// defaultPager pages long output when PAGER is unset: -F quits when it fits
// on one screen, -R shows memsync's colours, -X leaves it on the screen.
const defaultPager = "less -FRX"

// noPagerFlag is on the commands whose output may be long (list, log, diff,
// show): the output is printed as it is, even on a terminal.
var noPagerFlag = &cli.BoolFlag{Name: "no-pager", Usage: "print the output as it is, not through $PAGER (" + defaultPager + ") on a terminal"}

// alwaysPage is the pages test of a command whose output is paged on a terminal.
func alwaysPage(*cli.Context) bool { return true }

// pagerCommand is the pager to run for the session's output: $PAGER
// ("less -FRX" when unset), or "" for none: --no-pager, stdout not a
// terminal, PAGER empty or cat, or the default pager not installed.
func (s *session) pagerCommand(c *cli.Context) string {
	if c.Bool(noPagerFlag.Name) || !isTerminal(s.stdout) {
		return ""
	}
	pager, set := os.LookupEnv("PAGER")
	if !set {
		if _, err := exec.LookPath("less"); err != nil {
			return ""
		}
		pager = defaultPager
	}
	if pager == "cat" {
		return ""
	}
	return pager
}

// startPager runs the pager (pagerCommand) with the terminal as its output
// and makes the session write to it; the returned finish closes its input,
// waits for it to quit and returns the command's error, less a broken pipe
// (the pager quit before the end). With no pager, finish returns the
// error as it is.
func (s *session) startPager(c *cli.Context) (finish func(error) error) {
	pager := s.pagerCommand(c)
	if pager == "" {
		return func(err error) error { return err }
	}
	cmd := exec.Command("sh", "-c", pager)
	cmd.Stdout, cmd.Stderr = forChild(s.stdout), forChild(s.stderr)
	in, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		s.warn("cannot start the pager " + pager + ": " + err.Error() + "; printing as it is")
		return func(err error) error { return err }
	}
	stdout := s.stdout
	buf := bufio.NewWriterSize(in, outputMax)
	s.stdout = buf
	return func(err error) error {
		err = cmp.Or(err, buf.Flush())
		_ = in.Close()
		_ = cmd.Wait() // its exit status is the user's business (q, an error it printed)
		s.stdout = stdout
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe) {
			return nil
		}
		return err
	}
}
