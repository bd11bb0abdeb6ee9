// Package provenance says who wrote a memory entry and where: the git
// author, the branch and worktree, the commit HEAD was at, and the agent or
// loop when one is known. Every front door records it at write time as
// bullets of the entry (Author, Branch, Worktree, Commit, Agent; Edited for
// the last edit), so both dialects carry it. It reads files only: no git
// process is spawned, so an add stays as cheap as it was.
package provenance

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitconfig"
	"github.com/memsync/memsync/memfile"
)

// The bullets provenance is kept in ("- Author: Jane Doe <jane@example.com>").
const (
	AuthorField   = "Author"   // the git user: "Name <email>"
	BranchField   = "Branch"   // the branch checked out ("" when detached)
	WorktreeField = "Worktree" // the worktree, relative to the primary ("." for it)
	CommitField   = "Commit"   // the commit HEAD was at (full hash)
	AgentField    = "Agent"    // the agent or loop that wrote it
	EditedField   = "Edited"   // the last edit: "<RFC 3339 UTC time> <author>"
	SourceField   = "Source"   // the agent an MCP client or the Go agent API's recorder named; read as the agent when no Agent bullet is there
)

// where are the bullets that say where an entry was written; an entry
// holding any of them has provenance (Has).
var where = [...]string{AuthorField, BranchField, WorktreeField, CommitField, AgentField}

// Has tells whether the entry records where it was written.
func Has(e *memfile.Entry) bool {
	for _, k := range where {
		if e.Field(k) != "" {
			return true
		}
	}
	return false
}

// Where names the repository and worktree a write happens in. Empty dirs
// mean no repository (the global layer): then only the author and the
// agent are known.
type Where struct {
	CommonDir string // the common git dir
	GitDir    string // the worktree's own git dir
	Primary   string // the primary worktree's top ("" for a bare repository)
	WorkTree  string // the worktree's top
}

// Info is the provenance of one write.
type Info struct {
	Author, Branch, Worktree, Commit, Agent string
}

// Current is the provenance of a write made now in w by this process:
// getenv gives GIT_AUTHOR_NAME/EMAIL (else user.name and user.email of the
// git config git would read there) and the agent (AgentFromEnv).
func Current(w Where, getenv func(string) string) Info {
	i := Info{Author: Author(w.CommonDir, w.GitDir, getenv), Agent: AgentFromEnv(getenv)}
	if w.CommonDir == "" || w.GitDir == "" {
		return i
	}
	i.Worktree = worktreeName(w.Primary, w.WorkTree)
	i.Branch, i.Commit = head(w.CommonDir, w.GitDir)
	return i
}

// AgentFromEnv is the agent or loop named by the environment:
// MEMSYNC_AGENT, else RALPH_LOOP_ID (the loop ralph-orchestrator runs).
func AgentFromEnv(getenv func(string) string) string {
	for _, k := range []string{"MEMSYNC_AGENT", "RALPH_LOOP_ID"} {
		if v := oneLine(getenv(k)); v != "" {
			return v
		}
	}
	return ""
}

// Author is the git user as git names the author of a commit made in the
// repository: GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL, else user.name and
// user.email of the configuration (system, global, repository, worktree;
// only system and global for an empty commonDir). "" when neither is set.
func Author(commonDir, gitDir string, getenv func(string) string) string {
	var cfg *gitconfig.Config
	pick := func(env, key string) string {
		if v := oneLine(getenv(env)); v != "" {
			return v
		}
		if cfg == nil {
			cfg = gitconfig.Effective(commonDir, gitDir)
		}
		v, _ := cfg.Get(key)
		return oneLine(v)
	}
	clean := strings.NewReplacer("<", "", ">", "").Replace
	name, email := clean(pick("GIT_AUTHOR_NAME", "user.name")), clean(pick("GIT_AUTHOR_EMAIL", "user.email"))
	switch {
	case name != "" && email != "":
		return name + " <" + email + ">"
	case email != "":
		return "<" + email + ">"
	}
	return name
}

