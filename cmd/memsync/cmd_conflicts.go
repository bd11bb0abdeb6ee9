package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func conflictsCommand() command {
	return command{name: "conflicts", usage: "show the recorded conflicts: entries edited differently on two sides",
		args: noArgs("conflicts"), run: runConflicts}
}

func resolveCommand() command {
	return command{name: "resolve", usage: "settle a recorded conflict: keep ours, take theirs, or edit", argsUsage: "ID",
		flags: []cli.Flag{
			&cli.BoolFlag{Name: "ours", Usage: "keep the memory's version"},
			&cli.BoolFlag{Name: "theirs", Usage: "take the other side's version"},
			&cli.BoolFlag{Name: "edit", Usage: "edit both versions into one"},
			allowSecretFlag,
		},
		args: func(c *cli.Context) error {
			if err := oneArg("resolve needs one conflict ID (see memsync conflicts)")(c); err != nil {
				return err
			}
			if len(keeps(c)) != 1 {
				return usageError{fmt.Errorf("resolve needs one of --ours, --theirs, --edit")}
			}
			return nil
		},
		run: runResolve,
	}
}

// keeps are the ways to settle a conflict the command line names.
func keeps(c *cli.Context) []memsync.Keep {
	var how []memsync.Keep
	for _, k := range []memsync.Keep{memsync.KeepOurs, memsync.KeepTheirs, memsync.KeepEdit} {
		if c.Bool(string(k)) {
			how = append(how, k)
		}
	}
	return how
}

func runConflicts(s *session, c *cli.Context) error {
	out, err := s.m.Conflicts(c.Context)
	return s.print(out, err, func() {
		if len(out) == 0 {
			s.printf("no recorded conflicts\n")
			return
		}
		for i, j := range out {
			if i > 0 {
				s.printf("\n")
			}
			if j.Kind == "merged" {
				s.printf("%s %s  %s\n  recorded %s (%s): edited on both sides, the edits merged as text; resolve --ours keeps the merge\n",
					s.paint(bold, "merged"), j.ID, j.Title, j.Time, j.Source)
				s.printf("%s\n%s\n", s.paint(red, "--- ours before the merge"), s.paint(green, "+++ merged (in the memory now)"))
			} else {
				s.printf("%s %s  %s\n  recorded %s (%s)\n", s.paint(bold, "conflict"), j.ID, j.Title, j.Time, j.Source)
				s.printf("%s\n%s\n", s.paint(red, "--- ours (in the memory now)"), s.paint(green, "+++ theirs"))
			}
			for l := range strings.Lines(j.Diff) {
				l = strings.TrimSuffix(l, "\n")
				s.printf("%s\n", s.paint(diffColor(l), l))
			}
		}
		s.printf("\nsettle each with: memsync resolve ID --ours|--theirs|--edit\n")
	})
}

func runResolve(s *session, c *cli.Context) error {
	r := memsync.Resolution{Keep: keeps(c)[0]}
	if r.Keep == memsync.KeepEdit {
		// Refused before the editor opens, not after (Resolve checks again).
		if err := s.m.Allow("resolve"); err != nil {
			return err
		}
		cf, err := s.m.Conflict(c.Context, c.Args().First())
		if err != nil {
			return resolveError(err)
		}
		e, err := editConflict(s, &cf)
		if err != nil {
			return err
		}
		r.Edited = &e
	}
	out, err := s.m.Resolve(c.Context, c.Args().First(), r)
	return s.print(out, resolveError(err), func() {
		s.printf("resolved %s: kept %s\n", out.ID, map[memsync.Keep]string{memsync.KeepOurs: "ours", memsync.KeepTheirs: "theirs", memsync.KeepEdit: "the edited version"}[out.Kept])
		if out.Snapshot != "" {
			s.printf("snapshot %s (the next 'memsync sync' carries it)\n", memsync.ShortHash(out.Snapshot))
		}
	})
}

// resolveError gives resolve's failures their advice.
func resolveError(err error) error {
	var ae *memsync.ArchivedError
	switch {
	case errors.As(err, &ae):
		return withHint(err, "restore it first (memsync restore "+ae.ID+"), then resolve again")
	case errors.Is(err, memsync.ErrNotFound), errors.Is(err, memsync.ErrAmbiguous):
		return withHint(err, "'memsync conflicts' lists the recorded conflicts")
	}
	return err
}

// editConflict opens the editor on both versions and returns the one entry
// left in the saved file (memsync.Conflict.EditText, Edited).
func editConflict(s *session, cf *memsync.Conflict) (memsync.Entry, error) {
	data, err := runEditor(s, "memsync-resolve-*.md", cf.EditText())
	if err != nil {
		return memsync.Entry{}, err
	}
	e, err := cf.Edited(data)
	if err != nil && !errors.Is(err, memsync.ErrEditCancelled) {
		return e, withHint(err, "keep exactly one entry (or none to cancel); nothing was changed")
	}
	return e, err
}

// runEditor opens the person's editor ($VISUAL, else $EDITOR, else vi) on
// a temporary file (named after pattern) holding text, and returns the file
// as the editor left it.
func runEditor(s *session, pattern, text string) ([]byte, error) {
	tmp, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	_, err = tmp.WriteString(text)
	if err := cmp.Or(err, tmp.Close()); err != nil {
		return nil, err
	}
	editor := cmp.Or(os.Getenv("VISUAL"), os.Getenv("EDITOR"), "vi")
	ctx := s.c.Context
	cmd := exec.CommandContext(ctx, editor, tmp.Name())
	if strings.ContainsAny(editor, "|&;<>()$`\\\"' \t\n*?[#~=%") { // words or shell syntax: as git, through the shell
		cmd = exec.CommandContext(ctx, "sh", "-c", editor+` "$1"`, "sh", tmp.Name())
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, forChild(s.stderr), forChild(s.stderr)
	// SIGTERM (the context) ends the editor as it ends git: SIGTERM, then
	// SIGKILL 2 s later.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 2 * time.Second
	editing.Store(true)
	err = cmd.Run()
	editing.Store(false)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, withHint(fmt.Errorf("editor %q: %w", editor, err), "set VISUAL or EDITOR to your editor; nothing was changed")
	}
	return readEdited(tmp.Name())
}

// readEdited reads what the editor left at path: a regular file (a link to
// one is followed) of at most four times an entry's cap, never a pipe or a
// device, which would block or never end.
func readEdited(path string) ([]byte, error) {
	const limit = memsync.MaxEntryBytes * 4
	const hint = "the editor must save the file it was given; nothing was changed"
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, withHint(fmt.Errorf("the editor removed %s", path), hint)
	case err != nil:
		return nil, withHint(err, hint)
	case !fi.Mode().IsRegular():
		return nil, withHint(fmt.Errorf("%s is not a regular file (%v) after the editor", path, fi.Mode()), hint)
	case fi.Size() > limit:
		return nil, withHint(fmt.Errorf("%s is %d bytes, larger than the %d an edit may hold", path, fi.Size(), limit), hint)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, withHint(err, hint)
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
