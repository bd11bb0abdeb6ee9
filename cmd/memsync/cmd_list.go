package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func listCommand() command {
	return command{name: "list", usage: "list the memories, numbered in file order",
		flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "archive", Usage: "list the archive"},
			noPagerFlag,
			&cli.StringFlag{Name: "type", Aliases: []string{"t"}, Usage: "only entries of this type"},
			&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Usage: "at most `N` entries, the first in file order (0 = all)", DefaultText: "all"},
		}, append(tagFlags(), filterFlags()...)...),
		args: func(c *cli.Context) error {
			if err := noArgs("list")(c); err != nil {
				return err
			}
			if c.Int("limit") < 0 {
				return usageError{fmt.Errorf("--limit must be 0 or more, not %d", c.Int("limit"))}
			}
			return nil
		},
		pages: alwaysPage,
		run: func(s *session, c *cli.Context) error {
			entries, err := s.m.List(c.Context, memsync.View{Archive: c.Bool("archive")})
			filter := filterOf(c)
			entries = memsync.Filtered(entries, filter)
			typ := memsync.NormalizeType(c.String("type"))
			all, anyOf := memsync.SplitList(c.String("tags")), memsync.SplitList(c.String("any-tags"))
			filtered := filter != (memsync.Filter{}) || typ != "" || len(all)+len(anyOf) > 0
			kept := entries[:0] // in place: a copy of 30k entries is 10 MB more to hold
			for i := range entries {
				if (typ == "" || entries[i].Type == typ) && hasTags(&entries[i], all, anyOf) {
					kept = append(kept, entries[i])
				}
			}
			if n := c.Int("limit"); n > 0 && len(kept) > n {
				kept = kept[:n]
			}
			entries = kept
			return s.print(entries, err, func() {
				if len(entries) == 0 && filtered {
					s.eprintf("no memories match the filter\n")
				} else if len(entries) == 0 && c.Bool("archive") {
					s.eprintf("the archive is empty\n")
				} else if len(entries) == 0 {
					s.eprintf("no memories yet; add one with: memsync add \"what you learned\" -t pattern\n")
					s.hintSync(c)
				}
				for i := range entries {
					s.printLine("", &entries[i])
				}
			})
		},
	}
}
