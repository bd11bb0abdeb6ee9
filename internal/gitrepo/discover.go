// Package gitrepo finds a git repository without running git (Discover)
// and where its memory lives (Repo: the memory home, the layout); it sits
// at the bottom of the module's graph, so that every package that only
// needs a repository imports it rather than the worktree operations.
package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/gitcmd"
	"github.com/memsync/memsync/internal/gitconfig"
)

// Repo is what discovery found.
//
// All paths are absolute and have their symlinks resolved, so they can be
// compared with one another directly.
type Repo struct {
	GitDir    string // this worktree's git dir (absolute, symlinks resolved): <common>/.git or <common>/worktrees/<name>; for a bare repo the repo dir
	CommonDir string // the common git dir (absolute, resolved)
	WorkTree  string // top of the current worktree ("" when run inside a bare repository or inside the git dir)
	Primary   string // the primary (main) worktree's top; "" for a bare repository
	Bare      bool   // the repository is bare (no primary worktree)
	Home      string // memory home: <CommonDir>/memsync, where git's own commands never reach (see worktree.Heal); <Primary>/<MemDir> when InWorktree
	// InWorktree: the memory is a file in the primary worktree that its
	// branches track (memsync.home=worktree: memsync init --merge-driver,
	// or a tracked file found before memsync first wrote). git then keeps it;
	// git clean and stash leave tracked files alone.
	InWorktree bool
	Layout     Layout // where a worktree keeps the memory: .agent/ (LayoutAgent) or .ralph/agent/ (LayoutRalph)
	LayoutWhy  string // why Discover chose Layout, for people (memsync doctor)
	// Shared is core.sharedRepository: the files and folders memsync
	// creates in the repository (memory files, snapshot objects) get the
	// modes git gives its own.
	Shared fsutil.Shared

	pinned bool // memsync.layout and memsync.home are both set (Pinned), and memsync.primary where needed
	// record: the primary is known but not from git's own files (a
	// separate git dir): Pin records it as memsync.primary.
	record bool
}

// Layout is where a worktree keeps the memory file.
type Layout string

// The layouts.
const (
	// LayoutAgent is memsync's own: <worktree>/.agent/memories.md.
	LayoutAgent Layout = "agent"
	// LayoutRalph is ralph-orchestrator's (v2.3.0 on):
	// <worktree>/.ralph/agent/memories.md.
	LayoutRalph Layout = "ralph"
)

// LayoutKey is the git config key that chooses the layout (agent or ralph)
// for a repository; unset, Discover works it out from the primary worktree.
const LayoutKey = "memsync.layout"

// ParseLayout checks a layout's name.
func ParseLayout(s string) (Layout, error) {
	switch l := Layout(strings.ToLower(strings.TrimSpace(s))); l {
	case LayoutAgent, LayoutRalph:
		return l, nil
	}
	return "", fmt.Errorf("worktree: %s=%q: the layout is agent (.agent/memories.md) or ralph (.ralph/agent/memories.md)", LayoutKey, s)
}

// MemDir is the folder of the memory file in a worktree, relative to its
// top, with slashes: ".agent" or ".ralph/agent".
func (r *Repo) MemDir() string {
	if r.Layout == LayoutRalph {
		return ".ralph/agent"
	}
	return ".agent"
}

// RelFile is the memory file relative to a worktree's top, with slashes
// (what git names it): ".agent/memories.md" or ".ralph/agent/memories.md".
func (r *Repo) RelFile() string { return r.MemDir() + "/memories.md" }

// WorktreeFile is the memory file of the worktree whose top is wt.
func (r *Repo) WorktreeFile(wt string) string {
	return filepath.Join(wt, filepath.FromSlash(r.RelFile()))
}

