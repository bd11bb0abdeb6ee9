package main

import (
	"embed"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

// command declares one memsync command, as chezmoi declares its commands:
// what urfave/cli parses and shows, and the prologue every command shares
// (check the arguments, open the memory), which action runs once for all.
// The long help is help/NAME.txt (help/PARENT-NAME.txt for a subcommand).
type command struct {
	name, usage, argsUsage string
	aliases                []string
	flags                  []cli.Flag
	args                   func(*cli.Context) error // checks the arguments before anything opens; nil: any
	opens                  opens
	run                    func(*session, *cli.Context) error // nil: the command only groups subcommands
	subs                   []command
	raw                    bool // the arguments are passed on unparsed (hook)
	hidden                 bool // plumbing: left out of memsync --help's list, still runs
	// pages tells whether the output may be long enough to page through
	// $PAGER on a terminal (startPager); nil: never. Such a command has
	// noPagerFlag.
	pages func(*cli.Context) bool
	// ownHookCheck: the command reports whether git runs memsync's hooks
	// itself (hooks, doctor), so the prologue does not warn of it.
	ownHookCheck bool
	// serves: the command runs until stopped, serving on its streams or a
	// port (mcp, ui): its output is not buffered and the runtime keeps its
	// default garbage collector (tuneOneShot is for the others).
	serves bool
}

// opens says which memory a command works on.
type opens int

const (
	layerFlag opens = iota // the layer --global names: the project's memory, or the global layer
	repoOnly               // the project's memory; --global is a usage error
	noMemory               // none opened: run opens what it needs (s.use, s.open)
)

// errNeedsRepo: history and hooks belong to a git repository, not the global layer.
var errNeedsRepo = errors.New("this command works on a git repository's memory, not the global layer")

//go:embed help/*.txt
var helpFiles embed.FS

// help is the long description kept in help/NAME.txt; "" if there is none.
func help(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

// helpNames is the help/*.txt name of each command and app built; its
// text becomes the Description when the help is printed (describe), so a
// command's start reads none of them (all of them made 0.1 MB of copies).
var helpNames = map[any]string{}

// describe fills in the Description of a command or app (urfave/cli's help
// data) from its help file, once.
func describe(data any) {
	switch v := data.(type) {
	case *cli.Command:
		if name, ok := helpNames[v]; ok && v.Description == "" {
			v.Description = help(name)
		}
	case *cli.App:
		if name, ok := helpNames[v]; ok && v.Description == "" {
			v.Description = help(name)
		}
	}
}

// describeAll fills in the Description of app and of all its commands (the
// man page shows them all).
func describeAll(app *cli.App) {
	describe(app)
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			describe(c)
			walk(c.Subcommands)
		}
	}
	walk(app.Commands)
}

// printHelp is urfave/cli's help printer; memsync's (set by newApp)
// describes what it prints first.
var printHelp = cli.HelpPrinter

func printDescribed(w io.Writer, templ string, data any) {
	describe(data)
	printHelp(w, templ, data)
}

// cli builds the urfave/cli command; prefix names the parent ("worktree-").
func (d command) cli(prefix string) *cli.Command {
	c := &cli.Command{Name: d.name, Aliases: d.aliases, Usage: d.usage, ArgsUsage: d.argsUsage,
		Flags: d.flags, SkipFlagParsing: d.raw, Hidden: d.hidden, OnUsageError: onUsage}
	helpNames[c] = prefix + d.name
	for _, sub := range d.subs {
		c.Subcommands = append(c.Subcommands, sub.cli(prefix+d.name+"-"))
	}
	switch {
	case d.run != nil:
		c.Action = d.action
	case len(d.subs) > 0: // a group: its help, or an unknown subcommand
		c.Action = func(ctx *cli.Context) error {
			if ctx.NArg() > 0 {
				return unknownCommand(d.name, ctx.Args().First(), c.Subcommands)
			}
			return cli.ShowSubcommandHelp(ctx)
		}
	}
	return c
}

// action is the prologue: the argument check, the memory, then run.
func (d command) action(c *cli.Context) error {
	if d.args != nil {
		if err := d.args(c); err != nil {
			return err
		}
	}
	if c.Bool(allowSecretFlag.Name) {
		c.Context = memsync.AllowSecrets(c.Context)
	}
	s := newSession(c)
	if d.serves {
		unbuffer(s.stdout)
	} else {
		tuneOneShot()
	}
	switch {
	case d.opens == repoOnly && c.Bool("global"):
		return usageError{errNeedsRepo}
	case d.opens != noMemory:
		if err := s.use(c.Bool("global")); err != nil {
			return err
		}
		if !d.ownHookCheck {
			if msg := s.m.HooksNotRun(); msg != "" {
				s.warn(msg)
			}
		}
	}
	if d.pages != nil && d.pages(c) {
		finish := s.startPager(c)
		return finish(d.run(s, c))
	}
	return d.run(s, c)
}

// newSession is the session of the command c runs, before any memory opens.
func newSession(c *cli.Context) *session {
	return &session{json: c.Bool("json"), stdout: c.App.Writer, stderr: c.App.ErrWriter, scope: c.String("session"), c: c,
		color: colorOK(c.App.Writer)}
}

// allowSecretFlag is the override of the secret check, on every command that
// writes new or changed entries (add, import, restore, resolve).
var allowSecretFlag = &cli.BoolFlag{Name: "allow-secret",
	Usage: "store content the secret rules flag anyway (a false positive; owner and admin only); the entry records the rule as '- Secret-Allowed: RULE'"}

// nargs checks that a command got lo to hi arguments (hi < 0: no most);
// msg is the usage error, with %d for the count where it says so.
func nargs(lo, hi int, msg string) func(*cli.Context) error {
	return func(c *cli.Context) error {
		if n := c.NArg(); n < lo || hi >= 0 && n > hi {
			return usageError{errors.New(strings.ReplaceAll(msg, "%d", strconv.Itoa(n)))}
		}
		return nil
	}
}

func oneArg(msg string) func(*cli.Context) error        { return nargs(1, 1, msg) }
func atLeastOne(msg string) func(*cli.Context) error    { return nargs(1, -1, msg) }
func atMost(n int, msg string) func(*cli.Context) error { return nargs(0, n, msg) }

// noArgs is the check of a command that takes no arguments.
func noArgs(name string) func(*cli.Context) error { return atMost(0, name+" takes no arguments") }
