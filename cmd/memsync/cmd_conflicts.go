package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/history"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/merge"
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

type conflictJSON struct {
	ID     string         `json:"id"`
	Title  string         `json:"title"`
	Source string         `json:"source"`
	Time   string         `json:"time"`
	Base   *memsync.Entry `json:"base"`
	Ours   memsync.Entry  `json:"ours"`
	Theirs memsync.Entry  `json:"theirs"`
	Diff   string         `json:"diff"`
}

// conflictLog is the conflict log of the session's memory.
func (s *session) conflictLog() string {
	if s.repo == nil {
		return filepath.Join(s.store.Home, "state", "conflicts.json")
	}
	return history.ConflictLog(s.repo)
}

func runConflicts(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("conflicts takes no arguments")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	rs, err := merge.LoadLog(s.conflictLog())
	if err != nil {
		return err
	}
	out := []conflictJSON{}
	for _, r := range rs {
		base, ours, theirs := r.Versions()
		j := conflictJSON{ID: r.ID, Title: r.Title, Source: r.Source, Time: r.Time,
			Ours: memsync.EntryOf(&ours, 0), Theirs: memsync.EntryOf(&theirs, 0), Diff: history.TextDiff(r.Ours, r.Theirs)}
		if base != nil {
			b := memsync.EntryOf(base, 0)
			j.Base = &b
		}
		out = append(out, j)
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

type resolveJSON struct {
	ID       string        `json:"id"`
	Kept     string        `json:"kept"` // ours, theirs or edit
	Entry    memsync.Entry `json:"entry"`
	Snapshot string        `json:"snapshot"` // "" when the memory was unchanged since the last snapshot
}

func runResolve(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError{fmt.Errorf("resolve needs one conflict ID (see memsync conflicts)")}
	}
	var how []string
	for _, f := range []string{"ours", "theirs", "edit"} {
		if c.Bool(f) {
			how = append(how, f)
		}
	}
	if len(how) != 1 {
		return usageError{fmt.Errorf("resolve needs one of --ours, --theirs, --edit")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	if err := s.allow(policy.OpResolve); err != nil {
		return err
	}
	if err := s.beforeWrite(); err != nil {
		return err
	}
	logPath := s.conflictLog()
	rs, err := merge.LoadLog(logPath)
	if err != nil {
		return err
	}
	i, err := merge.Find(rs, c.Args().First())
	if err != nil {
		return withHint(err, "'memsync conflicts' lists the recorded conflicts")
	}
	rec := rs[i]
	_, ours, theirs := rec.Versions()
	keep := ours
	switch how[0] {
	case "theirs":
		keep = theirs
	case "edit":
		if keep, err = editConflict(s, rec); err != nil {
			return err
		}
	}
	if how[0] != "ours" {
		if err := s.store.Validate(&keep); err != nil {
			return err
		}
		if err := setEntry(s.store, keep); err != nil {
			return err
		}
	}
	err = s.store.WithLock(func() error {
		rs, err := merge.LoadLog(logPath)
		if err != nil {
			return err
		}
		return merge.SaveLog(logPath, merge.Forget(rs, rec.ID))
	})
	if err != nil {
		return err
	}
	out := resolveJSON{ID: rec.ID, Kept: how[0], Entry: memsync.EntryOf(&keep, 0)}
	if s.repo != nil {
		h := history.Open(s.repo, s.store)
		res, err := h.Take("memsync resolve "+rec.ID+" ("+how[0]+")", h.CurrentProvenance(""))
		if err != nil {
			return err
		}
		if res.Created {
			out.Snapshot = res.Snapshot.Commit
		}
	}
	if s.json {
		return s.printJSON(out)
	}
	fmt.Fprintf(s.stdout, "resolved %s: kept %s\n", rec.ID, map[string]string{"ours": "ours", "theirs": "theirs", "edit": "the edited version"}[how[0]])
	if out.Snapshot != "" {
		fmt.Fprintf(s.stdout, "snapshot %s (the next 'memsync sync' carries it)\n", shortHash(out.Snapshot))
	}
	return nil
}

// setEntry replaces the active entry with e's ID by e, or appends e when the
// memory no longer has it. An archived entry is left to restore first.
func setEntry(st *memfile.Store, e memfile.Entry) error {
	arch, err := st.LoadArchive()
	if err != nil {
		return err
	}
	return st.Update(func(f *memfile.File) error {
		for i := range f.Entries {
			if f.Entries[i].ID == e.ID {
				f.Entries[i] = e
				return nil
			}
		}
		for _, a := range arch.Entries {
			if a.ID == e.ID {
				return withHint(fmt.Errorf("entry %s is in the archive now", e.ID), "restore it first (memsync restore "+e.ID+"), then resolve again")
			}
		}
		f.Entries = append(f.Entries, e)
		return nil
	})
}

// errEditCancelled: the edited file held no entry.
var errEditCancelled = errors.New("no entry left in the edited file; nothing changed")

// editConflict opens the editor on both versions and returns the one entry
// left in the saved file, with the conflict's ID.
func editConflict(s *session, rec merge.Record) (memfile.Entry, error) {
	tmp, err := os.CreateTemp("", "memsync-resolve-*.md")
	if err != nil {
		return memfile.Entry{}, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	text := "# memsync resolve " + rec.ID + ": keep one version of this entry, or combine the\n" +
		"# two into one, then save and quit. Text above the first '## ' line is ignored;\n" +
		"# leave no entry to cancel. First ours (in the memory now), then theirs.\n\n" +
		rec.Ours + "\n" + rec.Theirs
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
	e.ID = rec.ID
	return e, nil
}