// chooseLayout decides where the memory lives: the git config memsync.layout
// when set, else ralph's file when the primary has one (or has .ralph/ and
// no .agent/memories.md), else .agent/.
func (r *Repo) chooseLayout(cfg *gitconfig.Config) error {
	if v, ok := cfg.Get(LayoutKey); ok {
		l, err := ParseLayout(v)
		if err != nil {
			return err
		}
		r.Layout, r.LayoutWhy = l, "set by git config "+LayoutKey+"="+v
		return nil
	}
	r.Layout, r.LayoutWhy = LayoutAgent, "memsync's default"
	if r.Primary == "" {
		r.LayoutWhy += " (a bare repository; git config " + LayoutKey + " chooses)"
		return nil
	}
	ralph := filepath.Join(r.Primary, ".ralph", "agent", "memories.md")
	agent := filepath.Join(r.Primary, ".agent", "memories.md")
	if _, err := os.Lstat(ralph); err == nil {
		r.Layout, r.LayoutWhy = LayoutRalph, "ralph-orchestrator's "+ralph+" exists"
		return nil
	}
	if fi, err := os.Stat(filepath.Join(r.Primary, ".ralph")); err == nil && fi.IsDir() {
		if _, err := os.Lstat(agent); errors.Is(err, fs.ErrNotExist) {
			r.Layout, r.LayoutWhy = LayoutRalph, "ralph-orchestrator's .ralph/ exists and .agent/memories.md does not"
			return nil
		}
		r.LayoutWhy = ".agent/memories.md exists (beside .ralph/, which has no agent/memories.md)"
		return nil
	}
	if _, err := os.Lstat(agent); err == nil {
		r.LayoutWhy = agent + " exists"
	}
	return nil
}

// HomeKey is the git config key that says where the memory lives:
// "gitdir" (<common git dir>/memsync, the default) or "worktree" (the
// primary worktree's file, which branches track). memsync pins it the first
// time it writes.
const HomeKey = "memsync.home"

// chooseHome decides where the memory lives: the git config memsync.home
// when set; else in the primary worktree when its memory file is a regular
// file that git tracks there (asking git: only until memsync pins the
// choice); else in the git dir.
func (r *Repo) chooseHome(cfg *gitconfig.Config) error {
	r.Home = filepath.Join(r.CommonDir, "memsync")
	if r.Bare {
		return nil
	}
	v, ok := cfg.Get(HomeKey)
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "gitdir":
		return nil
	case "worktree":
		r.InWorktree = true
	case "":
		if ok {
			return nil
		}
		path := r.WorktreeFile(r.Primary)
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && !fileExists(filepath.Join(r.Home, "memories.md")) && Tracked(r, r.Primary) {
			r.InWorktree = true
		}
	default:
		return fmt.Errorf("worktree: %s=%q: the memory lives in the git dir (gitdir) or in the primary worktree's tracked file (worktree)", HomeKey, v)
	}
	if r.InWorktree {
		r.Home = filepath.Join(r.Primary, filepath.FromSlash(r.MemDir()))
	}
	return nil
}

// PrimaryKey is the git config key where memsync records the primary
// worktree of a repository whose git dir is elsewhere (git init or clone
// --separate-git-dir): git records it nowhere a linked worktree can read,
// and git worktree list names the git dir instead.
const PrimaryKey = "memsync.primary"

// ErrNotRepo is returned (wrapped, so use errors.Is) when no git repository
// can be found for a directory.
var ErrNotRepo = errors.New("not inside a git repository")

// ErrOtherRepository is a worktree whose .git names another repository's
// git dir (a copy of a repository keeps its records of the original's
// linked worktrees).
var ErrOtherRepository = errors.New("belongs to another repository")

// WorkDir is the memory folder people see: <Primary>/<MemDir> (its
// memories.md and archive/memories.md are links into Home; memsync.yml is
// read there), or Home in a bare repository.
func (r *Repo) WorkDir() string {
	if r.Bare {
		return r.Home
	}
	return filepath.Join(r.Primary, filepath.FromSlash(r.MemDir()))
}

