package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

func completionCommand() command {
	return command{name: "completion", usage: "print a shell completion script for bash, zsh or fish", argsUsage: "bash|zsh|fish",
		args: oneArg("completion needs one shell: bash, zsh or fish (memsync completion bash)"), opens: noMemory, run: runCompletion}
}

// shells are the completion scripts memsync writes.
var shells = map[string]func(paths []cmdPath) string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}

func runCompletion(s *session, c *cli.Context) error {
	name := c.Args().First()
	gen, ok := shells[name]
	if !ok {
		return withHint(usageError{fmt.Errorf("no completion for the shell %q", name)},
			"memsync completes commands and flags in bash, zsh and fish: memsync completion bash|zsh|fish")
	}
	_, err := fmt.Fprint(s.stdout, gen(completionPaths(c.App)))
	return err
}

// cmdPath is one command as a completion script sees it.
type cmdPath struct {
	path  string     // "memsync worktree add"
	usage string     // the command's one line
	subs  []string   // the names of its visible subcommands
	flags []flagDesc // its flags and the app's, as typed
	alias []string   // other paths that name it ("memsync h" for "memsync help")
	leaf  bool       // it takes arguments, not subcommands
}

// flagDesc is one flag: its names as typed (--tags, -t) and its usage.
type flagDesc struct {
	names []string
	usage string
	value bool // it takes a value
}

// completionPaths lists the app's visible commands, the app first, each
// with the flags that may follow it: its own, --help and the app's (flags
// go anywhere on the line).
func completionPaths(app *cli.App) []cmdPath {
	var global []flagDesc // the app's flags that follow a command: all but --version
	for _, f := range flagDescs(app.Flags) {
		if f.names[0] != "--version" {
			global = append(global, f)
		}
	}
	help := flagDesc{names: []string{"--help", "-h"}, usage: "show help"}
	var out []cmdPath
	var walk func(path, usage string, flags []cli.Flag, cmds []*cli.Command, alias []string)
	walk = func(path, usage string, flags []cli.Flag, cmds []*cli.Command, alias []string) {
		if path != app.Name { // urfave/cli's help subcommand: 'memsync help CMD' serves
			cmds = slices.DeleteFunc(slices.Clone(cmds), func(c *cli.Command) bool { return c.Name == "help" })
		}
		p := cmdPath{path: path, usage: usage, leaf: len(cmds) == 0, alias: alias}
		p.flags = append(flagDescs(flags), help)
		if path != app.Name {
			p.flags = append(p.flags, global...)
		}
		for _, c := range cmds {
			if !c.Hidden {
				p.subs = append(p.subs, c.Name)
			}
		}
		out = append(out, p)
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			var aliases []string
			for _, a := range c.Aliases {
				aliases = append(aliases, path+" "+a)
			}
			walk(path+" "+c.Name, c.Usage, c.Flags, c.Subcommands, aliases)
		}
	}
	walk(app.Name, app.Usage, app.Flags, app.Commands, nil)
	return out
}

func flagDescs(flags []cli.Flag) []flagDesc {
	var out []flagDesc
	for _, f := range flags {
		d := flagDesc{value: takesValue(f)}
		for _, n := range f.Names() {
			d.names = append(d.names, dashed(n))
		}
		if u, ok := f.(cli.DocGenerationFlag); ok {
			d.usage = u.GetUsage()
		}
		if len(d.names) > 0 && d.names[0] != "--help" {
			out = append(out, d)
		}
	}
	return out
}

// flagWords is every name of every flag of p, space-separated.
func (p cmdPath) flagWords() string {
	var w []string
	for _, f := range p.flags {
		w = append(w, f.names...)
	}
	return strings.Join(w, " ")
}

func bashCompletion(paths []cmdPath) string {
	var b strings.Builder
	b.WriteString(`# bash completion for memsync: commands, subcommands and flags.
# Load it in this shell:    source <(memsync completion bash)
# or for every new shell:   memsync completion bash > ~/.local/share/bash-completion/completions/memsync

# _memsync_flags PATH prints the flags of the command PATH ("memsync worktree add"); 1: no such command.
_memsync_flags() {
	case "$1" in
`)
	for _, p := range paths {
		fmt.Fprintf(&b, "\t%s) echo '%s' ;;\n", strings.Join(quoteAll(append([]string{p.path}, p.alias...)), "|"), p.flagWords())
	}
	b.WriteString(`	*) return 1 ;;
	esac
}

# _memsync_subs PATH prints the subcommands of the command PATH.
_memsync_subs() {
	case "$1" in
`)
	for _, p := range paths {
		if !p.leaf {
			fmt.Fprintf(&b, "\t%s) echo '%s' ;;\n", strings.Join(quoteAll(append([]string{p.path}, p.alias...)), "|"), strings.Join(p.subs, " "))
		}
	}
	b.WriteString(`	esac
}

_memsync() {
	local cur=${COMP_WORDS[COMP_CWORD]} path=memsync w i
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		[[ $w == -* ]] && continue
		_memsync_flags "$path $w" >/dev/null && path="$path $w"
	done
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_memsync_flags "$path")" -- "$cur"))
	else
		COMPREPLY=($(compgen -W "$(_memsync_subs "$path")" -- "$cur"))
	fi
}
complete -o default -F _memsync memsync
`)
	return b.String()
}

