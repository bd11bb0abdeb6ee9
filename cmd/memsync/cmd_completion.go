package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
)

func completionCommand() command {
	return command{name: "completion", usage: "print a shell completion script for bash, zsh or fish", argsUsage: "bash|zsh|fish",
		args: oneArg("completion needs one shell: bash, zsh or fish (memsync completion bash)"), opens: noMemory, run: runCompletion}
}

// completeCommand is the plumbing the completion scripts call back for the
// IDs the word being completed may be: memsync __complete -- WORD..., the
// words of the line after "memsync" before that word.
func completeCommand() command {
	return command{name: "__complete", usage: "print the IDs a completion script offers for the word after WORDS (plumbing)",
		argsUsage: "-- [WORD...]", hidden: true, opens: noMemory, run: runComplete}
}

// idSet names the IDs a command's arguments are.
type idSet int

const (
	idsOfEntries   idSet = iota + 1 // the memory's entries (the archive's with --archive)
	idsOfArchive                    // the archive's entries
	idsOfConflicts                  // the recorded conflicts
)

// idArgs are the commands whose arguments are IDs (the command's name, as
// "memsync" COMMAND [SUBCOMMAND] spells it), and which.
var idArgs = map[string]idSet{
	"show": idsOfEntries, "edit": idsOfEntries, "delete": idsOfEntries, "archive": idsOfEntries, "promote": idsOfEntries,
	"check": idsOfEntries, "log": idsOfEntries, "purge": idsOfEntries, "restore": idsOfArchive, "resolve": idsOfConflicts,
}

// idFlags are the flags whose value is an entry ID (add --supersedes,
// check --update).
var idFlags = map[string]bool{"supersedes": true, "update": true}

// runComplete prints the IDs the next word of the line may be, one per
// line with its heading after a tab, and nothing when that word is no ID
// or there is no memory: it never fails, and never says why.
func runComplete(s *session, c *cli.Context) error {
	words := c.Args().Slice()
	set := completesIDs(c.App, words)
	if set == 0 {
		return nil
	}
	dir, global := lineLayer(words)
	m, err := memsync.Open(dir, memsync.Options{Global: global, Session: s.scope, NoAccessLog: true})
	if err != nil {
		return nil
	}
	defer func() { _ = m.Close() }()
	type idLine struct{ id, heading string }
	var ids []idLine
	if set == idsOfConflicts {
		cs, _ := m.Conflicts(c.Context)
		for _, x := range cs {
			ids = append(ids, idLine{x.ID, x.Title})
		}
	} else {
		es, _ := m.List(c.Context, memsync.View{Archive: set == idsOfArchive})
		for i := range es {
			ids = append(ids, idLine{es[i].ID, es[i].Heading()})
		}
	}
	for _, x := range ids {
		if slices.Contains(words, x.id) {
			continue // already on the line
		}
		heading := strings.NewReplacer("\t", " ", "\n", " ").Replace(memsync.Printable(x.heading))
		if _, err := fmt.Fprintf(s.stdout, "%s\t%s\n", memsync.Printable(x.id), heading); err != nil {
			return nil
		}
	}
	return nil
}

// completesIDs is the set of IDs the word after words may be, 0 for none:
// the value of an ID flag (--supersedes, --update), or an argument of a
// command of idArgs (the archive's entries with --archive).
func completesIDs(app *cli.App, words []string) idSet {
	path := commandPath(app, words)
	names := make([]string, len(path))
	flags := slices.Clone(app.Flags)
	for i, c := range path {
		names[i] = c.Name
		flags = append(flags, c.Flags...)
	}
	if n := len(words); n > 0 {
		prev := words[n-1]
		if prev == "=" && n > 1 { // bash splits --update=ID at the '='
			prev = words[n-2]
		}
		if isFlag(prev) && !strings.Contains(prev, "=") && !slices.Contains(words, "--") {
			name := strings.TrimLeft(prev, "-")
			if f := findFlag(flags, name); f != nil && takesValue(f) {
				if idFlags[name] {
					return idsOfEntries
				}
				return 0 // the value of another flag
			}
		}
	}
	set := idArgs[strings.Join(names, " ")]
	if set == idsOfEntries && slices.Contains(words, "--archive") {
		set = idsOfArchive
	}
	return set
}

// lineLayer is the memory the words name: -C DIR (a leading ~/ is the home
// folder, as the shell would expand it) and --global.
func lineLayer(words []string) (dir string, global bool) {
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			return dir, global
		case w == "--global":
			global = true
		case w == "-C" || w == "--C":
			if i+1 < len(words) && words[i+1] == "=" {
				i++
			}
			if i+1 < len(words) {
				i++
				dir = words[i]
			}
		case strings.HasPrefix(w, "-C=") || strings.HasPrefix(w, "--C="):
			_, dir, _ = strings.Cut(w, "=")
		}
	}
	if rest, ok := strings.CutPrefix(dir, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, rest)
		}
	}
	return dir, global
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
	ids   bool       // its arguments are IDs (idArgs): the script asks memsync __complete
}