// MemoryFile returns the path of the shared memory file, Home/memories.md.
func (r *Repo) MemoryFile() string { return filepath.Join(r.Home, "memories.md") }

// ArchiveFile returns the path of the memory archive, Home/archive/memories.md.
func (r *Repo) ArchiveFile() string { return filepath.Join(r.Home, "archive", "memories.md") }

// IsSecondary reports whether the current worktree is a linked (secondary)
// worktree rather than the primary one. It is false when there is no current
// worktree (inside a bare repository or a git dir).
func (r *Repo) IsSecondary() bool { return r.WorkTree != "" && r.WorkTree != r.Primary }

// Discover finds the git repository containing dir ("" means the current
// directory) and its memory home, without running git: it only reads files.
//
// It honours GIT_DIR, GIT_COMMON_DIR, GIT_WORK_TREE and
// GIT_CEILING_DIRECTORIES the way git does; relative values in them are taken
// relative to the process's working directory, as git does. When GIT_DIR is
// set, no upward search for .git happens.
//
// Otherwise Discover walks up from dir looking for a .git directory, a .git
// file ("gitdir: <path>", as used by linked worktrees and submodules), or a
// directory that is itself a git dir (a bare repository, or being inside
// .git), in which case WorkTree is "".
//
// The primary worktree, and with it the memory home, is worked out from the
// common dir, so that every worktree of a repository agrees on it:
// core.bare=true (in <CommonDir>/config, or in <CommonDir>/config.worktree
// under extensions.worktreeConfig) means bare; else core.worktree names it;
// else a common dir named .git sits in it. A git dir elsewhere (git init or
// clone --separate-git-dir, a .git symlink) has its primary where the .git
// file (or link) that leads to it is, found from the primary itself; a
// linked worktree reads it from memsync.primary (PrimaryKey), which memsync
// records on its first write from the primary (worktree.Pin) and believes
// only while that folder's .git still leads to the common dir. Until then,
// and for a bare-style directory, the repository counts as bare.
//
// With GIT_DIR set and GIT_WORK_TREE unset, git takes the working directory
// as the top of the worktree; Discover instead uses the worktree the git dir
// belongs to when dir lies inside it, and dir otherwise.
//
// When no repository is found the error wraps ErrNotRepo and names dir.
func Discover(dir string) (*Repo, error) {
	d := &discovery{}
	absDir, err := d.abs(dir)
	if err != nil {
		return nil, err
	}
	start, err := filepath.EvalSymlinks(absDir)
	if err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	d.known = append(d.known, start)
	w, err := d.findGitDir(absDir, start)
	if err != nil {
		return nil, err
	}
	r := &Repo{GitDir: d.resolve(w.found.path)}
	d.known = append(d.known, r.GitDir)
	if w.hasCommon, err = d.commonDir(r, w.found); err != nil {
		return nil, err
	}
	d.known = append(d.known, r.CommonDir)
	if w.coreWorktree, w.bare, err = d.settings(r, w); err != nil {
		return nil, err
	}
	if r.WorkTree, err = d.currentWorkTree(r, start, w); err != nil {
		return nil, err
	}
	return r, nil
}

// where is what Discover learns on its way to the current worktree.
type where struct {
	found        gitDirInfo
	topHint      string // the folder holding the .git entry that led to the git dir
	inGitDir     bool   // found by being inside the git dir itself
	explicit     bool   // GIT_DIR was set
	hasCommon    bool   // the git dir names a common dir of its own
	coreWorktree string // core.worktree, resolved
	bare         bool   // core.bare
}

// findGitDir finds the git dir: GIT_DIR, else the walk up from start.
func (d *discovery) findGitDir(absDir, start string) (w where, err error) {
	if env := os.Getenv("GIT_DIR"); env != "" {
		w.explicit = true
		p, err := d.abs(env)
		if err != nil {
			return w, err
		}
		w.found, err = explicitGitDir(p)
		return w, err
	}
	w.found, w.topHint, w.inGitDir, err = walkUp(start, d.ceiling(start))
	if err != nil {
		return w, err
	}
	if w.found.path == "" {
		return w, fmt.Errorf("%w: %s (or any of its parent directories)", ErrNotRepo, filepath.Clean(absDir))
	}
	return w, nil
}

