package agents

import (
	"os"
	"os/exec"
	"path/filepath"
)

// The agents' files, as their documentation gives them.
var all = []*Agent{claude, codex, gemini, cursor, vscode, windsurf}

// claudeDir is Claude Code's folder of user settings, and its config file.
func (e Env) claudeDir() (dir, config string) {
	if e.ClaudeDir != "" {
		return e.ClaudeDir, filepath.Join(e.ClaudeDir, ".claude.json")
	}
	return filepath.Join(e.Home, ".claude"), filepath.Join(e.Home, ".claude.json")
}

// inRepo is rel under the top, "" outside a repository.
func (e Env) inRepo(rel string) string {
	if e.Top == "" {
		return ""
	}
	return filepath.Join(e.Top, rel)
}

// stdio is an MCP server entry with "type": "stdio" (Claude Code, VS Code).
func stdio(command string, args ...string) any {
	return obj{{"type", "stdio"}, {"command", command}, {"args", args}}
}

func plain(command string, args ...string) any {
	return obj{{"command", command}, {"args", args}}
}

// onPath says why the agent is found: its command on PATH, or one of files.
func onPath(command string, files ...string) string {
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			return f + " exists"
		}
	}
	if command != "" {
		if p, err := exec.LookPath(command); err == nil {
			return p + " is installed"
		}
	}
	return ""
}

var claude = &Agent{
	Name: "claude", Title: "Claude Code", Scopes: []Scope{Local, Project, User},
	server: func(e Env, sc Scope) (string, format, []string) {
		_, config := e.claudeDir()
		switch sc {
		case Project:
			return e.inRepo(".mcp.json"), formatJSON, []string{"mcpServers", "memsync"}
		case User:
			return config, formatJSON, []string{"mcpServers", "memsync"}
		}
		if e.Top == "" {
			return "", formatJSON, nil
		}
		return config, formatJSON, []string{"projects", e.Top, "mcpServers", "memsync"}
	},
	value: func(command string, _ Scope) any { return stdio(command, "mcp") },
	hooks: func(e Env, sc Scope) (string, format) {
		dir, _ := e.claudeDir()
		switch sc {
		case Project:
			return e.inRepo(filepath.Join(".claude", "settings.json")), formatJSON
		case User:
			return filepath.Join(dir, "settings.json"), formatJSON
		}
		return e.inRepo(filepath.Join(".claude", "settings.local.json")), formatJSON
	},
	events:    []string{"SessionStart", "UserPromptSubmit"},
	hookEntry: func(command string) any { return obj{{"hooks", []any{obj{{"type", "command"}, {"command", command}}}}} },
	rules:     "CLAUDE.md",
	exclude: func(sc Scope) []string {
		if sc == Local {
			return []string{"/.claude/settings.local.json"}
		}
		return nil
	},
	todo: func(e Env, sc Scope) []string {
		switch sc {
		case Project:
			return []string{"commit .mcp.json and .claude/settings.json to share them; Claude Code asks each user to approve the project's memsync server the first time ('claude mcp list' shows it)",
				"each user needs memsync on PATH (the project's files run 'memsync', not a path of this machine)"}
		case User:
			return []string{"Claude Code runs memsync's server and hooks in every project from its next session; 'claude mcp list' shows it"}
		}
		return []string{"Claude Code runs memsync's server and hooks in this repository from its next session; 'claude mcp list' shows it",
			"the hooks are in .claude/settings.local.json, your own file (.git/info/exclude keeps it out of git); '/hooks' in Claude Code lists them"}
	},
	found: func(e Env) string {
		dir, config := e.claudeDir()
		return onPath("claude", config, dir)
	},
}

var codex = &Agent{
	Name: "codex", Title: "Codex CLI", Scopes: []Scope{User, Project},
	server: func(e Env, sc Scope) (string, format, []string) {
		if sc == Project {
			return e.inRepo(filepath.Join(".codex", "config.toml")), formatTOML, nil
		}
		return filepath.Join(e.CodexHome, "config.toml"), formatTOML, nil
	},
	rules: "AGENTS.md",
	todo: func(_ Env, sc Scope) []string {
		if sc == Project {
			return []string{"Codex reads .codex/config.toml only in a project it trusts (it asks when it first starts there); 'codex mcp list' shows memsync",
				"commit .codex/config.toml to share it; each user needs memsync on PATH"}
		}
		return []string{"Codex starts memsync's server in the folder it runs in, from its next session; 'codex mcp list' shows it"}
	},
	found: func(e Env) string { return onPath("codex", filepath.Join(e.CodexHome, "config.toml"), e.CodexHome) },
}

