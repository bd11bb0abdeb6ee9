package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/policy"
)

func conflictsCommand() *cli.Command {
	return &cli.Command{
		Name:  "conflicts",
		Usage: "show the recorded conflicts: entries edited differently on two sides",
		Description: "Every conflict a sync, a merge of conflict markers ('memsync doctor --fix', any\n" +
			"rewrite) or the merge driver recorded, as a diff of the entry: '-' lines are\n" +
			"ours (what the memory holds now), '+' lines theirs. Colored on a terminal\n" +
			"(NO_COLOR turns it off). Settle each with 'memsync resolve ID --ours|--theirs|--edit'.\n" +
			"The record is kept in <git common dir>/memsync/conflicts.json.",
		Action: runConflicts,
	}
}

func resolveCommand() *cli.Command {
	return &cli.Command{
		Name:      "resolve",
		Usage:     "settle a recorded conflict: keep ours, take theirs, or edit",
		ArgsUsage: "ID",
		Description: "--ours keeps the entry as the memory holds it; --theirs replaces it with the\n" +
			"other side's version; --edit opens $VISUAL (else $EDITOR, else vi) on a file\n" +
			"holding both versions and takes the one entry left when you save. The conflict\n" +
			"leaves the record and the result is snapshotted, so the next 'memsync sync'\n" +
			"carries it to the other clones. ID may be a unique prefix. Owner/admin.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "ours", Usage: "keep the memory's version"},
			&cli.BoolFlag{Name: "theirs", Usage: "take the other side's version"},
			&cli.BoolFlag{Name: "edit", Usage: "edit both versions into one"},
		},
		Action: runResolve,
	}
}

func runConflicts(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("conflicts takes no arguments")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	out, err := s.m.Conflicts(c.Context)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(out)
	}
	if len(out) == 0 {
		fmt.Fprintln(s.stdout, "no recorded conflicts")
		return nil
	}
	color := colorOK(s.stdout)
	for i, j := range out {
		if i > 0 {
			fmt.Fprintln(s.stdout)
		}
		fmt.Fprintf(s.stdout, "%s %s  %s\n", paint(color, "1", "conflict"), j.ID, j.Title)
		fmt.Fprintf(s.stdout, "  recorded %s (%s)\n", j.Time, j.Source)
		fmt.Fprintln(s.stdout, paint(color, "31", "--- ours (in the memory now)"))
		fmt.Fprintln(s.stdout, paint(color, "32", "+++ theirs"))
		for l := range strings.Lines(j.Diff) {
			l = strings.TrimSuffix(l, "\n")
			switch {
			case strings.HasPrefix(l, "@@"):
				l = paint(color, "36", l)
			case strings.HasPrefix(l, "-"):
				l = paint(color, "31", l)
			case strings.HasPrefix(l, "+"):
				l = paint(color, "32", l)
			}
			fmt.Fprintln(s.stdout, l)
		}
	}
	fmt.Fprintf(s.stdout, "\nsettle each with: memsync resolve ID --ours|--theirs|--edit\n")
	return nil
}

// colorOK tells whether w is a terminal and NO_COLOR is unset.
func colorOK(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func paint(on bool, code, s string) string {
	if !on {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func runResolve(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError{fmt.Errorf("resolve needs one conflict ID (see memsync conflicts)")}
	}
	var how []memsync.Keep
	for _, k := range []memsync.Keep{memsync.KeepOurs, memsync.KeepTheirs, memsync.KeepEdit} {
		if c.Bool(string(k)) {
			how = append(how, k)
		}
	}
	if len(how) != 1 {
		return usageError{fmt.Errorf("resolve needs one of --ours, --theirs, --edit")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	r := memsync.Resolution{Keep: how[0]}
	if r.Keep == memsync.KeepEdit {
		// Refused before the editor opens, not after (Resolve checks again).
		if err := s.m.Allow(policy.OpResolve); err != nil {
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
	if err != nil {
		return resolveError(err)
	}
	if s.json {
		return s.printJSON(out)
	}
	fmt.Fprintf(s.stdout, "resolved %s: kept %s\n", out.ID, map[memsync.Keep]string{memsync.KeepOurs: "ours", memsync.KeepTheirs: "theirs", memsync.KeepEdit: "the edited version"}[out.Kept])
	if out.Snapshot != "" {
		fmt.Fprintf(s.stdout, "snapshot %s (the next 'memsync sync' carries it)\n", shortHash(out.Snapshot))
	}
	return nil
}

// resolveError gives resolve's failures their advice.
func resolveError(err error) error {
	var ae *memsync.ArchivedError
	switch {
	case errors.As(err, &ae):
		return withHint(err, "restore it first (memsync restore "+ae.ID+"), then resolve again")
	case errors.Is(err, memfile.ErrNotFound), errors.Is(err, memfile.ErrAmbiguous):
		return withHint(err, "'memsync conflicts' lists the recorded conflicts")
	}
	return err
}

// errEditCancelled: the edited file held no entry.
var errEditCancelled = errors.New("no entry left in the edited file; nothing changed")

// editConflict opens the editor on both versions and returns the one entry
// left in the saved file, with the conflict's ID.
func editConflict(s *session, cf *memsync.Conflict) (memfile.Entry, error) {
	tmp, err := os.CreateTemp("", "memsync-resolve-*.md")
	if err != nil {
		return memfile.Entry{}, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	ours, theirs := cf.Markdown()
	text := "# memsync resolve " + cf.ID + ": keep one version of this entry, or combine the\n" +
		"# two into one, then save and quit. Text above the first '## ' line is ignored;\n" +
		"# leave no entry to cancel. First ours (in the memory now), then theirs.\n\n" +
		ours + "\n" + theirs
	if _, err := tmp.WriteString(text); err != nil {
		_ = tmp.Close()
		return memfile.Entry{}, err
	}
	if err := tmp.Close(); err != nil {
		return memfile.Entry{}, err
	}
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	cmd := exec.Command("sh", "-c", editor+` "$1"`, "sh", tmp.Name())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, s.stderr, s.stderr
	if err := cmd.Run(); err != nil {
		return memfile.Entry{}, withHint(fmt.Errorf("editor %q: %w", editor, err), "set VISUAL or EDITOR to your editor; nothing was changed")
	}
	data, err := os.ReadFile(tmp.Name())
	if err != nil {
		return memfile.Entry{}, err
	}
	f := memfile.Parse(data)
	switch len(f.Entries) {
	case 0:
		return memfile.Entry{}, errEditCancelled
	case 1:
	default:
		return memfile.Entry{}, withHint(fmt.Errorf("the edited file holds %d entries", len(f.Entries)), "keep exactly one entry (or none to cancel); nothing was changed")
	}
	e := f.Entries[0]
	e.ID = cf.ID
	return e, nil
}
