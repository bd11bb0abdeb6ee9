package main

import (
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHelpFiles: the long help of memsync and of every command is
// help/NAME.txt (help/PARENT-NAME.txt for a subcommand), and every file in
// help/ belongs to a command.
func TestHelpFiles(t *testing.T) {
	// The hooks subcommands have a one-line usage and no long help.
	noHelp := map[string]bool{"hooks-install": true, "hooks-uninstall": true, "hooks-status": true}
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	describeAll(app)
	commands := map[string]bool{"memsync": true}
	if app.Description == "" {
		t.Error("memsync has no long help: help/memsync.txt is missing")
	}
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			name := prefix + c.Name
			commands[name] = true
			if c.Description == "" && !noHelp[name] {
				t.Errorf("command %s has no long help: help/%s.txt is missing", name, name)
			}
			walk(name+"-", c.Subcommands)
		}
	}
	walk("", app.Commands)
	files, err := helpFiles.ReadDir("help")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name, ok := strings.CutSuffix(f.Name(), ".txt")
		if !ok || !commands[name] || noHelp[name] {
			t.Errorf("help/%s belongs to no command", f.Name())
		}
	}
}

// TestHelpShowsGlobalFlags: the help of every command and subcommand, as
// 'memsync PATH --help' and 'memsync help PATH' print it, ends with the
// global options a command takes too (--json, -C DIR among them), and
// leaves out the app's own (--version).
func TestHelpShowsGlobalFlags(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	var paths [][]string
	var walk func(prefix []string, cs []*cli.Command)
	walk = func(prefix []string, cs []*cli.Command) {
		for _, c := range cs {
			if c.Name == "help" {
				continue
			}
			p := append(slices.Clone(prefix), c.Name)
			paths = append(paths, p)
			walk(p, c.Subcommands)
		}
	}
	walk(nil, app.Commands)
	if len(paths) < 30 {
		t.Fatalf("only %d commands", len(paths))
	}
	for _, p := range paths {
		for _, args := range [][]string{append(slices.Clone(p), "--help"), append([]string{"help"}, p...)} {
			if len(p) > 1 && args[0] == "help" {
				continue // 'memsync help' names top-level commands
			}
			var out, errOut strings.Builder
			code := run(append([]string{"memsync"}, args...), strings.NewReader(""), &out, &errOut)
			help := out.String()
			if code != 0 || errOut.Len() > 0 {
				t.Fatalf("memsync %s: exit %d\n%s", strings.Join(args, " "), code, errOut.String())
			}
			_, global, ok := strings.Cut(help, "\nGLOBAL OPTIONS")
			if !ok {
				t.Errorf("memsync %s: no GLOBAL OPTIONS section:\n%s", strings.Join(args, " "), help)
				continue
			}
			for _, want := range []string{"\n   --json ", "\n   -C DIR ", "\n   --global ", "\n   --lock-timeout "} {
				if !strings.Contains(global, want) {
					t.Errorf("memsync %s: the global options lack %q", strings.Join(args, " "), strings.TrimSpace(want))
				}
			}
			if c := cmdAt(app, p); len(c.Subcommands) > 0 && !strings.Contains(help, "\nCOMMANDS:\n   "+c.Subcommands[0].Name) {
				t.Errorf("memsync %s: no list of its commands:\n%s", strings.Join(args, " "), help)
			}
			if strings.Contains(global, "--version") {
				t.Errorf("memsync %s: the global options list --version, the app's alone", strings.Join(args, " "))
			}
		}
	}
}

// designCitation matches what a user has not read: the design's seed
// documents and sections, possessives standing for another design.
var designCitation = regexp.MustCompile(`(?i)\bseed\b|§|\borch's\b|DESIGN\.md|\bissue \d+`)

// TestHelpCitesNoDesign: the help (long help, usage lines, flag usages,
// of every command, hidden ones too) says what a thing does, never which
// design document it comes from.
func TestHelpCitesNoDesign(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	check := func(where, text string) {
		if m := designCitation.FindString(text); m != "" {
			t.Errorf("%s cites %q: say what it does instead:\n%s", where, m, text)
		}
	}
	flags := func(where string, fs []cli.Flag) {
		for _, f := range fs {
			if u, ok := f.(cli.DocGenerationFlag); ok {
				check(where+" --"+f.Names()[0], u.GetUsage())
			}
		}
	}
	check("memsync", app.Usage+"\n"+app.Description)
	flags("memsync", app.Flags)
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			name := prefix + c.Name
			check("memsync "+name, c.Usage+"\n"+c.ArgsUsage+"\n"+c.Description)
			flags("memsync "+name, c.Flags)
			walk(name+" ", c.Subcommands)
		}
	}
	walk("", app.Commands)
}

// cmdAt is the command the names of path name.
func cmdAt(app *cli.App, path []string) *cli.Command {
	c := app.Command(path[0])
	for _, name := range path[1:] {
		c = c.Command(name)
	}
	return c
}