// flagDesc is one flag: its names as typed (--tags, -t) and its usage.
type flagDesc struct {
	names []string
	usage string
	value bool // it takes a value
	id    bool // its value is an entry ID (idFlags)
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
		p := cmdPath{path: path, usage: usage, leaf: len(cmds) == 0, alias: alias,
			ids: idArgs[strings.TrimPrefix(path, app.Name+" ")] != 0}
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
		d := flagDesc{value: takesValue(f), id: idFlags[f.Names()[0]]}
		for _, n := range f.Names() {
			d.names = append(d.names, dashed(n))
		}
		if u, ok := f.(cli.DocGenerationFlag); ok {
			// `NAME` marks the value's placeholder for --help; a menu shows
			// the name alone.
			d.usage = strings.ReplaceAll(u.GetUsage(), "`", "")
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
	b.WriteString(`# bash completion for memsync: commands, subcommands, flags and entry IDs.
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
	fmt.Fprintf(&b, `	esac
}

# _memsync_ids PATH PREV: the word after PREV on the command line PATH may be an
# entry ID (an argument of PATH, or the value of the flag PREV).
_memsync_ids() {
	case "$1" in
	%s) return 0 ;;
	esac
	case "$2" in
	%s|=) return 0 ;;
	esac
	return 1
}

_memsync() {
	local cur=${COMP_WORDS[COMP_CWORD]} path=memsync w i id rest
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		[[ $w == -* ]] && continue
		_memsync_flags "$path $w" >/dev/null && path="$path $w"
	done
	COMPREPLY=()
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_memsync_flags "$path")" -- "$cur"))
	elif _memsync_ids "$path" "${COMP_WORDS[COMP_CWORD-1]}"; then
		# memsync itself says which IDs the word may be (nothing where there is no memory)
		while IFS=$'\t' read -r id rest; do
			[[ $id == "$cur"* ]] && COMPREPLY+=("$id")
		done < <("${COMP_WORDS[0]}" __complete -- "${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)
	else
		COMPREPLY=($(compgen -W "$(_memsync_subs "$path")" -- "$cur"))
	fi
}
complete -o default -F _memsync memsync
`, strings.Join(quoteAll(idPaths(paths)), "|"), strings.Join(idFlagNames(paths), "|"))
	return b.String()
}

// idPaths are the paths, aliases included, of the commands whose arguments
// are IDs.
func idPaths(paths []cmdPath) []string {
	var out []string
	for _, p := range paths {
		if p.ids {
			out = append(out, p.path)
			out = append(out, p.alias...)
		}
	}
	return out
}

// idFlagNames are the names, as typed, of the flags whose value is an ID.
func idFlagNames(paths []cmdPath) []string {
	var out []string
	for _, p := range paths {
		for _, f := range p.flags {
			if f.id {
				for _, n := range f.names {
					if !slices.Contains(out, n) {
						out = append(out, n)
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func zshCompletion(paths []cmdPath) string {
	var b strings.Builder
	b.WriteString(`#compdef memsync
# zsh completion for memsync: commands, subcommands, flags and entry IDs.
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
	b.WriteString(")\n# the commands whose arguments are entry IDs, and the flags whose value is one\ntypeset -ga _memsync_idpaths _memsync_idflags\n_memsync_idpaths=(")
	for _, p := range idPaths(paths) {
		b.WriteString(" '" + p + "'")
	}
	b.WriteString(" )\n_memsync_idflags=(" + strings.Join(idFlagNames(paths), " ") + ")\n")
	b.WriteString(`
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
	elif (( ${_memsync_idpaths[(Ie)$cmdpath]} || ${_memsync_idflags[(Ie)${words[CURRENT-1]}]} )); then
		# memsync itself says which IDs the word may be (nothing where there is no memory)
		local -a ids
		ids=(${(f)"$(${(Q)words[1]} __complete -- "${(@Q)words[2,CURRENT-1]}" 2>/dev/null)"})
		ids=(${ids/$'\t'/:})
		if (( $#ids )); then
			_describe -t memsync-ids 'entry ID' ids
		else
			_files
		fi
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
	b.WriteString(`# fish completion for memsync: commands, subcommands, flags and entry IDs.
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

# The commands whose arguments are entry IDs.
set -g __memsync_idpaths`)
	for _, p := range idPaths(paths) {
		b.WriteString(" " + fishQuote(p))
	}
	b.WriteString(`

# __memsync_ids prints the IDs the token being completed may be, from memsync
# itself (nothing where there is no memory), each with its heading.
function __memsync_ids
	set -l words (commandline -opc)
	$words[1] __complete -- $words[2..-1] 2>/dev/null
end

# __memsync_at_ids: the token being completed is an argument of a command of IDs.
function __memsync_at_ids
	not string match -q -- '-*' (commandline -ct); and contains -- (__memsync_path) $__memsync_idpaths
end
complete -c memsync -f -n __memsync_at_ids -a '(__memsync_ids)'

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
			switch {
			case f.id: // its value is an entry ID: memsync offers them
				b.WriteString(" -x -a '(__memsync_ids)'")
			case f.value:
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
