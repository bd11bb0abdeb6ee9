package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// shellPath is the path of the shell name for the completion tests; without
// it the test skips, unless MEMSYNC_TEST_SHELLS=required (CI) makes that a
// failure.
func shellPath(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("MEMSYNC_TEST_SHELLS") == "required" {
		t.Fatalf("%s is not installed and MEMSYNC_TEST_SHELLS=required: apt-get install %s", name, name)
	}
	t.Skipf("%s is not installed (apt-get install %s); MEMSYNC_TEST_SHELLS=required makes this a failure", name, name)
	return ""
}

// TestCompletionShowsNoPlaceholderMarks: the backquotes that mark a flag's
// value in --help ("session `ID`") are not shown in completion menus.
func TestCompletionShowsNoPlaceholderMarks(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out, _ := memsyncOut(t, testGitEnv(t), t.TempDir(), "completion", shell)
		if i := strings.IndexByte(out, '`'); i >= 0 {
			t.Errorf("%s completion shows a backquote: %q", shell, out[max(0, i-40):min(len(out), i+40)])
		}
	}
}

// completionScript writes 'memsync completion SHELL' to a file.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "memsync."+shell)
	out, _ := memsyncOut(t, testGitEnv(t), t.TempDir(), "completion", shell)
	if err := os.WriteFile(script, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return script
}

// idRepo is a repository with two active entries and an archived one, and
// an environment whose PATH finds the real memsync as "memsync" first, as a
// completion script calls it back.
type idRepo struct {
	dir      string
	env      []string
	a, b     string // the active entries' IDs
	archived string
}

func newIDRepo(t *testing.T) idRepo {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(memsyncBinary(t), filepath.Join(bin, "memsync")); err != nil {
		t.Fatal(err)
	}
	env := prependPath(testGitEnv(t), bin)
	r := idRepo{dir: filepath.Join(t.TempDir(), "repo"), env: env}
	gitRun(t, env, filepath.Dir(r.dir), "init", "-q", r.dir)
	add := func(content string) string {
		return strings.TrimSpace(memsyncIn(t, env, r.dir, "add", content, "--title", content))
	}
	r.a, r.b, r.archived = add("pool size"), add("retry budget"), add("old lesson")
	memsyncIn(t, env, r.dir, "archive", r.archived)
	return r
}

// prefix is the shortest prefix of the ID id that none of the others has.
func (r idRepo) prefix(id string) string {
	for n := 1; n < len(id); n++ {
		if !slices.ContainsFunc([]string{r.a, r.b, r.archived}, func(o string) bool { return o != id && strings.HasPrefix(o, id[:n]) }) {
			return id[:n]
		}
	}
	return id
}

