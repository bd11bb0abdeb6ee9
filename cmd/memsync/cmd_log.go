package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func logCommand() command {
	return command{name: "log", usage: "list the memory's snapshots, newest first; with ID, those that touched one entry", argsUsage: "[ID]",
		flags: []cli.Flag{
			&cli.IntFlag{Name: "n", Usage: "show at most `N` snapshots (0: all)"},
			&cli.BoolFlag{Name: "stat", Usage: "name the entries each snapshot added (+), removed (-) and changed (~)"},
			&cli.BoolFlag{Name: "p", Aliases: []string{"patch"}, Usage: "--stat, and each change as a line diff of the entry"},
			noPagerFlag,
		},
		args:  atMost(1, "log takes at most one entry ID"),
		opens: repoOnly, pages: alwaysPage,
		run: func(s *session, c *cli.Context) error {
			o := memsync.LogOptions{N: c.Int("n"), Stat: c.Bool("stat"), Patch: c.Bool("p"), Entry: c.Args().First()}
			entries, err := s.m.Log(c.Context, o)
			return s.print(entries, err, func() {
				if len(entries) == 0 {
					s.printf("no snapshots yet (the hooks take them: memsync hooks install; or memsync snapshot)\n")
				}
				for _, e := range entries {
					s.printf("%s  %s  %4d entries  %s %s ~%d  %s\n", s.paint(yellow, memsync.ShortHash(e.Commit)), e.Time, e.Entries,
						s.paint(choose(e.Added > 0, green, ""), fmt.Sprintf("+%d", e.Added)),
						s.paint(choose(e.Removed > 0, red, ""), fmt.Sprintf("-%d", e.Removed)), e.Changed, e.Subject)
					var prov []string
					for _, kv := range [][2]string{{"by", e.Author}, {"hook", e.Hook}, {"branch", e.Branch}, {"commit", memsync.ShortHash(e.SourceCommit)}, {"worktree", e.Worktree}, {"rollback to", memsync.ShortHash(e.Rollback)}} {
						if kv[1] != "" {
							prov = append(prov, kv[0]+" "+kv[1])
						}
					}
					if len(prov) > 0 {
						s.printf("              %s\n", strings.Join(prov, " · "))
					}
					s.printEntryChanges(e.Changes)
				}
			})
		},
	}
}

// printEntryChanges prints one line per changed entry under a snapshot of
// the log (mark, ID, title), each followed by its diff when there is one.
func (s *session) printEntryChanges(changes []memsync.EntryChange) {
	mark := map[string]string{"added": "+", "removed": "-", "changed": "~", "archived": ">", "restored": "<"}
	color := map[string]string{"added": green, "removed": red, "changed": yellow}
	for _, ch := range changes {
		where := ""
		if ch.Kind == "archived" || ch.Kind == "restored" || ch.Archive {
			where = "  (" + ch.Kind
			if ch.Archive && ch.Kind != "archived" {
				where += " in the archive"
			}
			where += ")"
		}
		s.printf("              %s %s  %s%s\n", s.paint(color[ch.Kind], mark[ch.Kind]), ch.ID, ch.Title, where)
		if ch.Diff == nil {
			continue
		}
		for _, l := range strings.SplitAfter(strings.TrimSuffix(*ch.Diff, "\n"), "\n") {
			if l != "" {
				l = strings.TrimSuffix(l, "\n")
				s.printf("                %s\n", s.paint(diffColor(l), l))
			}
		}
	}
}
