package main

import (
	"errors"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func importCommand() command {
	return command{name: "import", usage: "import memories kept by other tools (folders of front-matter files, ralph, orch)", argsUsage: "DIR|FILE...",
		args:  atLeastOne("import needs a DIR or FILE"),
		flags: []cli.Flag{allowSecretFlag},
		run: func(s *session, c *cli.Context) error {
			dir, err := startDir(c)
			if err != nil {
				return err
			}
			paths := c.Args().Slice()
			for i, p := range paths {
				if p == "" {
					return usageError{errors.New("import needs a DIR or FILE, not an empty path")}
				}
				if !filepath.IsAbs(p) {
					paths[i] = filepath.Join(dir, p)
				}
			}
			res, err := s.m.Import(c.Context, paths...)
			if ie := (*memsync.ImportError)(nil); errors.As(err, &ie) {
				return withHint(err, "import reads folders of front-matter files and memories.md files (ralph, orch); fix or leave out "+ie.Path)
			}
			return s.print(res, err, func() {
				s.printEntries("imported", res.Added)
				s.eprintf("imported %d entries (%d archived), skipped %d already stored\n", len(res.Added), res.Archived, res.Skipped)
			})
		},
	}
}