var gemini = &Agent{
	Name: "gemini", Title: "Gemini CLI", Scopes: []Scope{User, Project},
	server: func(e Env, sc Scope) (string, format, []string) {
		return geminiSettings(e, sc), formatJSONC, []string{"mcpServers", "memsync"}
	},
	value:  func(command string, _ Scope) any { return plain(command, "mcp") },
	hooks:  func(e Env, sc Scope) (string, format) { return geminiSettings(e, sc), formatJSONC },
	events: []string{"SessionStart", "BeforeAgent"},
	hookEntry: func(command string) any {
		return obj{{"hooks", []any{obj{{"name", "memsync"}, {"type", "command"}, {"command", command}}}}}
	},
	rules: "GEMINI.md",
	todo: func(e Env, sc Scope) []string {
		t := []string{"Gemini CLI runs no MCP server or hook in a folder it does not trust, not even user-level ones: trust the repository when Gemini CLI asks (or with /permissions); 'gemini mcp list' shows memsync"}
		if sc == Project {
			t = append(t, "commit .gemini/settings.json to share it; each user needs memsync on PATH")
		}
		return t
	},
	found: func(e Env) string {
		return onPath("gemini", filepath.Join(e.Home, ".gemini", "settings.json"), filepath.Join(e.Home, ".gemini"))
	},
}

func geminiSettings(e Env, sc Scope) string {
	if sc == Project {
		return e.inRepo(filepath.Join(".gemini", "settings.json"))
	}
	return filepath.Join(e.Home, ".gemini", "settings.json")
}

var cursor = &Agent{
	Name: "cursor", Title: "Cursor", Scopes: []Scope{User, Project},
	server: func(e Env, sc Scope) (string, format, []string) {
		if sc == Project {
			return e.inRepo(filepath.Join(".cursor", "mcp.json")), formatJSONC, []string{"mcpServers", "memsync"}
		}
		return filepath.Join(e.Home, ".cursor", "mcp.json"), formatJSONC, []string{"mcpServers", "memsync"}
	},
	value: func(command string, sc Scope) any {
		if sc == Project {
			return plain(command, "mcp")
		}
		// Cursor fills in ${workspaceFolder}: the server works on the open project's memory.
		return plain(command, "mcp", "-C", "${workspaceFolder}")
	},
	rules: filepath.Join(".cursor", "rules", "memsync.mdc"), own: true,
	front: "---\ndescription: When to save and retrieve memories with memsync\nalwaysApply: true\n---\n\n",
	todo: func(e Env, sc Scope) []string {
		t := []string{"Cursor lists memsync under Settings, MCP from its next start; switch it on there if it is off"}
		if sc == Project {
			t = append(t, "commit .cursor/mcp.json to share it; each user needs memsync on PATH")
		}
		return t
	},
	found: func(e Env) string { return onPath("cursor", filepath.Join(e.Home, ".cursor")) },
}

// vscodeUser is VS Code's folder of user settings.
func vscodeUser(e Env) string {
	if e.GOOS == "darwin" {
		return filepath.Join(e.Home, "Library", "Application Support", "Code", "User")
	}
	return filepath.Join(e.ConfigHome, "Code", "User")
}

var vscode = &Agent{
	Name: "vscode", Title: "GitHub Copilot in VS Code", Scopes: []Scope{User, Project},
	server: func(e Env, sc Scope) (string, format, []string) {
		if sc == Project {
			return e.inRepo(filepath.Join(".vscode", "mcp.json")), formatJSONC, []string{"servers", "memsync"}
		}
		return filepath.Join(vscodeUser(e), "mcp.json"), formatJSONC, []string{"servers", "memsync"}
	},
	value: func(command string, sc Scope) any {
		if sc == Project {
			return stdio(command, "mcp")
		}
		return stdio(command, "mcp", "-C", "${workspaceFolder}")
	},
	rules: filepath.Join(".github", "copilot-instructions.md"),
	todo: func(e Env, sc Scope) []string {
		t := []string{"VS Code asks you to trust memsync's server the first time Copilot's agent mode starts it ('MCP: List Servers' shows it)"}
		if sc == Project {
			t = append(t, "commit .vscode/mcp.json to share it; each user needs memsync on PATH")
		}
		return t
	},
	found: func(e Env) string { return onPath("code", vscodeUser(e)) },
}

var windsurf = &Agent{
	Name: "windsurf", Title: "Windsurf", Scopes: []Scope{User},
	server: func(e Env, _ Scope) (string, format, []string) {
		return filepath.Join(e.Home, ".codeium", "windsurf", "mcp_config.json"), formatJSONC, []string{"mcpServers", "memsync"}
	},
	value: func(command string, _ Scope) any { return plain(command, "mcp") },
	rules: filepath.Join(".windsurf", "rules", "memsync.md"), own: true,
	front: "---\ntrigger: always_on\n---\n\n",
	todo: func(Env, Scope) []string {
		return []string{"refresh the MCP servers in Windsurf's Cascade panel (or restart it)",
			"Windsurf's config is one for all projects: where memsync's tools answer that they are not inside a git repository, add \"-C\", \"/path/to/repo\" to its args"}
	},
	found: func(e Env) string { return onPath("windsurf", filepath.Join(e.Home, ".codeium", "windsurf")) },
}
