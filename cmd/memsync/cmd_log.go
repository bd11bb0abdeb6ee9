package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func logCommand() *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "list the memory's snapshots, newest first",
		Description: "Each snapshot on refs/memsync/snapshots with its provenance (hook, branch,\n" +
			"source commit, worktree) and the entries of the active file added (+), removed\n" +
			"(-) and changed (~) since the snapshot before it. Plain git reads the same\n" +
			"history: git log refs/memsync/snapshots.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "n", Usage: "show at most `N` snapshots (0: all)"},
		},
		Action: runLog,
	}
}

func runLog(c *cli.Context) error {
	s, err := openRepoSession(c)
	if err != nil {
		return err
	}
	entries, err := s.m.Log(c.Context, c.Int("n"))
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(entries)
	}
	if len(entries) == 0 {
		fmt.Fprintln(s.stdout, "no snapshots yet (the hooks take them: memsync hooks install; or memsync snapshot)")
	}
	for _, e := range entries {
		fmt.Fprintf(s.stdout, "%s  %s  %4d entries  +%d -%d ~%d  %s\n", e.Commit[:12], e.Time, e.Entries, e.Added, e.Removed, e.Changed, e.Subject)
		var prov []string
		for _, kv := range [][2]string{{"hook", e.Hook}, {"branch", e.Branch}, {"commit", shortHash(e.SourceCommit)}, {"worktree", e.Worktree}, {"rollback to", shortHash(e.Rollback)}} {
			if kv[1] != "" {
				prov = append(prov, kv[0]+" "+kv[1])
			}
		}
		if len(prov) > 0 {
			fmt.Fprintf(s.stdout, "              %s\n", joinWith(prov, " · "))
		}
	}
	return nil
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func joinWith(ss []string, sep string) string {
	out := ""
	for i, x := range ss {
		if i > 0 {
			out += sep
		}
		out += x
	}
	return out
}
