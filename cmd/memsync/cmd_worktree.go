package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync/worktree"
)

func worktreeCommand() *cli.Command {
	return &cli.Command{
		Name:  "worktree",
		Usage: "create, link, list, repair and remove worktrees that share one memory",
		Description: "Every worktree of a repository shares the primary worktree's .agent/memories.md\n" +
			"(or, in a bare repository, the memory home inside the git dir) through a relative\n" +
			"symlink. These commands make and check those links; git status stays clean.",
		Subcommands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "run git worktree add, then link the new worktree's memory",
				ArgsUsage: "PATH [COMMIT-ISH]",
				Description: "Runs your git ('git worktree add', with its hooks and filters); its output\n" +
					"and, on failure, its exit code are memsync's. Then links PATH/.agent/memories.md.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "b", Usage: "create the new branch `BRANCH`"},
					&cli.StringFlag{Name: "B", Usage: "create or reset the branch `BRANCH`"},
					&cli.BoolFlag{Name: "detach", Usage: "check out a detached HEAD"},
					&cli.BoolFlag{Name: "force", Usage: "passed to git worktree add"},
					&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "passed to git worktree add"},
				},
				Action: runWorktreeAdd,
			},
			{
				Name:      "link",
				Usage:     "link a worktree's .agent/memories.md to the shared memory",
				ArgsUsage: "[PATH]",
				Description: "Makes PATH/.agent/memories.md (default: the current worktree) a relative symlink\n" +
					"to the memory, creating .agent/ if needed and leaving its other files alone.\n" +
					"Idempotent. A dangling or wrong link is re-pointed; an identical copy is\n" +
					"replaced; a diverged copy is first folded into the memory by entry ID (and kept\n" +
					"as memories.md.bak-<time> if it holds anything the memory lacks). Where symlinks are impossible (core.symlinks=false)\n" +
					"the memory is copied instead. A file tracked by git is left alone.",
				Action: runWorktreeLink,
			},
			{
				Name:  "list",
				Usage: "list the worktrees and the state of their memory",
				Description: "States: primary, linked, missing, broken (dangling link), wrong-target,\n" +
					"copy-identical, copy-diverged, copy (where core.symlinks=false), unsafe (resolves\n" +
					"outside the memory home), prunable.",
				Action: runWorktreeList,
			},
			{
				Name:  "doctor",
				Usage: "report worktrees whose memory is not shared, and repair them with --fix",
				Description: "Reports every worktree whose memory is missing, a broken, wrong or unsafe link,\n" +
					"a copy, tracked by git, or prunable. With --fix, repairs what it can: a diverged\n" +
					"copy is shown as a diff, merged into the memory by entry ID (nothing is lost or\n" +
					"duplicated), kept as a backup, and replaced by the link; an unsafe link is\n" +
					"replaced without touching the file it pointed to. Exits 1 while problems remain.",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "fix", Usage: "repair what can be repaired"}},
				Action: runWorktreeDoctor,
			},
			{
				Name:      "remove",
				Usage:     "fold a worktree's own memory entries into the shared memory, then git worktree remove",
				ArgsUsage: "PATH",
				Description: "Nothing a loop learned is lost with its worktree: entries only in the worktree's\n" +
					"copy of memories.md are merged into the memory first (the copy is kept in the\n" +
					"memory home as memories.md.bak-<time>-<name>). Then runs 'git worktree remove'.",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "passed to git worktree remove"}},
				Action: runWorktreeRemove,
			},
		},
	}
}

// worktreeJSON is the JSON shape of one worktree in `worktree list`.
type worktreeJSON struct {
	Path     string `json:"path"`
	Branch   string `json:"branch"`
	Head     string `json:"head"`
	Locked   bool   `json:"locked"`
	Prunable bool   `json:"prunable"`
	State    string `json:"state"`
	File     string `json:"file"`
	Link     string `json:"link,omitempty"`
	Target   string `json:"target,omitempty"`
	Tracked  bool   `json:"tracked"`
	Detail   string `json:"detail"`
	Fix      string `json:"fix,omitempty"`
	Fixed    *bool  `json:"fixed,omitempty"`
	Diff     string `json:"diff,omitempty"`
	Result   string `json:"result,omitempty"`
	Fixable  *bool  `json:"fixable,omitempty"`
	Backup   string `json:"backup,omitempty"`
	Added    int    `json:"added,omitempty"`
}

