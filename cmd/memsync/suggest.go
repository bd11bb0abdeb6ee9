package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
)

// suggest is the candidate a mistyped name meant: the one it is the only
// prefix of ("instal" for "install"), else the closest within 2 edits and
// fewer edits than the name has characters; "" for none. The first of
// equally close candidates wins.
func suggest(typed string, candidates []string) string {
	var prefixed []string
	for _, c := range candidates {
		if typed != "" && strings.HasPrefix(c, typed) && !slices.Contains(prefixed, c) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	best, bestDist := "", min(3, len([]rune(typed)))
	for _, c := range candidates {
		if d := editDistance(typed, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the number of single-character insertions, deletions,
// substitutions and swaps of neighbours that turn a into b (Levenshtein
// distance, with a swap as one edit: "lsit" is 1 from "list").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// unknownCommand is the usage error of a command name that is none of
// cmds, with the closest visible one as the hint; parent is "" or the
// group's name ("worktree").
func unknownCommand(parent, name string, cmds []*cli.Command) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	full := strings.TrimSpace("memsync " + parent)
	err := usageError{fmt.Errorf("unknown command %q", strings.TrimSpace(parent+" "+name))}
	if s := suggest(name, names); s != "" {
		return withHint(err, fmt.Sprintf("did you mean %q? ('%s --help' lists the commands)", s, full))
	}
	return withHint(err, fmt.Sprintf("'%s --help' lists the commands", full))
}

// flagError matches the flag package's messages, to say them again in
// memsync's words.
var flagError = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:flag provided but not defined: -(\S+)|invalid (?:boolean )?value "(.*)" for (?:flag )?-([^:\s]+): .*|flag needs an argument: -(\S+))$`)
})

// onUsage marks urfave/cli's complaints about flags as usage errors, names
// flags as they are written (--lock-timeout, -C), suggests the flag a typo
// meant and says what a value should look like.
func onUsage(c *cli.Context, err error, _ bool) error {
	m := flagError().FindStringSubmatch(err.Error())
	if m == nil {
		return usageError{err}
	}
	var flags []cli.Flag
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil {
			flags = append(flags, ctx.Command.Flags...)
		}
	}
	if ctx := c.Lineage()[len(c.Lineage())-1]; ctx.App != nil {
		flags = append(flags, ctx.App.Flags...)
	}
	switch {
	case m[1] != "": // unknown
		var names []string
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		e := usageError{fmt.Errorf("unknown flag %s", dashed(m[1]))}
		if s := suggest(m[1], names); s != "" {
			return withHint(e, fmt.Sprintf("did you mean %s?", dashed(s)))
		}
		return withHint(e, fmt.Sprintf("'%s --help' lists the flags", commandLine(c)))
	case m[3] != "": // a bad value
		e := usageError{fmt.Errorf("invalid value %q for %s", m[2], dashed(m[3]))}
		if f := findFlag(flags, m[3]); f != nil {
			if want := valueFormat(f); want != "" {
				return withHint(e, want)
			}
		}
		return e
	default:
		return usageError{fmt.Errorf("%s needs a value", dashed(m[4]))}
	}
}

// commandLine is the command c runs as typed: "memsync worktree list".
func commandLine(c *cli.Context) string {
	lineage := c.Lineage()
	line := c.App.Name
	for i := len(lineage) - 1; i >= 0; i-- {
		if cmd := lineage[i].Command; cmd != nil && cmd.Name != "" && cmd.Name != c.App.Name { // not the app's own
			line += " " + cmd.Name
		}
	}
	return line
}

// dashed is a flag as it is written: -C, --lock-timeout.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// valueFormat says what a flag's value looks like, "" where the flag's
// usage says it.
func valueFormat(f cli.Flag) string {
	switch f.(type) {
	case *cli.DurationFlag:
		return "use a duration like 10s, 500ms or 2m"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return "use a whole number like 10"
	case *cli.Float64Flag:
		return "use a number like 0.5"
	case *cli.BoolFlag:
		return "use true or false, or the flag alone"
	}
	return ""
}
