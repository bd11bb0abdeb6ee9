package main

import (
	"github.com/urfave/cli/v2"
)

func reviewCommand() command {
	return command{name: "review", usage: "one queue to tidy memory: stale entries, near-duplicates, unused entries",
		args: noArgs("review"),
		run: func(s *session, c *cli.Context) error {
			res, err := s.m.Review(c.Context)
			return s.print(res, err, func() {
				if len(res.Items) == 0 {
					s.printf("nothing to review: no stale entry, no near-duplicates, nothing unused\n")
					return
				}
				for k, it := range res.Items {
					if k > 0 {
						s.printf("\n")
					}
					s.printf("%s: %s\n", it.Kind, it.Reason)
					for i := range it.Entries {
						s.printf("  %s  %s\n", it.Entries[i].ID, it.Entries[i].Heading())
					}
					for _, cmd := range it.Commands {
						s.printf("  $ %s\n", cmd)
					}
				}
			})
		},
	}
}
