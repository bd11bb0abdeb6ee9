package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/worktree"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "set up the memory home and keep its files out of git status",
		Description: "Creates .agent/memories.md in the primary worktree (or the memory home of a\n" +
			"bare repository) and adds the memory files to the repository's common\n" +
			"info/exclude, so git status stays clean in every worktree. If\n" +
			".agent/memories.md is already tracked by git, init says so and prints the fix.\n" +
			"With --merge-driver (for teams that do track .agent/memories.md in branches):\n" +
			"sets merge.memsync.driver in the repository's git config and the line\n" +
			"'.agent/memories.md merge=memsync' in <git common dir>/info/attributes (not in a\n" +
			"tracked .gitattributes, so git status stays clean; add the line there yourself\n" +
			"to share it), so git merges the file by entry instead of by line.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "merge-driver", Usage: "set up 'memsync merge-driver' for a .agent/memories.md tracked in branches"},
		},
		Action: runInit,
	}
}

type initResult struct {
	Home     string   `json:"home"`
	File     string   `json:"file"`
	Created  bool     `json:"created"`
	Excluded []string `json:"excluded"`
	Tracked  bool     `json:"tracked"`
	// MergeDriver is set with --merge-driver.
	MergeDriver *mergeDriverJSON `json:"merge_driver,omitempty"`
}

type mergeDriverJSON struct {
	Driver     string `json:"driver"`     // merge.memsync.driver
	Attributes string `json:"attributes"` // the file the attribute line is in
	Line       string `json:"line"`       // the attribute line
}

func runInit(c *cli.Context) error {
	s, err := openSession(c)
	if err != nil {
		return err
	}
	res := initResult{Home: s.store.Home, File: s.store.Path(), Excluded: []string{}}
	if err := os.MkdirAll(s.store.Home, 0o755); err != nil {
		return err
	}
	target, err := s.store.Resolve(s.store.Path())
	if err != nil {
		return err
	}
	if _, err := os.Stat(target); errors.Is(err, os.ErrNotExist) {
		if err := fsutil.WriteFile(target, []byte(memfile.Header+"\n"), 0o644); err != nil {
			return err
		}
		res.Created = true
	}
	if s.repo != nil {
		added, err := s.m.Exclude()
		if err != nil {
			return err
		}
		res.Excluded = append(res.Excluded, added...)
		res.Tracked = tracked(s.repo.Primary)
		if c.Bool("merge-driver") {
			if res.MergeDriver, err = setupMergeDriver(s.repo); err != nil {
				return err
			}
		}
	} else if c.Bool("merge-driver") {
		return usageError{errNeedsRepo}
	}
	if s.json {
		return s.printJSON(res)
	}
	verb := "using"
	if res.Created {
		verb = "created"
	}
	fmt.Fprintf(s.stdout, "%s %s\n", verb, res.File)
	if len(res.Excluded) > 0 {
		fmt.Fprintf(s.stdout, "added %d pattern(s) to %s/info/exclude\n", len(res.Excluded), s.repo.CommonDir)
	}
	if d := res.MergeDriver; d != nil {
		fmt.Fprintf(s.stdout, "merge driver: merge.memsync.driver = %s\n", d.Driver)
		fmt.Fprintf(s.stdout, "attribute %q in %s\n", d.Line, d.Attributes)
		fmt.Fprintf(s.stdout, "to share it with your team, add this line to .gitattributes (each clone runs 'memsync init --merge-driver' for the git config):\n  %s\n", d.Line)
	}
	if res.Tracked && res.MergeDriver == nil && !mergeDriverSet(s.repo) {
		s.warn(".agent/memories.md is tracked by git on this branch; memsync keeps memory history on its own ref instead")
		fmt.Fprintf(s.stderr, "hint: stop tracking it (the file stays on disk): git rm --cached .agent/memories.md && git commit -m 'Stop tracking agent memory'\n")
	}
	return nil
}

// beforeWrite makes sure a write leaves git status clean (memsync.Memory.BeforeWrite).
func (s *session) beforeWrite() error { return s.m.BeforeWrite() }

// attributeLine routes the tracked memory file to memsync's merge driver.
const attributeLine = ".agent/memories.md merge=memsync"

// setupMergeDriver sets merge.memsync.* in the repository's git config and
// the attribute line in the common info/attributes (idempotent).
func setupMergeDriver(r *worktree.Repo) (*mergeDriverJSON, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, withHint(err, "install memsync on PATH and run 'memsync init --merge-driver' again")
	}
	d := &mergeDriverJSON{Driver: shellQuote(bin) + " merge-driver %O %A %B %P",
		Attributes: filepath.Join(r.CommonDir, "info", "attributes"), Line: attributeLine}
	for k, v := range map[string]string{"merge.memsync.name": "memsync: merge memories.md by entry", "merge.memsync.driver": d.Driver} {
		if _, err := gitcmd.Output(r.CommonDir, "--git-dir="+r.CommonDir, "config", k, v); err != nil {
			return nil, err
		}
	}
	old, err := os.ReadFile(d.Attributes)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for l := range strings.Lines(string(old)) {
		if strings.TrimSpace(l) == attributeLine {
			return d, nil
		}
	}
	data := string(old)
	if data != "" && !strings.HasSuffix(data, "\n") {
		data += "\n"
	}
	if err := os.MkdirAll(filepath.Dir(d.Attributes), 0o755); err != nil {
		return nil, err
	}
	return d, fsutil.WriteFile(d.Attributes, []byte(data+attributeLine+"\n"), 0o644)
}

// mergeDriverSet tells whether the attribute line routes the memory file to
// memsync's merge driver (in info/attributes or the primary's .gitattributes).
func mergeDriverSet(r *worktree.Repo) bool {
	files := []string{filepath.Join(r.CommonDir, "info", "attributes")}
	if r.Primary != "" {
		files = append(files, filepath.Join(r.Primary, ".gitattributes"))
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if strings.Contains(string(data), "merge=memsync") {
			return true
		}
	}
	return false
}

// shellQuote quotes a path for the shell git runs a merge driver with.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// tracked tells whether the primary worktree's index tracks the memory file.
// init is no hot path, so asking git is fine here.
func tracked(primary string) bool {
	if primary == "" {
		return false
	}
	_, err := gitcmd.Output(primary, "ls-files", "--error-unmatch", "--", ".agent/memories.md")
	return err == nil
}
