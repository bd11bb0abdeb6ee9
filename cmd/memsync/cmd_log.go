package main

import (
	"strings"

	"github.com/memsync/memsync/internal/words"
	"github.com/urfave/cli/v2"
)

func logCommand() command {
	return command{name: "log", usage: "list the memory's snapshots, newest first",
		flags: []cli.Flag{&cli.IntFlag{Name: "n", Usage: "show at most `N` snapshots (0: all)"}},
		opens: repoOnly,
		run: func(s *session, c *cli.Context) error {
			entries, err := s.m.Log(c.Context, c.Int("n"))
			return s.print(entries, err, func() {
				if len(entries) == 0 {
					s.printf("no snapshots yet (the hooks take them: memsync hooks install; or memsync snapshot)\n")
				}
				for _, e := range entries {
					s.printf("%s  %s  %4d entries  +%d -%d ~%d  %s\n", words.Short(e.Commit), e.Time, e.Entries, e.Added, e.Removed, e.Changed, e.Subject)
					var prov []string
					for _, kv := range [][2]string{{"hook", e.Hook}, {"branch", e.Branch}, {"commit", words.Short(e.SourceCommit)}, {"worktree", e.Worktree}, {"rollback to", words.Short(e.Rollback)}} {
						if kv[1] != "" {
							prov = append(prov, kv[0]+" "+kv[1])
						}
					}
					if len(prov) > 0 {
						s.printf("              %s\n", strings.Join(prov, " · "))
					}
				}
			})
		},
	}
}