// Stamp records i on an entry that has no provenance yet (see Has), as
// Fill does, and reports whether it did.
func (i Info) Stamp(e *memfile.Entry) bool {
	if Has(e) {
		return false
	}
	i.Fill(e)
	return true
}

// Fill records each part of i the entry has no bullet for; the agent only
// when the entry names none (an Agent or Source bullet).
func (i Info) Fill(e *memfile.Entry) {
	set := func(k, v string) {
		if v != "" && e.Field(k) == "" {
			e.SetField(k, v)
		}
	}
	set(AuthorField, i.Author)
	set(BranchField, i.Branch)
	set(WorktreeField, i.Worktree)
	set(CommitField, i.Commit)
	if e.Field(SourceField) == "" {
		set(AgentField, i.Agent)
	}
}

// Edited is the Edited bullet of an edit made at t by author ("" when not
// known): "2026-05-01T10:00:00Z Jane Doe <jane@example.com>".
func Edited(t time.Time, author string) string {
	return strings.TrimSpace(t.UTC().Format(time.RFC3339) + " " + author)
}

// SplitEdited splits an Edited bullet into its time and author.
func SplitEdited(v string) (at, by string) {
	at, by, _ = strings.Cut(strings.TrimSpace(v), " ")
	return at, strings.TrimSpace(by)
}

// Agent is the agent that wrote e: its Agent bullet, else its Source.
func Agent(e *memfile.Entry) string {
	if a := e.Field(AgentField); a != "" {
		return a
	}
	return e.Field(SourceField)
}

// GitDir is the git dir of the worktree whose top is top: top/.git, or the
// folder a .git file names ("gitdir: …"); "" when neither is there.
func GitDir(top string) string {
	dot := filepath.Join(top, ".git")
	fi, err := os.Lstat(dot)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return dot
	}
	b, err := fsutil.ReadFile(dot, 4096)
	if err != nil {
		return ""
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return ""
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(top, dir)
	}
	return dir
}

// worktreeName is the worktree relative to the primary ("." for the
// primary itself), else its folder's name: never an absolute local path,
// as snapshot trailers name it.
func worktreeName(primary, wt string) string {
	if wt == "" {
		return ""
	}
	if primary != "" {
		if rel, err := filepath.Rel(primary, wt); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(wt)
}

// head reads the branch and commit of the worktree's HEAD from files: the
// HEAD file, the loose ref, else packed-refs. During a rebase (HEAD
// detached) the branch is the one being rebased.
func head(commonDir, gitDir string) (branch, commit string) {
	b, err := fsutil.ReadFile(filepath.Join(gitDir, "HEAD"), 4096)
	if err != nil {
		return "", ""
	}
	h := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(h, "ref: "); ok {
		return strings.TrimPrefix(ref, "refs/heads/"), resolveRef(commonDir, gitDir, ref)
	}
	if isHash(h) {
		commit = h
	}
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if b, err := fsutil.ReadFile(filepath.Join(gitDir, d, "head-name"), 4096); err == nil {
			branch = strings.TrimPrefix(strings.TrimSpace(string(b)), "refs/heads/")
			break
		}
	}
	return branch, commit
}

// resolveRef is the commit a branch ref names: its loose file (in the
// worktree's git dir for a per-worktree ref, else in the common dir), else
// its line in packed-refs; "" for an unborn branch.
func resolveRef(commonDir, gitDir, ref string) string {
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return ""
	}
	for _, dir := range []string{gitDir, commonDir} {
		if b, err := fsutil.ReadFile(filepath.Join(dir, filepath.FromSlash(ref)), 4096); err == nil {
			if h := strings.TrimSpace(string(b)); isHash(h) {
				return h
			}
		}
	}
	f, err := os.Open(filepath.Join(commonDir, "packed-refs"))
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if h, name, ok := strings.Cut(sc.Text(), " "); ok && name == ref && isHash(h) {
			return h
		}
	}
	return ""
}

// isHash tells a full SHA-1 or SHA-256 object name in hex.
func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// oneLine is v trimmed, with control characters (a line break in a
// variable) dropped: a bullet holds one line of printable text.
func oneLine(v string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if memfile.Control(r) {
			return -1
		}
		return r
	}, v))
}
