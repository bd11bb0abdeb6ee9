package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

// Exit codes, documented in docs/commands.md.
const (
	exitOK       = 0 // success
	exitError    = 1 // an error not listed below (I/O, git)
	exitUsage    = 2 // bad flags or arguments
	exitNotFound = 3 // no entry matches the ID, or the prefix is ambiguous
	exitLocked   = 4 // the lock was not free within --lock-timeout
	exitRefused  = 5 // refused to protect data: unsafe symlink, entry too large, binary content, role may not
	exitNoRepo   = 6 // not inside a git repository
)

// usageError marks errors in how memsync was called.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// hinted is an error with a line of advice for the person who reads it.
type hinted struct {
	error
	hint string
}

func (e hinted) Unwrap() error { return e.error }

func withHint(err error, hint string) error { return hinted{err, hint} }

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:      "memsync",
		Usage:     "one shared, durable memory for the AI agents of a git repository",
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		Action: func(c *cli.Context) error {
			if c.Bool("version") {
				return runVersion(newSession(c), c)
			}
			if c.NArg() > 0 {
				return unknownCommand("", c.Args().First(), c.App.Commands)
			}
			return cli.ShowAppHelp(c)
		},
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON"},
			&cli.BoolFlag{Name: "version", Usage: "print the version (as 'memsync version')"},
			&cli.StringFlag{Name: "C", Usage: "run as if memsync was started in `DIR`"},
			&cli.BoolFlag{Name: "global", Usage: "use the global memory layer (MEMSYNC_GLOBAL_DIR, else the XDG data dir)"},
			// The root reads the variables these flags name (memsync.Options);
			// a flag given on the line overrides its variable.
			&cli.DurationFlag{Name: "lock-timeout", DefaultText: "10s", Usage: "how long to wait for the memory lock (MEMSYNC_LOCK_TIMEOUT)"},
			&cli.Int64Flag{Name: "max-bytes", DefaultText: "10485760", Usage: "size cap of memories.md; past it the oldest entries are archived (MEMSYNC_MAX_BYTES)"},
			&cli.StringFlag{Name: "role", DefaultText: "owner", Usage: "owner, admin or worker; workers cannot delete, restore, archive, gc, promote, import or roll back; the configuration may set it too (MEMSYNC_ROLE)"},
			&cli.StringFlag{Name: "session", EnvVars: []string{"MEMSYNC_SESSION"}, Usage: "session `ID`: entries added are marked with it; list, search and summary show its entries and those of no session"},
			&cli.IntFlag{Name: "max-entries", DefaultText: "1000", Usage: "most active entries; past it gc archives the least recently used (MCP_MEMORY_MAX_ENTRIES)"},
			&cli.IntFlag{Name: "ttl-days", DefaultText: "90", Usage: "gc archives entries not accessed for this many days (MCP_MEMORY_TTL_DAYS)"},
		},
		ExitErrHandler: func(*cli.Context, error) {},
	}
	app.OnUsageError = onUsage
	helpNames[app] = "memsync"
	cli.HelpPrinter = printDescribed
	for _, d := range []command{initCommand(), addCommand(), searchCommand(), listCommand(), showCommand(),
		editCommand(), deleteCommand(), archiveCommand(), restoreCommand(), gcCommand(), summaryCommand(), promoteCommand(),
		importCommand(), hooksCommand(), hookCommand(), snapshotCommand(), logCommand(), diffCommand(),
		rollbackCommand(), maintainCommand(), worktreeCommand(), syncCommand(), conflictsCommand(), resolveCommand(), uiCommand(),
		doctorCommand(), mergeDriverCommand(), injectCommand(), contextCommand(), mcpCommand(), setupCommand(), purgeCommand(), checkCommand(), reviewCommand(), versionCommand(), completionCommand(), completeCommand()} {
		app.Commands = append(app.Commands, d.cli(""))
	}
	withGlobalOptions(app.Commands, globalOptionsHelp(app))
	return app
}

// globalOptionsHelp is the section every command's help ends with: the
// app's flags that go after a command as well (all but --version and
// --help), as the app's help shows them.
func globalOptionsHelp(app *cli.App) string {
	var b strings.Builder
	b.WriteString("\nGLOBAL OPTIONS (also after the command):")
	for _, f := range app.VisibleFlags() {
		if name := f.Names()[0]; name == "version" || name == "help" {
			continue
		}
		b.WriteString("\n   " + f.String())
	}
	b.WriteString("\n")
	return strings.ReplaceAll(b.String(), "{{", `{{"{{"}}`) // text, not template
}

// withGlobalOptions ends the help of every command in cmds, and of their
// subcommands, with the global options section. A group's help lists its
// subcommands without categories (memsync has none): urfave/cli's category
// list fails on a group that has not run, which 'memsync help GROUP' shows.
func withGlobalOptions(cmds []*cli.Command, section string) {
	group := strings.Replace(cli.SubcommandHelpTemplate,
		`{{template "visibleCommandCategoryTemplate" .}}`, `{{template "visibleCommandTemplate" .}}`, 1)
	setTemplates(cmds, cli.CommandHelpTemplate+section, group+section)
}

// setTemplates gives the commands in cmds, and their subcommands, the help
// template of a command or of a group (one string each, shared: every
// command start builds them once).
func setTemplates(cmds []*cli.Command, command, group string) {
	for _, c := range cmds {
		c.CustomHelpTemplate = command
		if len(c.Subcommands) > 0 {
			c.CustomHelpTemplate = group
		}
		setTemplates(c.Subcommands, command, group)
	}
}

// run is memsync's main, with its streams passed in for tests.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdin, stdout, stderr)
}

// runContext is run with a context that a signal cancels.
func runContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := newOutput(stdout, stderr)
	defer out.flush()
	app := newApp(stdin, &out.stdout, &out.stderr)
	stderr = &out.stderr
	err := app.RunContext(ctx, reorderArgs(app, args))
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	msg := err.Error()
	if msg == "" { // the error was reported already (git's own output)
		return code
	}
	if ctx.Err() != nil { // a signal: the command stopped where it was
		fmt.Fprintf(stderr, "memsync: interrupted: %s\n", memsync.Printable(msg))
		return code
	}
	fmt.Fprintf(stderr, "memsync: error: %s\n", memsync.Printable(msg))
	hint := defaultHint(err)
	if h := (hinted{}); errors.As(err, &h) {
		hint = h.hint
	}
	if hint != "" {
		fmt.Fprintf(stderr, "hint: %s\n", memsync.Printable(hint))
	}
	return code
}

// exitCode maps an error to memsync's documented exit codes, in one place.
func exitCode(err error) int {
	var ec cli.ExitCoder
	if errors.As(err, new(usageError)) {
		return exitUsage
	}
	switch kind, _ := memsync.Classify(err); kind {
	case memsync.KindUsage:
		return exitUsage
	case memsync.KindNotFound:
		return exitNotFound
	case memsync.KindLocked:
		return exitLocked
	case memsync.KindRefused:
		return exitRefused
	case memsync.KindNoRepo:
		return exitNoRepo
	}
	if errors.As(err, &ec) && !errors.As(err, new(*exec.ExitError)) {
		return ec.ExitCode()
	}
	return exitError
}

func defaultHint(err error) string {
	if errors.As(err, new(usageError)) {
		return "see 'memsync --help' or 'memsync COMMAND --help'"
	}
	_, hint := memsync.Classify(err)
	return hint
}