// TestBashCompletion loads 'memsync completion bash' into a real bash and
// asks it to complete lines as the shell does on Tab: commands, flags, and
// the entry IDs memsync itself offers for the arguments of the commands of
// IDs and the flags of one, in a real repository.
func TestBashCompletion(t *testing.T) {
	bash := shellPath(t, "bash")
	script := completionScript(t, "bash")
	r := newIDRepo(t)
	outside := t.TempDir()
	sorted := func(ids ...string) string { slices.Sort(ids); return strings.Join(ids, " ") }
	for _, c := range []struct{ dir, line, want string }{
		{outside, "memsync wor", "worktree"},
		{outside, "memsync worktree l", "link list"},
		{outside, "memsync hooks inst", "install"},
		{outside, "memsync ho", "hooks"}, // hook is plumbing, hidden
		{outside, "memsync add --ta", "--tags"},
		{outside, "memsync --json worktree doctor --f", "--fix"},
		{outside, "memsync rm --he", "--help"},     // an alias names its command
		{outside, "memsync worktree add -b", "-b"}, // the subcommand's own flags
		{outside, "memsync list --lock-t", "--lock-timeout"},
		{outside, "memsync list --vers", ""},    // --version is the app's alone
		{outside, "memsync add some text ", ""}, // arguments: the shell's default (files)
		{outside, "memsync completion ", ""},
		{outside, "memsync ver", "version"},
		{outside, "memsync __c", ""},   // plumbing, hidden
		{outside, "memsync show ", ""}, // no memory: nothing, quietly

		{r.dir, "memsync show ", sorted(r.a, r.b)},
		{r.dir, "memsync show " + r.prefix(r.a), r.a},
		{r.dir, "memsync show " + r.a + " ", r.b}, // not twice
		{r.dir, "memsync rm ", sorted(r.a, r.b)},
		{r.dir, "memsync edit " + r.prefix(r.b), r.b},
		{r.dir, "memsync --json log ", sorted(r.a, r.b)},
		{r.dir, "memsync show --archive ", r.archived},
		{r.dir, "memsync restore ", r.archived},
		{r.dir, "memsync add some text --supersedes ", sorted(r.a, r.b)},
		{r.dir, "memsync check --update = ", sorted(r.a, r.b)}, // bash splits --update= at the '='
		{r.dir, "memsync log -n ", ""},                         // the value of another flag
		{r.dir, "memsync add ", ""},
		{r.dir, "memsync resolve ", ""}, // no recorded conflicts
		{outside, "memsync -C " + r.dir + " show ", sorted(r.a, r.b)},
	} {
		words := strings.Fields(c.line)
		if strings.HasSuffix(c.line, " ") {
			words = append(words, "")
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+w+"'")
		}
		prog := "source " + script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
			strconv.Itoa(len(words)-1) + "\n_memsync\necho \"${COMPREPLY[*]}\"\n"
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog)
		cmd.Dir, cmd.Env = c.dir, r.env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		got, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("%q: bash: %v\n%s%s", c.line, err, got, stderr.String())
		}
		if g := sorted(strings.Fields(string(got))...); g != c.want {
			t.Errorf("completing %q in %s: got %q, want %q", c.line, filepath.Base(c.dir), g, c.want)
		}
	}
}