func toWorktreeJSON(w worktree.Worktree) worktreeJSON {
	st := w.Status
	return worktreeJSON{Path: w.Path, Branch: w.Branch, Head: w.Head, Locked: w.Locked, Prunable: w.Prunable,
		State: string(st.State), File: st.Path, Link: st.Link, Target: st.Target, Tracked: st.Tracked, Detail: st.Detail}
}

// linkJSON is the JSON shape of `worktree add` and `worktree link`.
type linkJSON struct {
	Path    string `json:"path"`
	State   string `json:"state"`
	Was     string `json:"was"`
	Changed bool   `json:"changed"`
	Added   int    `json:"added"`
	Backup  string `json:"backup,omitempty"`
	Message string `json:"message"`
}

func (s *session) printLink(path string, res worktree.LinkResult) error {
	if s.json {
		return s.printJSON(linkJSON{Path: path, State: string(res.State), Was: string(res.Was), Changed: res.Changed,
			Added: res.Added, Backup: res.Backup, Message: res.Message})
	}
	fmt.Fprintln(s.stdout, res.Message)
	return nil
}

// trackedHint turns ErrTracked into advice.
func trackedHint(err error) error {
	if errors.Is(err, worktree.ErrTracked) {
		return withHint(err, "stop tracking it in that worktree (the file stays on disk): git rm --cached .agent/memories.md && git commit -m 'Stop tracking agent memory'; then run memsync worktree link")
	}
	return err
}

