package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// agentCLI is the agent CLI that variable names (.ci/run installs them
// from npm, pinned); the test skips, naming it, where it is not set.
func agentCLI(t *testing.T, variable, name string) string {
	t.Helper()
	p := os.Getenv(variable)
	if p == "" {
		t.Skipf("%s is not set: no %s CLI to check the setup with (.ci/run installs it)", variable, name)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s: %v", variable, err)
	}
	return p
}

// agentEnv is a temp HOME with no credentials, and the agents' update
// checks, telemetry and network extras off.
func agentEnv(t *testing.T) ([]string, string) {
	env := testGitEnv(t)
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	env = append(env, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "CODEX_HOME="+filepath.Join(home, ".codex"),
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"GEMINI_CLI_NO_RELAUNCH=1", "NO_COLOR=1", "CI=1")
	return env, home
}

// runAgent runs an agent's CLI in dir, bounded to a minute.
func runAgent(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runSetup runs the real memsync's setup in dir.
func runMemsyncSetup(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(memsyncBinary(t), append([]string{"setup"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("memsync setup %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func seed(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSetupClaudeCLI: after 'memsync setup claude' (local scope), Claude
// Code's own 'claude mcp list' starts memsync's server and reports it
// connected, beside the server that was there; after --remove it lists
// only that one, and the hooks file is as it was.
func TestSetupClaudeCLI(t *testing.T) {
	claude := agentCLI(t, "MEMSYNC_TEST_CLAUDE", "Claude Code")
	env, home := agentEnv(t)
	repo := newRepo(t, env)
	seed(t, filepath.Join(home, ".claude.json"), `{"numStartups": 1, "mcpServers": {"other": {"type": "stdio", "command": "other-mcp-missing", "args": []}}}`+"\n")
	settings := filepath.Join(repo, ".claude", "settings.local.json")
	const settingsBefore = "{\n  \"permissions\": {\"allow\": [\"Bash(ls)\"]}\n}\n"
	seed(t, settings, settingsBefore)

	out := runMemsyncSetup(t, env, repo, "claude")
	t.Log(out)
	list := runAgent(t, env, repo, claude, "mcp", "list")
	t.Log(list)
	if !regexp.MustCompile(`(?m)^memsync: \S+ mcp - ✔ Connected`).MatchString(list) {
		t.Fatalf("claude mcp list does not report memsync connected:\n%s", list)
	}
	if !strings.Contains(list, "other:") {
		t.Fatalf("claude mcp list lost the other server:\n%s", list)
	}
	if s := readString(t, settings); !strings.Contains(s, memsyncBinary(t)+" context --agent claude") || !strings.Contains(s, `"Bash(ls)"`) {
		t.Fatalf("hooks not in %s:\n%s", settings, s)
	}
	if again := runMemsyncSetup(t, env, repo, "claude"); !strings.Contains(again, "nothing changed") {
		t.Fatalf("second setup changed something:\n%s", again)
	}

	runMemsyncSetup(t, env, repo, "claude", "--remove")
	list = runAgent(t, env, repo, claude, "mcp", "list")
	if strings.Contains(list, "memsync") || !strings.Contains(list, "other:") {
		t.Fatalf("after --remove, claude mcp list:\n%s", list)
	}
	if s := readString(t, settings); s != settingsBefore {
		t.Fatalf("%s after --remove:\n%s\nwant:\n%s", settings, s, settingsBefore)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(readString(t, filepath.Join(home, ".claude.json"))), &cfg); err != nil {
		t.Fatal(err)
	}
	if other := cfg["mcpServers"].(map[string]any)["other"]; other == nil {
		t.Fatalf("~/.claude.json lost the other server: %v", cfg)
	}
}

// TestSetupCodexCLI: 'codex mcp list --json' lists memsync's server,
// enabled, after 'memsync setup codex', and not after --remove, which
// gives back config.toml byte for byte (comments too).
func TestSetupCodexCLI(t *testing.T) {
	codex := agentCLI(t, "MEMSYNC_TEST_CODEX", "Codex")
	env, home := agentEnv(t)
	repo := newRepo(t, env)
	config := filepath.Join(home, ".codex", "config.toml")
	// The project is trusted, as Codex asks, so it reads .codex/config.toml there.
	before := "# mine\nmodel = \"o3\" # the model\n\n[mcp_servers.other]\ncommand = \"other\"\nargs = [\"x\"]\n\n[projects.\"" + repo + "\"]\ntrust_level = \"trusted\"\n"
	seed(t, config, before)

	runMemsyncSetup(t, env, repo, "codex")
	servers := codexServers(t, runAgent(t, env, repo, codex, "mcp", "list", "--json"))
	m := servers["memsync"]
	if m == nil || m.Enabled != true || m.Transport.Command != memsyncBinary(t) || strings.Join(m.Transport.Args, " ") != "mcp" {
		t.Fatalf("codex mcp list: memsync is %+v", m)
	}
	if servers["other"] == nil {
		t.Fatal("codex mcp list lost the other server")
	}
	runMemsyncSetup(t, env, repo, "codex", "--remove")
	servers = codexServers(t, runAgent(t, env, repo, codex, "mcp", "list", "--json"))
	if servers["memsync"] != nil || servers["other"] == nil {
		t.Fatalf("after --remove, codex lists %v", servers)
	}
	if s := readString(t, config); s != before {
		t.Fatalf("config.toml after --remove:\n%s\nwant:\n%s", s, before)
	}

	// project scope: the repository's .codex/config.toml runs memsync from PATH
	runMemsyncSetup(t, env, repo, "codex", "--scope", "project")
	servers = codexServers(t, runAgent(t, env, repo, codex, "mcp", "list", "--json"))
	if m := servers["memsync"]; m == nil || !m.Enabled || m.Transport.Command != "memsync" || servers["other"] == nil {
		t.Fatalf("codex mcp list after setup --scope project: %v", servers)
	}
	runMemsyncSetup(t, env, repo, "codex", "--scope", "project", "--remove")
	if _, err := os.Stat(filepath.Join(repo, ".codex", "config.toml")); !os.IsNotExist(err) {
		t.Fatalf(".codex/config.toml after --remove: %v", err)
	}
	if servers = codexServers(t, runAgent(t, env, repo, codex, "mcp", "list", "--json")); servers["memsync"] != nil {
		t.Fatalf("codex mcp list after --remove: %v", servers)
	}
}

type codexServer struct {
	Name      string `json:"name"`
	Enabled   bool   `json:"enabled"`
	Transport struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	} `json:"transport"`
}

func codexServers(t *testing.T, out string) map[string]*codexServer {
	t.Helper()
	// codex may print warnings before the JSON
	i := strings.Index(out, "[")
	if i < 0 {
		t.Fatalf("codex mcp list --json:\n%s", out)
	}
	var list []*codexServer
	if err := json.NewDecoder(strings.NewReader(out[i:])).Decode(&list); err != nil {
		t.Fatalf("codex mcp list --json: %v\n%s", err, out)
	}
	m := map[string]*codexServer{}
	for _, s := range list {
		m[s.Name] = s
	}
	return m
}

// TestSetupGeminiCLI: in a folder the user trusts, 'gemini mcp list'
// connects to memsync's server after 'memsync setup gemini'; after
// --remove it is gone and settings.json (with its comment) is as it was.
func TestSetupGeminiCLI(t *testing.T) {
	gemini := agentCLI(t, "MEMSYNC_TEST_GEMINI", "Gemini CLI")
	env, home := agentEnv(t)
	repo := newRepo(t, env)
	settings := filepath.Join(home, ".gemini", "settings.json")
	const before = "{\n  // mine\n  \"ui\": {\"theme\": \"GitHub\"},\n  \"mcpServers\": {\n    \"other\": {\"command\": \"other-mcp-missing\"}\n  }\n}\n"
	seed(t, settings, before)
	// What the user does when Gemini CLI asks: trust the folder.
	seed(t, filepath.Join(home, ".gemini", "trustedFolders.json"), `{"`+repo+`": "TRUST_FOLDER"}`)

	out := runMemsyncSetup(t, env, repo, "gemini")
	if !strings.Contains(out, "trust") {
		t.Fatalf("setup gemini does not say to trust the folder:\n%s", out)
	}
	list := runAgent(t, env, repo, gemini, "mcp", "list")
	t.Log(list)
	if !regexp.MustCompile(`(?m)memsync: \S+ mcp \(stdio\) - Connected`).MatchString(list) || !strings.Contains(list, "other:") {
		t.Fatalf("gemini mcp list:\n%s", list)
	}
	runMemsyncSetup(t, env, repo, "gemini", "--remove")
	list = runAgent(t, env, repo, gemini, "mcp", "list")
	if strings.Contains(list, "memsync") || !strings.Contains(list, "other:") {
		t.Fatalf("after --remove, gemini mcp list:\n%s", list)
	}
	if s := readString(t, settings); s != before {
		t.Fatalf("settings.json after --remove:\n%s\nwant:\n%s", s, before)
	}
}

// TestSetupHooksRun: the hooks 'memsync setup claude' and 'setup gemini'
// write run, as the agents run them (sh -c COMMAND in the project, the
// hook's JSON on stdin), memsync context, whose answer is the documented
// hook output with the memory the prompt matches.
func TestSetupHooksRun(t *testing.T) {
	env, home := agentEnv(t)
	repo := newRepo(t, env)
	cmd := exec.Command(memsyncBinary(t), "add", "The CI cache is cold after a release: warm it", "-t", "solution")
	cmd.Dir, cmd.Env = repo, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	for agent, settings := range map[string]string{
		"claude": filepath.Join(repo, ".claude", "settings.local.json"),
		"gemini": filepath.Join(home, ".gemini", "settings.json"),
	} {
		runMemsyncSetup(t, env, repo, agent)
		var cfg struct {
			Hooks map[string][]struct {
				Hooks []struct{ Command string } `json:"hooks"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal([]byte(readString(t, settings)), &cfg); err != nil {
			t.Fatal(err)
		}
		event := map[string]string{"claude": "UserPromptSubmit", "gemini": "BeforeAgent"}[agent]
		groups := cfg.Hooks[event]
		if len(groups) != 1 || len(groups[0].Hooks) != 1 {
			t.Fatalf("%s: hooks.%s of %s: %+v", agent, event, settings, cfg.Hooks)
		}
		sh := exec.Command("sh", "-c", groups[0].Hooks[0].Command)
		sh.Dir, sh.Env, sh.Stdin = repo, env, strings.NewReader(promptInput(agent, "s-"+agent, "why is the CI cache cold"))
		out, err := sh.Output()
		if err != nil {
			t.Fatalf("%s's hook %q: %v\n%s", agent, groups[0].Hooks[0].Command, err, out)
		}
		if got := hookContext(t, string(out), event); !strings.Contains(got, "The CI cache is cold after a release") {
			t.Fatalf("%s's hook added:\n%s", agent, got)
		}
	}
}