// commonDir sets r's common dir: GIT_COMMON_DIR, else the commondir file,
// else GitDir (then hasCommon is false).
func (d *discovery) commonDir(r *Repo, found gitDirInfo) (hasCommon bool, err error) {
	if env := os.Getenv("GIT_COMMON_DIR"); env != "" {
		p, err := d.abs(env)
		if err != nil {
			return true, err
		}
		r.CommonDir = d.resolve(p)
		return true, nil
	}
	if found.commondir != "" {
		r.CommonDir = d.resolve(rawJoin(r.GitDir, found.commondir))
		return true, nil
	}
	r.CommonDir = r.GitDir
	return false, nil
}

// settings reads the repository-wide settings (<CommonDir>/config,
// overlaid with <CommonDir>/config.worktree, the main worktree's, under
// extensions.worktreeConfig) and from them decides the primary worktree,
// the layout and the memory home: from the common dir alone, so every
// worktree of the repository agrees on them. It returns core.worktree
// (resolved) and core.bare.
func (d *discovery) settings(r *Repo, w where) (coreWorktree string, bare bool, err error) {
	cfg := gitconfig.Repo(r.CommonDir, r.CommonDir)
	if wt, ok := cfg.Get("core.worktree"); ok && wt != "" {
		coreWorktree = d.resolve(rawJoin(r.CommonDir, wt))
	}
	bare, _ = cfg.Bool("core.bare")
	shared, err := cfg.SharedRepository()
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", filepath.Join(r.CommonDir, "config"), err)
	}
	r.Shared = fsutil.Shared(shared)
	switch {
	case bare:
		r.Bare = true
	case coreWorktree != "":
		r.Primary = coreWorktree
	case filepath.Base(r.CommonDir) == ".git":
		r.Primary = filepath.Dir(r.CommonDir)
	default:
		r.Primary = d.separatePrimary(r, w, cfg)
		r.Bare = r.Primary == ""
	}
	if err := r.chooseLayout(cfg); err != nil {
		return "", false, err
	}
	if err := r.chooseHome(cfg); err != nil {
		return "", false, err
	}
	_, hasLayout := cfg.Get(LayoutKey)
	_, hasHome := cfg.Get(HomeKey)
	recorded, _ := cfg.Get(PrimaryKey)
	r.pinned = hasLayout && (hasHome || r.Bare) && (!r.record || recorded == r.Primary)
	return coreWorktree, bare, nil
}

// separatePrimary finds the primary worktree of a git dir that is not
// <primary>/.git (the default case of settings): the folder whose .git led
// to it, when Discover came from there (not through GIT_DIR, not from a
// linked worktree); else memsync.primary, if that folder's .git still
// leads to the common dir; else "" (unknown).
func (d *discovery) separatePrimary(r *Repo, w where, cfg *gitconfig.Config) string {
	if !w.explicit && !w.inGitDir && w.found.commondir == "" && w.topHint != "" && os.Getenv("GIT_COMMON_DIR") == "" {
		r.record = true
		return d.resolve(w.topHint)
	}
	p, ok := cfg.Get(PrimaryKey)
	if !ok || p == "" || !filepath.IsAbs(p) {
		return ""
	}
	found, top, inGitDir, err := walkUp(p, filepath.Dir(p))
	if err != nil || found.path == "" || inGitDir || found.commondir != "" || d.resolve(top) != d.resolve(p) || d.resolve(found.path) != r.CommonDir {
		return ""
	}
	r.record = true
	return d.resolve(p)
}