// TestZshCompletion types lines and Tab into a real interactive zsh on a
// pty (zsh/zpty) that loaded 'memsync completion zsh' after compinit, and
// reads the line as the completion left it.
func TestZshCompletion(t *testing.T) {
	zsh := shellPath(t, "zsh")
	script := completionScript(t, "zsh")
	r := newIDRepo(t)
	driver := filepath.Join(t.TempDir(), "drive.zsh")
	if err := os.WriteFile(driver, []byte(zshDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	type tab struct{ line, want string }
	for _, c := range []struct {
		dir  string
		tabs []tab
	}{
		{r.dir, []tab{
			{"memsync hooks inst", "memsync hooks install "},
			{"memsync list --no-p", "memsync list --no-pager "},
			{"memsync show " + r.prefix(r.a), "memsync show " + r.a + " "},
			{"memsync rm " + r.prefix(r.b), "memsync rm " + r.b + " "},
			{"memsync show " + r.a + " ", "memsync show " + r.a + " " + r.b + " "}, // the one left
			{"memsync restore ", "memsync restore " + r.archived + " "},
			{"memsync add text --supersedes " + r.prefix(r.b), "memsync add text --supersedes " + r.b + " "},
		}},
		{t.TempDir(), []tab{{"memsync show ", "memsync show "}}}, // no memory, no files: nothing
	} {
		out := filepath.Join(t.TempDir(), "lines")
		args := []string{"-f", driver, script, out}
		for _, x := range c.tabs {
			args = append(args, x.line)
		}
		cmd := exec.Command(zsh, args...)
		cmd.Dir, cmd.Env = c.dir, r.env
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("zsh: %v\n%s", err, b)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
		if len(lines) != len(c.tabs) {
			t.Fatalf("zsh left %d lines for %d: %q", len(lines), len(c.tabs), lines)
		}
		for i, x := range c.tabs {
			if lines[i] != x.want {
				t.Errorf("completing %q: got %q, want %q", x.line, lines[i], x.want)
			}
		}
	}
}

// zshDriver: zsh -f drive.zsh SCRIPT OUT LINE... types each LINE, Tab and
// ^G into an interactive zsh on a pty that loaded SCRIPT after compinit;
// ^G appends the line as the completion left it to OUT and clears it, ^T
// at the end makes OUT.done. It fails when that does not appear within
// 20 s.
const zshDriver = `zmodload zsh/zpty || exit 3
script=$1 out=$2
shift 2
zpty z zsh -f -i || exit 3
zpty -w z "PS1='' RPROMPT=''; unsetopt beep; autoload -Uz compinit; compinit -u -D; source ${(q)script}"
zpty -w z "dump() { print -r -- \"\$BUFFER\" >> ${(q)out}; BUFFER=; }; zle -N dump; bindkey '^G' dump"
zpty -w z "finish() { : > ${(q)out}.done; }; zle -N finish; bindkey '^T' finish"
for line in "$@"; do
	zpty -w -n z "$line"$'\t\x07'
done
zpty -w -n z $'\x14'
for i in {1..1000}; do
	[[ -e $out.done ]] && break
	zpty -r -t z junk 2>/dev/null
	sleep 0.02
done
zpty -d z
[[ -e $out.done ]]
`

// TestFishCompletion asks a real fish what it completes for lines
// (complete -C) with 'memsync completion fish' loaded.
func TestFishCompletion(t *testing.T) {
	fish := shellPath(t, "fish")
	script := completionScript(t, "fish")
	r := newIDRepo(t)
	outside := t.TempDir()
	for _, c := range []struct {
		dir, line string
		want      []string // the completions, each "WORD\tDESCRIPTION" or WORD
	}{
		{outside, "memsync hooks inst", []string{"install\tinstall the hooks (again: no change)"}},
		{outside, "memsync list --no-p", []string{"--no-pager\tprint the output as it is, not through $PAGER (less -FRX) on a terminal"}},
		{outside, "memsync show ", nil}, // no memory: nothing, quietly
		{r.dir, "memsync show ", []string{r.a + "\tpool size", r.b + "\tretry budget"}},
		{r.dir, "memsync rm " + r.prefix(r.b), []string{r.b + "\tretry budget"}},
		{r.dir, "memsync show " + r.a + " ", []string{r.b + "\tretry budget"}},
		{r.dir, "memsync restore ", []string{r.archived + "\told lesson"}},
		{r.dir, "memsync add text --supersedes ", []string{r.a + "\tpool size", r.b + "\tretry budget"}},
		{outside, "memsync -C " + r.dir + " edit ", []string{r.a + "\tpool size", r.b + "\tretry budget"}},
	} {
		cmd := exec.Command(fish, "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script, c.line)
		cmd.Dir, cmd.Env = c.dir, r.env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("%q: fish: %v\n%s%s", c.line, err, out, stderr.String())
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if len(out) == 0 {
			got = nil
		}
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("completing %q: got %q, want %q", c.line, got, c.want)
		}
	}
}

// TestCompletionIDCommands: the commands whose arguments are entry IDs (a
// usage starting with ID) are the ones the scripts complete IDs for.
func TestCompletionIDCommands(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	want := map[string]bool{}
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			if strings.HasPrefix(strings.TrimLeft(c.ArgsUsage, "["), "ID") {
				want[prefix+c.Name] = true
			}
			walk(prefix+c.Name+" ", c.Subcommands)
		}
	}
	walk("", app.Commands)
	for name := range want {
		if idArgs[name] == 0 {
			t.Errorf("memsync %s takes IDs, and the completion scripts do not offer them", name)
		}
	}
	for name := range idArgs {
		if !want[name] {
			t.Errorf("idArgs names %q, which is no command whose arguments are IDs", name)
		}
	}
}
