package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBashCompletion loads 'memsync completion bash' into a real bash and
// asks it to complete lines as the shell does on Tab.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script := filepath.Join(t.TempDir(), "memsync.bash")
	out, _ := memsyncOut(t, testGitEnv(t), t.TempDir(), "completion", "bash")
	if err := os.WriteFile(script, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]string{
		"memsync wor":                        "worktree",
		"memsync worktree l":                 "link list",
		"memsync hooks inst":                 "install",
		"memsync ho":                         "hooks", // hook is plumbing, hidden
		"memsync add --ta":                   "--tags",
		"memsync --json worktree doctor --f": "--fix",
		"memsync rm --he":                    "--help", // an alias names its command
		"memsync worktree add -b":            "-b",     // the subcommand's own flags
		"memsync list --lock-t":              "--lock-timeout",
		"memsync list --vers":                "", // --version is the app's alone
		"memsync add some text ":             "", // arguments: the shell's default (files)
		"memsync completion ":                "",
		"memsync ver":                        "version",
	} {
		words := strings.Fields(line)
		if strings.HasSuffix(line, " ") {
			words = append(words, "")
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+w+"'")
		}
		prog := "source " + script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
			strconv.Itoa(len(words)-1) + "\n_memsync\necho \"${COMPREPLY[*]}\"\n"
		got, err := exec.Command(bash, "--norc", "--noprofile", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: bash: %v\n%s", line, err, got)
		}
		if g := strings.TrimSpace(string(got)); g != want {
			t.Errorf("completing %q: got %q, want %q", line, g, want)
		}
	}
}