func zshCompletion(paths []cmdPath) string {
	var b strings.Builder
	b.WriteString(`#compdef memsync
# zsh completion for memsync: commands, subcommands and flags.
# Load it in this shell:    source <(memsync completion zsh)   (after compinit)
# or for every new shell:   memsync completion zsh > "${fpath[1]}/_memsync"

typeset -gA _memsync_flags _memsync_subs
_memsync_flags=(
`)
	for _, p := range paths {
		for _, name := range append([]string{p.path}, p.alias...) {
			fmt.Fprintf(&b, "\t'%s' '%s'\n", name, p.flagWords())
		}
	}
	b.WriteString(")\n_memsync_subs=(\n")
	for _, p := range paths {
		if !p.leaf {
			for _, name := range append([]string{p.path}, p.alias...) {
				fmt.Fprintf(&b, "\t'%s' '%s'\n", name, strings.Join(p.subs, " "))
			}
		}
	}
	b.WriteString(`)

__memsync_complete() {
	local cmdpath=memsync w k i
	for ((i = 2; i < CURRENT; i++)); do
		w=${words[i]}
		[[ $w == -* ]] && continue
		k="$cmdpath $w"
		(( ${+_memsync_flags[$k]} )) && cmdpath=$k
	done
	if [[ ${words[CURRENT]} == -* ]]; then
		compadd -- ${=_memsync_flags[$cmdpath]}
	elif (( ${+_memsync_subs[$cmdpath]} )); then
		compadd -- ${=_memsync_subs[$cmdpath]}
	else
		_files
	fi
}

if [[ $funcstack[1] == _memsync ]]; then
	__memsync_complete "$@"
else
	compdef __memsync_complete memsync
fi
`)
	return b.String()
}

func fishCompletion(paths []cmdPath) string {
	var b strings.Builder
	b.WriteString(`# fish completion for memsync: commands, subcommands and flags.
# Load it in this shell:    memsync completion fish | source
# or for every new shell:   memsync completion fish > ~/.config/fish/completions/memsync.fish

set -g __memsync_paths`)
	for _, p := range paths {
		for _, name := range append([]string{p.path}, p.alias...) {
			b.WriteString(" " + fishQuote(name))
		}
	}
	b.WriteString(`

# __memsync_path prints the command the line names so far ("memsync worktree add").
function __memsync_path
	set -l path memsync
	set -l words (commandline -opc)
	set -e words[1]
	for w in $words
		string match -q -- '-*' $w; and continue
		contains -- "$path $w" $__memsync_paths; and set path "$path $w"
	end
	echo $path
end

# __memsync_at PATH: the line names the command PATH.
function __memsync_at
	test (__memsync_path) = "$argv[1]"
end

`)
	byPath := map[string]cmdPath{}
	for _, p := range paths {
		byPath[p.path] = p
	}
	for _, p := range paths {
		at := fishQuote("__memsync_at " + fishQuote(p.path))
		for _, sub := range p.subs {
			fmt.Fprintf(&b, "complete -c memsync -f -n %s -a %s -d %s\n", at, sub, fishQuote(byPath[p.path+" "+sub].usage))
		}
		for _, f := range p.flags {
			fmt.Fprintf(&b, "complete -c memsync -n %s", at)
			for _, n := range f.names {
				if strings.HasPrefix(n, "--") {
					fmt.Fprintf(&b, " -l %s", n[2:])
				} else {
					fmt.Fprintf(&b, " -s %s", n[1:])
				}
			}
			if f.value {
				b.WriteString(" -r")
			}
			fmt.Fprintf(&b, " -d %s\n", fishQuote(firstLine(f.usage)))
		}
	}
	return b.String()
}

// quoteAll quotes words for a bash case pattern.
func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = "'" + w + "'"
	}
	return out
}

// fishQuote is s as a single-quoted fish string.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// firstLine is the start of a usage text, short enough for a completion menu.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}