// currentWorkTree finds the top of the current worktree ("" for none).
// Like git, core.bare and core.worktree only apply to the main git dir,
// never to a linked worktree's.
func (d *discovery) currentWorkTree(r *Repo, start string, w where) (string, error) {
	switch {
	case os.Getenv("GIT_WORK_TREE") != "":
		p, err := d.abs(os.Getenv("GIT_WORK_TREE"))
		if err != nil {
			return "", err
		}
		return d.resolve(p), nil
	case w.inGitDir || PathWithin(start, r.GitDir):
		return "", nil
	case !w.hasCommon && w.bare:
		return "", nil
	case !w.hasCommon && w.coreWorktree != "":
		return w.coreWorktree, nil
	case !w.explicit:
		return d.resolve(w.topHint), nil
	}
	// GIT_DIR without GIT_WORK_TREE: git takes the current directory as the
	// top of the worktree. Prefer the worktree the git dir belongs to when
	// dir lies inside it (the usual case in hooks), which gives the same
	// answer at the top and a better one below it.
	if natural := d.naturalWorkTree(r.GitDir, w.hasCommon); natural != "" && PathWithin(start, natural) {
		return natural, nil
	}
	return start, nil
}

// discovery holds what one Discover call has learnt: the process working
// directory (only needed for relative paths) and directories known to be
// free of symlinks, which saves most of the work of resolving paths near
// them.
type discovery struct {
	cwd   string
	known []string // absolute, clean, existing, symlinks resolved
}

// abs makes p absolute against the process working directory; "" means the
// working directory itself. The result is not cleaned, so that ".." keeps
// its meaning in the file system should the working directory be reached
// through a symlink.
func (d *discovery) abs(p string) (string, error) {
	if p != "" && filepath.IsAbs(p) {
		return p, nil
	}
	if d.cwd == "" {
		cwd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("worktree: %w", err)
		}
		d.cwd = cwd
	}
	if p == "" {
		return d.cwd, nil
	}
	return rawJoin(d.cwd, p), nil
}

// resolve returns the absolute path p with symlinks resolved and ".."
// applied in the file system, like filepath.EvalSymlinks, but walks it one
// element at a time and does not stat folders that are known to be resolved
// already (ancestors of d.known). When part of p does not exist, the rest is
// joined lexically.
func (d *discovery) resolve(p string) string {
	vol := filepath.VolumeName(p)
	cur := vol + string(filepath.Separator)
	elems := strings.FieldsFunc(p[len(vol):], isPathSep)
	for i, e := range elems {
		switch e {
		case ".":
			continue
		case "..":
			cur = filepath.Dir(cur) // cur is resolved, so this is its real parent
			continue
		}
		next := filepath.Join(cur, e)
		if d.isKnown(next) {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{cur}, elems[i:]...)...)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(next)
			if err != nil { // dangling
				return filepath.Join(append([]string{cur}, elems[i:]...)...)
			}
			next = target
		}
		cur = next
	}
	return cur
}

// isKnown reports whether p is one of d.known or an ancestor of one.
func (d *discovery) isKnown(p string) bool {
	for _, k := range d.known {
		if PathWithin(k, p) {
			return true
		}
	}
	return false
}

// ceiling returns the deepest GIT_CEILING_DIRECTORIES entry that is a proper
// ancestor of start, or "". Like git, the search never enters it or anything
// above it.
func (d *discovery) ceiling(start string) string {
	env := os.Getenv("GIT_CEILING_DIRECTORIES")
	if env == "" {
		return ""
	}
	best := ""
	for _, c := range filepath.SplitList(env) {
		if c == "" || !filepath.IsAbs(c) {
			continue
		}
		c = d.resolve(c)
		if c != start && PathWithin(start, c) && len(c) > len(best) {
			best = c
		}
	}
	return best
}

// gitDirInfo is a git dir that passed isGitDir.
type gitDirInfo struct {
	path      string // absolute, not resolved
	commondir string // the content of its commondir file, "" if none
}

