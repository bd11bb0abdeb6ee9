package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// reorderArgs lets flags go anywhere on the line, as people and orch write
// them ("memsync add "text" -t pattern", "memsync list --json"), although
// urfave/cli stops reading flags at the first argument and reads the app's
// flags only before the command. It moves every flag to where urfave/cli
// reads it: the app's flags before the command, a command's flags right after
// it, then "--" and the arguments. A "--" on the line ends the flags: what
// follows is arguments, also when it starts with '-'.
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) == 0 {
		return args
	}
	path := commandPath(app, args[1:])
	segs := [][]string{{args[0]}}    // the app, then each command: name and flags
	flags := [][]cli.Flag{app.Flags} // the flags each segment takes
	for _, c := range path {
		segs, flags = append(segs, []string{c.Name}), append(flags, c.Flags)
	}
	var positional []string
	next := 0 // the next command name of path expected on the line
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if isFlag(a) {
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			// The innermost command that knows the flag gets it; an unknown
			// flag goes to the innermost command, which reports it.
			at, f := len(path), cli.Flag(nil)
			for j := len(path); j >= 0; j-- {
				if f = findFlag(flags[j], name); f != nil {
					at = j
					break
				}
			}
			segs[at] = append(segs[at], a)
			if f != nil && takesValue(f) && !hasValue && i+1 < len(args) {
				i++
				segs[at] = append(segs[at], args[i])
			}
			continue
		}
		if next < len(path) && len(positional) == 0 && path[next].HasName(a) {
			next++
			continue
		}
		positional = append(positional, a)
	}
	var out []string
	for _, s := range segs {
		out = append(out, s...)
	}
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

// commandPath finds the command (and subcommand) named on the line, skipping
// flags and their values wherever they stand.
func commandPath(app *cli.App, args []string) []*cli.Command {
	var path []*cli.Command
	find := app.Command // then the subcommands of the last command found
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if isFlag(a) {
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if f := anyFlag(app.Flags, app.Commands, name); f != nil && takesValue(f) && !hasValue {
				i++
			}
			continue
		}
		c := find(a)
		if c == nil {
			break
		}
		path, find = append(path, c), c.Command
	}
	return path
}

func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' }

// anyFlag finds a flag by name among flags and those of all commands.
func anyFlag(flags []cli.Flag, cmds []*cli.Command, name string) cli.Flag {
	if f := findFlag(flags, name); f != nil {
		return f
	}
	for _, c := range cmds {
		if f := anyFlag(c.Flags, c.Subcommands, name); f != nil {
			return f
		}
	}
	return nil
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

func takesValue(f cli.Flag) bool {
	_, isBool := f.(*cli.BoolFlag)
	return !isBool
}
