package main

import (
	"strings"
	"testing"
)

// TestEditorLeavesNoFile: an editor that replaces the file it was given by
// a link to /dev/zero, by a pipe, or removes it: edit ends, bounded, with
// an error that says what the editor left and that nothing was changed
// (the link to /dev/zero used to be read whole: out of memory, a fatal
// error). An editor that writes more than an entry can hold is refused
// the same way.
func TestEditorLeavesNoFile(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	id := strings.TrimSpace(memsyncIn(t, env, repo, "add", "edit me, carefully"))
	for editor, want := range map[string]string{
		`ln -sf /dev/zero`:               "is not a regular file",
		`sh -c 'rm "$0" && mkfifo "$0"'`: "is not a regular file",
		`rm`:                             "the editor removed",
		`sh -c 'head -c 1000000 /dev/zero | tr "\0" x > "$0"'`: "larger than",
	} {
		out, code := runBounded(t, append(env, "EDITOR="+editor, "VISUAL="), repo, "edit", id)
		if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, "nothing was changed") {
			t.Errorf("EDITOR=%s: exit %d, want 1 and %q\n%.1000s", editor, code, want, out)
		}
	}
	if out := memsyncIn(t, env, repo, "show", id); !strings.Contains(out, "edit me, carefully") {
		t.Errorf("the entry after:\n%s", out)
	}
}
