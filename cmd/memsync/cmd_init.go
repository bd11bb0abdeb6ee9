package main

import (
	"errors"
	"fmt"
	"os"

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
			".agent/memories.md is already tracked by git, init says so and prints the fix.",
		Action: runInit,
	}
}

type initResult struct {
	Home     string   `json:"home"`
	File     string   `json:"file"`
	Created  bool     `json:"created"`
	Excluded []string `json:"excluded"`
	Tracked  bool     `json:"tracked"`
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
		added, err := ensureExcluded(s)
		if err != nil {
			return err
		}
		res.Excluded = append(res.Excluded, added...)
		res.Tracked = tracked(s.repo.Primary)
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
	if res.Tracked {
		s.warn(".agent/memories.md is tracked by git on this branch; memsync keeps memory history on its own ref instead")
		fmt.Fprintf(s.stderr, "hint: stop tracking it (the file stays on disk): git rm --cached .agent/memories.md && git commit -m 'Stop tracking agent memory'\n")
	}
	return nil
}

// beforeWrite makes sure a write leaves git status clean: the memory files
// are in the common info/exclude (a read of one small file when they are).
func (s *session) beforeWrite() error {
	if s.repo == nil {
		return nil
	}
	_, err := ensureExcluded(s)
	return err
}

// ensureExcluded adds the memory files to the common info/exclude.
func ensureExcluded(s *session) ([]string, error) {
	added, err := worktree.EnsureExclude(s.repo, excludePatterns)
	if err != nil {
		return nil, fmt.Errorf("update info/exclude: %w", err)
	}
	return added, nil
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
