package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func checkCommand() command {
	return command{name: "check", usage: "check the code entries cite: moved lines are followed, changed ones are stale", argsUsage: "[ID...]",
		flags: []cli.Flag{
			&cli.BoolFlag{Name: "exit-code", Usage: "exit 1 when a citation is stale (for CI)"},
			&cli.StringFlag{Name: "update", Usage: "re-anchor the citations of the entry `ID` after you re-checked them against the code"},
		},
		opens: repoOnly,
		args: func(c *cli.Context) error {
			if c.String("update") != "" && c.NArg() > 0 {
				return usageError{errors.New("check --update ID takes no other ID")}
			}
			return nil
		},
		run: runCheck,
	}
}

func runCheck(s *session, c *cli.Context) error {
	if id := c.String("update"); id != "" {
		return runCheckUpdate(s, c, id)
	}
	res, err := s.m.Check(c.Context, memsync.CheckOptions{Refs: c.Args().Slice()})
	if err != nil {
		return err
	}
	err = s.print(res, nil, func() {
		counts := map[string]int{}
		for _, ck := range res.Citations {
			counts[ck.State]++
			if ck.State != "fresh" {
				s.printf("%-8s %s  %s: %s\n", ck.State, ck.Entry, ck.Citation.String(), ck.Reason)
			}
		}
		switch {
		case len(res.Citations) == 0:
			s.printf("no entry cites code; cite it with: memsync add CONTENT --cite PATH[:LINE[-LINE]]\n")
			return
		default:
			s.printf("%d entries, %d citations: %d fresh, %d moved, %d renamed, %d stale\n", res.Entries, len(res.Citations),
				counts["fresh"], counts["moved"], counts["renamed"], counts["stale"])
		}
		if len(res.Stale) > 0 {
			s.printf("hint: read the code, then settle each stale entry: memsync check --update ID (still true), memsync edit ID, memsync add ... --supersedes ID, or memsync delete ID\n")
		}
	})
	if err == nil && c.Bool("exit-code") && len(res.Stale) > 0 {
		return cli.Exit("", exitError) // reported above
	}
	return err
}

func runCheckUpdate(s *session, c *cli.Context, id string) error {
	e, found, err := s.m.UpdateCitations(c.Context, id)
	if err != nil {
		return err
	}
	return s.print(struct {
		Entry memsync.Entry           `json:"entry"`
		Found []memsync.CitationCheck `json:"found"`
	}{e, found}, nil, func() {
		for _, ck := range found {
			switch {
			case ck.State == "fresh":
				s.printf("kept     %s\n", ck.Citation.String())
			case ck.Now == nil:
				s.printf("dropped  %s: %s\n", ck.Citation.String(), ck.Reason)
			default:
				s.printf("updated  %s -> %s (%s)\n", ck.Citation.String(), ck.Now.String(), ck.Reason)
			}
		}
		s.printf("%s cites %s\n", e.ID, citeList(e))
	})
}

// citeList is what e cites, as a person writes it.
func citeList(e memsync.Entry) string {
	if len(e.Citations) == 0 {
		return "no code now"
	}
	s := ""
	for i, c := range e.Citations {
		if i > 0 {
			s += ", "
		}
		s += c.String()
	}
	return s
}

// staleNote is how text output marks an entry that may be stale.
func staleNote(e *memsync.Entry) string {
	if !e.Stale {
		return ""
	}
	return fmt.Sprintf("  (may be stale: %s)", e.StaleReason)
}
