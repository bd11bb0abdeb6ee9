package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/internal/fakesecret"
)

const alnumChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func readFile(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		tb.Fatal(err)
	}
	return string(b)
}

// refused runs memsync, which must refuse with exit 5, and returns stderr.
func refused(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	out, stderr, code := memsyncRun(t, env, dir, args...)
	if code != exitRefused {
		t.Errorf("memsync %v: exit %d, want %d\n%s%s", args, code, exitRefused, out, stderr)
	}
	return stderr
}

// checkRefusal: a refusal names the rule and where, gives the override, and
// never prints the secret.
func checkRefusal(tb testing.TB, stderr, rule, where, secret string) {
	tb.Helper()
	for _, want := range []string{rule, where, "--allow-secret"} {
		if !strings.Contains(stderr, want) {
			tb.Errorf("the refusal does not say %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, secret) {
		tb.Errorf("the refusal prints the secret:\n%s", stderr)
	}
}

// TestAddSecret: add refuses content holding a secret with exit 5, the
// memory file unchanged; --allow-secret stores it and records the rule; an
// ordinary memory with hashes and key words goes in.
func TestAddSecret(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	memsyncOut(t, env, repo, "add", "the cache key is sha256(path); commit 3f1c2a9d0b8e7f6a5c4d3e2f1a0b9c8d7e6f5a4b fixed it")
	mem := filepath.Join(repo, ".agent", "memories.md")
	before := readFile(t, mem)
	key := fakesecret.Key(1, "AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	stderr := refused(t, env, repo, "add", "deploy user\naws_access_key_id = "+key)
	checkRefusal(t, stderr, "aws-access-token", "content line 2", key)
	if got := readFile(t, mem); got != before {
		t.Fatalf("a refused add changed the memory:\n%s", got)
	}

	out, _ := memsyncOut(t, env, repo, "add", "--allow-secret", "--json", "deploy user\naws_access_key_id = "+key)
	var e struct{ Fields map[string]string }
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := e.Fields["Secret-Allowed"]; got != "aws-access-token" {
		t.Errorf("Secret-Allowed = %q, want aws-access-token (fields %v)", got, e.Fields)
	}
	if !strings.Contains(readFile(t, mem), "- Secret-Allowed: aws-access-token") {
		t.Errorf("the override is not recorded in the file:\n%s", readFile(t, mem))
	}
}

// TestImportSecret: an import whose source holds a secret imports nothing
// (exit 5); with --allow-secret it imports everything, the secret entry
// marked.
func TestImportSecret(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	memsyncOut(t, env, repo, "init")
	token := fakesecret.Key(2, "ghp_", alnumChars, 36)
	src := filepath.Join(t.TempDir(), "memories.md")
	ralph := "# Memories\n\n## Patterns\n\n### mem-1770245557-134c\n> Retry with backoff on 429.\n<!-- tags: http | created: 2026-02-04 -->\n\n" +
		"## Fixes\n\n### mem-1770245558-99a7\n> CI pushes with GITHUB_TOKEN=" + token + "\n<!-- tags: ci | created: 2026-02-04 -->\n"
	if err := os.WriteFile(src, []byte(ralph), 0o644); err != nil {
		t.Fatal(err)
	}
	mem := filepath.Join(repo, ".agent", "memories.md")
	before := readFile(t, mem)
	stderr := refused(t, env, repo, "import", src)
	checkRefusal(t, stderr, "github-pat", "content line 1", token)
	if !strings.Contains(stderr, "mem-1770245558-99a7") {
		t.Errorf("the refusal does not name the entry:\n%s", stderr)
	}
	if got := readFile(t, mem); got != before {
		t.Fatalf("a refused import changed the memory:\n%s", got)
	}
	memsyncOut(t, env, repo, "import", "--allow-secret", src)
	got := readFile(t, mem)
	if !strings.Contains(got, "Retry with backoff") || !strings.Contains(got, "- Secret-Allowed: github-pat") {
		t.Errorf("import --allow-secret:\n%s", got)
	}
}

// TestRestoreSecret: an archived entry with a secret written into the
// archive by hand stays archived; --allow-secret brings it back, marked.
func TestRestoreSecret(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	id := strings.TrimSpace(memsyncIn(t, env, repo, "add", "Slack alerts go to #ops"))
	memsyncOut(t, env, repo, "archive", id)
	archive := filepath.Join(repo, ".agent", "archive", "memories.md")
	token := fakesecret.Key(3, "xoxb-", "0123456789", 12) + fakesecret.Key(4, "-", "0123456789", 13) + fakesecret.Key(5, "-", alnumChars, 24)
	hand := strings.Replace(readFile(t, archive), "- Content: Slack alerts go to #ops", "- Content: Slack alerts go to #ops with "+token, 1)
	if err := os.WriteFile(archive, []byte(hand), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr := refused(t, env, repo, "restore", id)
	checkRefusal(t, stderr, "slack-bot-token", "content line 1", token)
	if got := readFile(t, archive); got != hand {
		t.Fatalf("a refused restore changed the archive:\n%s", got)
	}
	memsyncOut(t, env, repo, "restore", "--allow-secret", id)
	if got := readFile(t, filepath.Join(repo, ".agent", "memories.md")); !strings.Contains(got, "- Secret-Allowed: slack-bot-token") {
		t.Errorf("restore --allow-secret:\n%s", got)
	}
}

// TestFoldWithholdsSecret: linking a worktree whose copy of the memory
// diverged folds its clean entries in, but not one holding a secret: that
// one stays in the kept copy, and the warning names it, the rule and where
// it is kept.
func TestFoldWithholdsSecret(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	memsyncOut(t, env, repo, "add", "shared entry")
	wt := filepath.Join(filepath.Dir(repo), "wt")
	gitRun(t, env, repo, "worktree", "add", "-q", wt)
	copyPath := filepath.Join(wt, ".agent", "memories.md")
	if err := os.MkdirAll(filepath.Dir(copyPath), 0o755); err != nil {
		t.Fatal(err)
	}
	key := fakesecret.Key(6, "glpat-", alnumChars, 20)
	text := readFile(t, filepath.Join(repo, ".agent", "memories.md")) +
		"\n## Fix: flaky test\n- Date: 2026-01-02\n- ID: clean0000001\n- Content: raise the lock timeout in TestLock\n" +
		"\n## Mirror\n- Date: 2026-01-02\n- ID: leak00000001\n- Content: the mirror pushes with " + key + "\n"
	if err := os.Remove(copyPath); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr := memsyncOut(t, env, wt, "worktree", "link")
	mem := readFile(t, filepath.Join(repo, ".agent", "memories.md"))
	if !strings.Contains(mem, "raise the lock timeout") {
		t.Errorf("the clean entry was not folded in:\n%s", mem)
	}
	if strings.Contains(mem, key) || strings.Contains(mem, "leak00000001") {
		t.Errorf("the entry with a secret was folded in:\n%s", mem)
	}
	for _, want := range []string{"leak00000001", "gitlab-pat", "not folded"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the warning does not say %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, key) {
		t.Errorf("the warning prints the secret:\n%s", stderr)
	}
	backups, _ := filepath.Glob(copyPath + ".bak-*")
	if len(backups) != 1 || !strings.Contains(readFile(t, backups[0]), key) {
		t.Errorf("the withheld entry is not kept in a backup beside the copy: %v", backups)
	}
	for _, b := range backups {
		if !strings.Contains(stderr, b) {
			t.Errorf("the warning does not name the backup %s:\n%s", b, stderr)
		}
	}
}

// TestMCPSaveSecret: save_to_memory refuses a secret with a tool error that
// names the rule, the memory unchanged; allow_secret saves it, marked.
func TestMCPSaveSecret(t *testing.T) {
	env := append(testGitEnv(t), "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := newRepo(t, env)
	cs := startMCP(t, env, repo)
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "tokens are read from the environment"}, nil)
	mem := filepath.Join(repo, ".agent", "memories.md")
	before := readFile(t, mem)
	key := fakesecret.Key(7, "sk_live_", alnumChars, 24)
	msg := call(t, cs, "save_to_memory", map[string]any{"content": "payments test used " + key}, nil)
	if !strings.Contains(msg, "stripe-access-token") || !strings.Contains(msg, "allow_secret") || strings.Contains(msg, key) {
		t.Errorf("save_to_memory refusal: %q", msg)
	}
	if got := readFile(t, mem); got != before {
		t.Fatalf("a refused save changed the memory:\n%s", got)
	}
	var out struct {
		Entry struct{ Fields map[string]string }
	}
	mustCall(t, cs, "save_to_memory", map[string]any{"content": "payments test used " + key, "allow_secret": true}, &out)
	if out.Entry.Fields["Secret-Allowed"] != "stripe-access-token" {
		t.Errorf("allow_secret: fields %v", out.Entry.Fields)
	}
}

// TestSecretInTypeRefused: a key in the type part of a heading is found as
// written, before it is lower-cased: add -t KEY and the MCP save refuse it
// (exit 5, the memory unchanged, the key never printed); a hand-written
// heading "## KEY: deploy notes", and a stored type respelled by hand into
// the key, are not snapshotted, and sync pushes nothing of them.
func TestSecretInTypeRefused(t *testing.T) {
	env, root, remote := bareRemote(t)
	env = append(env, "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := filepath.Join(root, "a")
	gitRun(t, env, root, "clone", "-q", remote, repo)
	memsyncIn(t, env, repo, "add", "the build needs go 1.24")
	mem := filepath.Join(repo, ".agent", "memories.md")
	before := readFile(t, mem)
	key := fakesecret.AWSKey(31)

	stderr := refused(t, env, repo, "add", "deploy notes", "-t", key)
	checkRefusal(t, stderr, "aws-access-token", "at type line 1", key)
	if got := readFile(t, mem); got != before {
		t.Fatalf("a refused add changed the memory:\n%s", got)
	}
	cs := startMCP(t, env, repo)
	msg := call(t, cs, "save_to_memory", map[string]any{"content": "deploy notes", "type": key}, nil)
	if !strings.Contains(msg, "aws-access-token") || strings.Contains(msg, key) {
		t.Errorf("save_to_memory with the key as type: %q", msg)
	}
	if got := readFile(t, mem); got != before {
		t.Fatalf("a refused save changed the memory:\n%s", got)
	}
	memsyncIn(t, env, repo, "snapshot")
	memsyncIn(t, env, repo, "sync")

	appendByHand(t, repo, "\n## "+key+": deploy notes\n- ID: handkey00001\n- Content: the deploy user\n")
	stderr = refused(t, env, repo, "snapshot")
	for _, want := range []string{"handkey00001", "aws-access-token", "type line 1"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("snapshot's refusal does not say %q:\n%s", want, stderr)
		}
	}
	refused(t, env, repo, "sync")
	if holds(t, env, remote, key, "--all") || holds(t, env, filepath.Join(repo, ".git"), key, "--all") {
		t.Fatal("the key was snapshotted or pushed")
	}

	// The same entry stored with its type lower-cased, then respelled by hand.
	lower := strings.ToLower(key)
	text := strings.Replace(readFile(t, mem), "## "+key+":", "## "+lower+":", 1)
	if err := os.WriteFile(mem, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	memsyncIn(t, env, repo, "snapshot")
	if err := os.WriteFile(mem, []byte(strings.Replace(text, "## "+lower+":", "## "+key+":", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	refused(t, env, repo, "snapshot")
	refused(t, env, repo, "sync")
	if holds(t, env, remote, key, "--all") || holds(t, env, filepath.Join(repo, ".git"), key, "--all") {
		t.Fatal("the respelled type was snapshotted or pushed")
	}
}

// TestWorkerMayNotAllowSecret: a worker may not waive the secret gate: over
// a real worker-role MCP server and on the command line (--role worker,
// MEMSYNC_ROLE=worker), a secret is refused without offering the override,
// the override itself is refused, nothing reaches the memory, and sync
// pushes nothing of it.
func TestWorkerMayNotAllowSecret(t *testing.T) {
	env, root, remote := bareRemote(t)
	env = append(env, "MEMSYNC_GLOBAL_DIR="+t.TempDir())
	repo := filepath.Join(root, "a")
	gitRun(t, env, root, "clone", "-q", remote, repo)
	memsyncIn(t, env, repo, "add", "the build needs go 1.24")
	mem := filepath.Join(repo, ".agent", "memories.md")
	before := readFile(t, mem)
	key := fakesecret.AWSKey(32)
	content := "deploy user\naws_access_key_id = " + key
	offers := func(msg string) bool {
		return strings.Contains(msg, "allow_secret") || strings.Contains(msg, "allow-secret") || strings.Contains(msg, "Secret-Allowed")
	}

	cs := startMCP(t, env, repo, "--role", "worker")
	msg := call(t, cs, "save_to_memory", map[string]any{"content": content}, nil)
	if !strings.Contains(msg, "aws-access-token") || offers(msg) || strings.Contains(msg, key) {
		t.Errorf("a worker's save_to_memory refusal: %q", msg)
	}
	msg = call(t, cs, "save_to_memory", map[string]any{"content": content, "allow_secret": true}, nil)
	if !strings.Contains(msg, "worker") || strings.Contains(msg, key) {
		t.Errorf("a worker's save_to_memory with allow_secret: %q", msg)
	}
	if got := readFile(t, mem); got != before {
		t.Fatalf("a worker's refused save changed the memory:\n%s", got)
	}

	for _, args := range [][]string{{"--role", "worker", "add", content}, {"add", content, "--role", "worker"}} {
		stderr := refused(t, env, repo, args...)
		if !strings.Contains(stderr, "aws-access-token") || offers(stderr) {
			t.Errorf("memsync %v: the refusal offers the override or names no rule:\n%s", args[:len(args)-1], stderr)
		}
	}
	stderr := refused(t, env, repo, "--role", "worker", "add", "--allow-secret", content)
	if !strings.Contains(stderr, "worker") || strings.Contains(stderr, key) {
		t.Errorf("add --allow-secret as a worker:\n%s", stderr)
	}
	stderr = refused(t, append(env, "MEMSYNC_ROLE=worker"), repo, "add", "--allow-secret", content)
	if !strings.Contains(stderr, "worker") {
		t.Errorf("add --allow-secret with MEMSYNC_ROLE=worker:\n%s", stderr)
	}
	if got := readFile(t, mem); got != before {
		t.Fatalf("a worker's refused add changed the memory:\n%s", got)
	}
	memsyncIn(t, env, repo, "sync")
	if holds(t, env, remote, key, "--all") {
		t.Fatal("the key was pushed")
	}
}