// walkUp searches start and its parents, up to but excluding ceiling, for a
// repository. It returns the git dir (found.path is "" when there is none),
// the folder whose .git entry led to it (topHint), and whether start lies
// inside the git dir itself.
func walkUp(start, ceiling string) (found gitDirInfo, topHint string, inGitDir bool, err error) {
	for cur := start; ; {
		dotGit := rawJoin(cur, ".git")
		if fi, err := os.Stat(dotGit); err == nil {
			switch {
			case fi.IsDir():
				if info, ok := isGitDir(dotGit); ok {
					return info, cur, false, nil
				}
			case fi.Mode().IsRegular():
				info, err := readGitFile(dotGit)
				return info, cur, false, err
			}
		}
		if info, ok := isGitDir(cur); ok {
			return info, "", true, nil
		}
		parent := filepath.Dir(cur)
		if parent == cur || (ceiling != "" && PathWithin(ceiling, parent)) {
			return gitDirInfo{}, "", false, nil
		}
		cur = parent
	}
}

// explicitGitDir validates the GIT_DIR value p, which may also name a .git
// file.
func explicitGitDir(p string) (gitDirInfo, error) {
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		return readGitFile(p)
	}
	info, ok := isGitDir(p)
	if !ok {
		return info, fmt.Errorf("%w: GIT_DIR=%s is not a git directory", ErrNotRepo, p)
	}
	return info, nil
}

// MaxGitFile bounds the read of a file of git's that memsync reads whole
// (info/exclude, the stash's reflog): one past it, or no regular file (a
// link to /dev/zero), is never read.
const MaxGitFile = 64 << 20

// maxPathFile bounds the read of a file of git's that holds a path (a .git
// file, commondir, gitdir): one never read whole is a link to /dev/zero.
const maxPathFile = 64 << 10

// readGitFile reads a .git file ("gitdir: <path>") and returns the git dir it
// names, which must be a git directory. A relative path is relative to the
// file's folder.
func readGitFile(file string) (gitDirInfo, error) {
	b, err := fsutil.ReadFile(file, maxPathFile)
	if err != nil {
		return gitDirInfo{}, fmt.Errorf("worktree: %w", err)
	}
	rest, ok := bytes.CutPrefix(b, []byte("gitdir: "))
	p := strings.TrimRight(string(rest), " \t\r\n")
	if !ok || p == "" {
		return gitDirInfo{}, fmt.Errorf("%w: invalid gitfile format: %s", ErrNotRepo, file)
	}
	p = rawJoin(filepath.Dir(file), p)
	info, ok := isGitDir(p)
	if !ok {
		return info, fmt.Errorf("%w: %s points to %s, which is not a git directory", ErrNotRepo, file, p)
	}
	return info, nil
}

// isGitDir reports whether d looks like a git dir the way git checks it: a
// HEAD, and objects/ and refs/ in its common dir (d itself, or where its
// commondir file points).
func isGitDir(d string) (gitDirInfo, bool) {
	info := gitDirInfo{path: d}
	if fi, err := os.Lstat(rawJoin(d, "HEAD")); err != nil || fi.IsDir() {
		return info, false
	}
	common := d
	if b, err := fsutil.ReadFile(rawJoin(d, "commondir"), maxPathFile); err == nil {
		if c := strings.TrimRight(string(b), " \t\r\n"); c != "" {
			info.commondir = c
			common = rawJoin(d, c)
		}
	}
	for _, sub := range [...]string{"objects", "refs"} {
		if fi, err := os.Stat(rawJoin(common, sub)); err != nil || !fi.IsDir() {
			return info, false
		}
	}
	return info, true
}

// naturalWorkTree returns the worktree a git dir belongs to, as far as its
// files tell: the folder holding the .git file recorded in a linked git dir's
// gitdir file, or the parent of a git dir named .git.
func (d *discovery) naturalWorkTree(gitDir string, linked bool) string {
	if !linked {
		if filepath.Base(gitDir) == ".git" {
			return filepath.Dir(gitDir)
		}
		return ""
	}
	b, err := fsutil.ReadFile(filepath.Join(gitDir, "gitdir"), maxPathFile)
	if err != nil {
		return ""
	}
	p := strings.TrimRight(string(b), " \t\r\n")
	if p == "" {
		return ""
	}
	return filepath.Dir(d.resolve(rawJoin(gitDir, p)))
}