func runWorktreeAdd(c *cli.Context) error {
	if c.NArg() < 1 || c.NArg() > 2 {
		return usageError{fmt.Errorf("worktree add needs PATH and at most one COMMIT-ISH")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	o := worktree.AddOptions{Path: c.Args().Get(0), CommitIsh: c.Args().Get(1), Branch: c.String("b"),
		ResetBranch: c.String("B"), Detach: c.Bool("detach"), Force: c.Bool("force"), Quiet: c.Bool("quiet")}
	gitOut := s.stdout
	if s.json {
		gitOut = s.stderr // keep stdout for the JSON
	}
	res, err := worktree.Add(s.repo, c.String("C"), o, gitOut, s.stderr)
	var ge *worktree.GitError
	if errors.As(err, &ge) {
		return cli.Exit("", ge.Code) // git said why
	}
	if errors.Is(err, worktree.ErrTracked) {
		// The worktree exists; its memory is left as the branch has it.
		s.warn(err.Error())
		fmt.Fprintln(s.stderr, "hint: stop tracking it in the new worktree: git rm --cached .agent/memories.md && git commit; then run memsync worktree link")
		res.State, res.Message = res.Was, "not linked: "+err.Error()
		err = nil
	}
	if err != nil {
		return err
	}
	return s.printLink(o.Path, res)
}

func runWorktreeLink(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageError{fmt.Errorf("worktree link takes at most one PATH")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	path := c.Args().First()
	if path == "" {
		if s.repo.WorkTree == "" {
			return usageError{fmt.Errorf("not inside a worktree; name one: memsync worktree link PATH")}
		}
		path = s.repo.WorkTree
	}
	res, err := worktree.Link(s.repo, absPath(c, path))
	if err != nil {
		return trackedHint(err)
	}
	return s.printLink(path, res)
}

func runWorktreeList(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("worktree list takes no arguments")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	list, err := worktree.List(s.repo)
	if err != nil {
		return err
	}
	if s.json {
		out := make([]worktreeJSON, 0, len(list))
		for _, w := range list {
			out = append(out, toWorktreeJSON(w))
		}
		return s.printJSON(out)
	}
	for _, w := range list {
		branch := w.Branch
		if branch == "" {
			branch = "(detached)"
		}
		fmt.Fprintf(s.stdout, "%-14s %s  [%s]  %s\n", w.Status.State, w.Path, branch, w.Status.Detail)
	}
	return nil
}

func runWorktreeDoctor(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("worktree doctor takes no arguments")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	findings, err := worktree.Doctor(s.repo)
	if err != nil {
		return err
	}
	fix := c.Bool("fix")
	out := make([]worktreeJSON, 0, len(findings))
	left := 0
	for _, f := range findings {
		j := toWorktreeJSON(f.Worktree)
		j.Fix, j.Fixable = f.Fix, &f.Fixable
		if !s.json {
			fmt.Fprintf(s.stdout, "%s: %s: %s\n", f.Worktree.Path, f.Worktree.Status.State, f.Worktree.Status.Detail)
		}
		if fix && f.Fixable {
			if f.Worktree.Status.State == worktree.StateCopyDiverged {
				diff, err := worktree.Diff(s.repo, f.Worktree.Status.Path)
				if err != nil {
					return err
				}
				j.Diff = diff
				if !s.json {
					fmt.Fprintf(s.stdout, "  the copy differs from the memory (- only in the memory, + only in the copy):\n%s", indent(diff, "    "))
				}
			}
			res, err := worktree.Repair(s.repo, f, s.stderr, s.stderr)
			fixed := err == nil
			j.Fixed = &fixed
			if err != nil {
				s.warn(fmt.Sprintf("%s: %v", f.Worktree.Path, err))
				left++
			} else {
				j.Result, j.Backup, j.Added = res.Message, res.Backup, res.Added
				if !s.json {
					fmt.Fprintf(s.stdout, "  fixed: %s\n", res.Message)
				}
			}
		} else {
			left++
			if !s.json {
				fmt.Fprintf(s.stdout, "  fix: %s\n", f.Fix)
			}
		}
		out = append(out, j)
	}
	if s.json {
		if err := s.printJSON(out); err != nil {
			return err
		}
	} else if len(findings) == 0 {
		fmt.Fprintln(s.stdout, "every worktree shares the memory")
	}
	if left > 0 {
		msg := fmt.Sprintf("%d worktree problem(s) left", left)
		if !fix {
			return withHint(errors.New(msg), "run 'memsync worktree doctor --fix' to repair what can be repaired")
		}
		return errors.New(msg)
	}
	return nil
}

func runWorktreeRemove(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError{fmt.Errorf("worktree remove needs one PATH")}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	gitOut := s.stdout
	if s.json {
		gitOut = s.stderr
	}
	res, err := worktree.Remove(s.repo, c.String("C"), c.Args().First(), c.Bool("force"), gitOut, s.stderr)
	if res.Added > 0 && !s.json {
		fmt.Fprintf(s.stdout, "folded %d entr%s from the worktree's copy into the memory (copy kept as %s)\n", res.Added, map[bool]string{true: "y", false: "ies"}[res.Added == 1], res.Backup)
	}
	var ge *worktree.GitError
	if errors.As(err, &ge) {
		return cli.Exit("", ge.Code)
	}
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(struct {
			Path    string `json:"path"`
			Removed bool   `json:"removed"`
			Added   int    `json:"added"`
			Backup  string `json:"backup,omitempty"`
		}{c.Args().First(), true, res.Added, res.Backup})
	}
	fmt.Fprintf(s.stdout, "removed %s\n", c.Args().First())
	return nil
}

// absPath makes a path from the command line absolute against -C.
func absPath(c *cli.Context, p string) string {
	return worktree.AbsIn(c.String("C"), p)
}

func indent(s, prefix string) string {
	var b strings.Builder
	for l := range strings.Lines(s) {
		b.WriteString(prefix + l)
	}
	return b.String()
}
