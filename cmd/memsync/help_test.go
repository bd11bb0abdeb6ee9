package main

import (
	"io"
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