func isPathSep(r rune) bool { return r < 0x80 && os.IsPathSeparator(byte(r)) }

// rawJoin returns p if it is absolute, else base/p, without cleaning it.
func rawJoin(base, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if base != "" && os.IsPathSeparator(base[len(base)-1]) {
		return base + p
	}
	return base + string(filepath.Separator) + p
}

// PathWithin reports whether p is dir or lies under it. Both must be clean.
func PathWithin(p, dir string) bool {
	if !strings.HasPrefix(p, dir) {
		return false
	}
	if len(p) == len(dir) || os.IsPathSeparator(dir[len(dir)-1]) {
		return true
	}
	return os.IsPathSeparator(p[len(dir)])
}

// ExcludePatterns returns the patterns that keep the memory files out of git
// status in every worktree (a fresh slice each call). They go into the
// common info/exclude (see worktree.EnsureExclude), anchored at each worktree's top.
func ExcludePatterns() []string {
	return []string{
		"/.agent/memories.md",
		"/.agent/memories.md.*",
		"/.agent/.memories.md.tmp-*",
		"/.agent/archive/",
	}
}

// Excludes are the patterns of the repository's layout (ExcludePatterns
// for .agent/; the same files under .ralph/agent/ for ralph's layout). A
// pattern never hides a file git tracks, so a ralph memories.md the
// repository commits stays tracked; one it does not is kept out of git
// status (git add -f starts tracking it).
func (r *Repo) Excludes() []string {
	if r.Layout != LayoutRalph {
		return ExcludePatterns()
	}
	d := "/" + r.MemDir()
	return []string{d + "/memories.md", d + "/memories.md.*", d + "/.memories.md.tmp-*", d + "/archive/"}
}

// Tracked asks git whether the index of the worktree whose top is wt tracks
// r's memory file.
func Tracked(r *Repo, wt string) bool {
	_, err := gitcmd.Output(wt, "ls-files", "--error-unmatch", "--", r.RelFile())
	return err == nil
}

// fileExists tells whether path exists (a dangling link does not).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// WorktreeTop returns the top of the worktree that contains wt, which must
// be a worktree of r's repository. It reads files only, and ignores GIT_DIR
// and the like (a hook's variables describe another worktree).
func WorktreeTop(r *Repo, wt string) (string, error) {
	real, err := filepath.EvalSymlinks(wt)
	if err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	found, top, inGitDir, err := walkUp(real, "")
	if err != nil {
		return "", err
	}
	if found.path == "" || inGitDir || top == "" {
		return "", fmt.Errorf("worktree: %s is not inside a worktree of %s", wt, r.CommonDir)
	}
	d := &discovery{known: []string{real}}
	common := d.resolve(found.path)
	if found.commondir != "" {
		common = d.resolve(rawJoin(common, found.commondir))
	}
	if common != r.CommonDir {
		return "", fmt.Errorf("worktree: %s %w (%s, not %s)", wt, ErrOtherRepository, common, r.CommonDir)
	}
	return d.resolve(top), nil
}

// Pinned tells whether the repository's git config sets both memsync.layout
// and memsync.home (worktree.Pin sets them the first time memsync writes).
func Pinned(r *Repo) bool { return r.pinned }

// RecordPrimary tells whether the primary worktree is known but from
// nothing git keeps (a separate git dir): Pin records it as PrimaryKey.
func RecordPrimary(r *Repo) bool { return r.record }

// SetPinned records whether both keys are set now (after worktree.Pin).
func SetPinned(r *Repo, pinned bool) { r.pinned = pinned }
