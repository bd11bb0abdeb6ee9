// Package gitconfig reads git's configuration files: the one reader of git
// config in memsync. It reads files only (no git is spawned) and does not
// follow include.path or includeIf.
//
// Keys are written "section.name" or "section.subsection.name". Section and
// name are case-insensitive; a subsection written in quotes
// ([remote "Origin"]) keeps its case, one written in the deprecated dotted
// form ([remote.Origin]) does not, as in git. When a key is set more than
// once, the last assignment wins (Get); Subsections lists them all.
package gitconfig

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/memsync/memsync/internal/fsutil"
)

// Config is a set of parsed configuration values. The zero value is not
// usable; start from New, Parse, Repo or Effective.
type Config struct {
	vals map[string]value
	all  []assignment // every assignment, in the order read (Subsections)
}

// assignment is one "key = value" line, its key canonical.
type assignment struct {
	key string
	v   value
}

type value struct {
	s       string
	noValue bool // "key" on its own line, which git reads as true
}

// New returns an empty Config.
func New() *Config { return &Config{vals: map[string]value{}} }

// Parse returns the configuration text b parsed; what it cannot understand
// is skipped.
func Parse(b []byte) *Config {
	c := New()
	c.parse(b)
	return c
}

// Repo reads the repository's own configuration the way git reads it for
// the worktree whose git dir is gitDir: <commonDir>/config, overlaid with
// <gitDir>/config.worktree when extensions.worktreeConfig is on. Pass
// commonDir as gitDir for the main worktree's view. Missing or unreadable
// files count as empty; an empty commonDir reads none (no repository).
func Repo(commonDir, gitDir string) *Config {
	c := New()
	if commonDir == "" {
		return c
	}
	c.ReadFile(filepath.Join(commonDir, "config"))
	if on, _ := c.Bool("extensions.worktreeConfig"); on {
		c.ReadFile(filepath.Join(gitDir, "config.worktree"))
	}
	return c
}

// Effective reads what `git --git-dir=GITDIR config --get` sees, apart
// from includes and variables given on git's command line: the system file
// (GIT_CONFIG_SYSTEM, else /etc/gitconfig; none with GIT_CONFIG_NOSYSTEM),
// the global files (GIT_CONFIG_GLOBAL, else $XDG_CONFIG_HOME/git/config and
// ~/.gitconfig), then Repo(commonDir, gitDir).
func Effective(commonDir, gitDir string) *Config {
	c := New()
	if off, _ := parseBool(os.Getenv("GIT_CONFIG_NOSYSTEM"), false); !off {
		if p, ok := os.LookupEnv("GIT_CONFIG_SYSTEM"); ok {
			c.ReadFile(p)
		} else {
			c.ReadFile("/etc/gitconfig")
		}
	}
	if p, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		c.ReadFile(p)
	} else {
		home, _ := os.UserHomeDir()
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			c.ReadFile(filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			c.ReadFile(filepath.Join(home, ".gitconfig"))
		}
	}
	r := Repo(commonDir, gitDir)
	for k, v := range r.vals {
		c.vals[k] = v
	}
	c.all = append(c.all, r.all...)
	return c
}

// ReadFile parses the file at path into c, over what c holds. A missing or
// unreadable file counts as empty, and so does anything but a regular file
// of at most maxFile bytes (a config linked to /dev/zero or a pipe is never
// read: git itself reads one as a bad line 1).
func (c *Config) ReadFile(path string) {
	if path == "" {
		return
	}
	if b, err := fsutil.ReadFile(path, maxFile); err == nil {
		c.parse(b)
	}
}

// maxFile bounds the size of a config file read.
const maxFile = 64 << 20

// Get returns the key's value; ok is false when it is not set. A key set
// without "=" has the value "".
func (c *Config) Get(key string) (string, bool) {
	v, ok := c.vals[canonKey(key)]
	return v.s, ok
}

// Bool returns the key's value as git interprets a boolean (true/yes/on,
// false/no/off/"", or an integer; a key without "=" is true). ok is false
// when the key is unset or not a boolean.
func (c *Config) Bool(key string) (val, ok bool) {
	v, set := c.vals[canonKey(key)]
	if !set {
		return false, false
	}
	return parseBool(v.s, v.noValue)
}

// SharedRepository reads core.sharedRepository as git does (git-config(1),
// git's git_config_perm), in git's encoding (fsutil.Shared): 0 when unset,
// "umask" or false; 0660 for "group" or true (also the key on its own, and
// the old 1); 0664 for "all", "world" or "everybody" (also 2); -(0xxx & 0666)
// for an octal mode 0xxx, whose owner must read and write (git refuses
// another, and so does SharedRepository).
func (c *Config) SharedRepository() (int, error) {
	v, set := c.vals[canonKey("core.sharedRepository")]
	switch {
	case !set:
		return 0, nil
	case v.noValue:
		return 0o660, nil
	}
	switch v.s {
	case "umask":
		return 0, nil
	case "group":
		return 0o660, nil
	case "all", "world", "everybody":
		return 0o664, nil
	}
	num := strings.TrimLeft(v.s, " \t\n\v\f\r") // as strtol(3) reads it
	n, err := strconv.ParseInt(num, 8, 32)
	if num == "" {
		n, err = 0, nil
	}
	if err != nil {
		b, ok := parseBool(v.s, false)
		if !ok {
			return 0, fmt.Errorf("core.sharedRepository = %q is no value git knows: umask, group, all, world, everybody, true, false or an octal mode such as 0660", v.s)
		}
		if b {
			return 0o660, nil
		}
		return 0, nil
	}
	switch n {
	case 0:
		return 0, nil
	case 1:
		return 0o660, nil
	case 2:
		return 0o664, nil
	}
	if n&0o600 != 0o600 {
		return 0, fmt.Errorf("core.sharedRepository = %s: the owner of files must always have read and write permissions (git refuses it too)", v.s)
	}
	return -int(n & 0o666), nil
}

// Path returns the key's value as `git config --type=path` does: a leading
// "~/" or "~user/" is expanded to the home directory. ok is false when the
// key is unset or its value is empty.
func (c *Config) Path(key string) (string, bool) {
	v, ok := c.Get(key)
	if !ok || v == "" {
		return "", false
	}
	if !strings.HasPrefix(v, "~") {
		return v, true
	}
	name, rest, _ := strings.Cut(v[1:], "/")
	var home string
	if name == "" {
		home, _ = os.UserHomeDir()
	} else if u, err := user.Lookup(name); err == nil {
		home = u.HomeDir
	}
	if home == "" {
		return v, true
	}
	return filepath.Join(home, rest), true
}

// canonKey lower-cases a key's section and name, keeping the subsection.
func canonKey(key string) string {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}

func parseBool(s string, noValue bool) (val, ok bool) {
	if noValue {
		return true, true
	}
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off", "":
		return false, true
	}
	if n, err := strconv.ParseInt(s, 0, 64); err == nil {
		return n != 0, true
	}
	return false, false
}

// parse reads config text into c, skipping what it cannot understand.
func (c *Config) parse(b []byte) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), len(b)+1)
	section := ""
	var pending string // a value line continued with a trailing backslash
	for sc.Scan() {
		line := pending + strings.TrimSuffix(sc.Text(), "\r")
		pending = ""
		s := strings.TrimLeft(line, " \t")
		if s == "" || s[0] == '#' || s[0] == ';' {
			continue
		}
		if s[0] == '[' {
			name, rest, ok := parseSectionHeader(s)
			if !ok {
				section = ""
				continue
			}
			section = name
			s = strings.TrimLeft(rest, " \t")
			if s == "" || s[0] == '#' || s[0] == ';' {
				continue
			}
		}
		if section == "" {
			continue
		}
		i := 0
		for i < len(s) && (isKeyChar(s[i]) || s[i] == '-') {
			i++
		}
		if i == 0 {
			continue
		}
		key := section + "." + strings.ToLower(s[:i])
		rest := strings.TrimLeft(s[i:], " \t")
		if rest == "" || rest[0] == '#' || rest[0] == ';' {
			c.set(key, value{noValue: true})
			continue
		}
		if rest[0] != '=' {
			continue
		}
		val, cont := parseValue(rest[1:])
		if cont {
			pending = line[:len(line)-1] // drop the backslash, join with the next line
			continue
		}
		c.set(key, value{s: val})
	}
}

// set records an assignment of key: the value Get returns from now on,
// and one more for Subsections.
func (c *Config) set(key string, v value) {
	c.vals[key] = v
	c.all = append(c.all, assignment{key, v})
}

// Subsections returns the subsections that set section.<subsection>.name,
// in the order git reads them, and every value each one sets, in order:
// the values of a key git reads more than once (remote.<name>.fetch).
func (c *Config) Subsections(section, name string) (subs []string, vals map[string][]string) {
	pre, suf := strings.ToLower(section)+".", "."+strings.ToLower(name)
	vals = map[string][]string{}
	for _, a := range c.all {
		sub, ok := strings.CutPrefix(a.key, pre)
		if ok {
			sub, ok = strings.CutSuffix(sub, suf)
		}
		if !ok || sub == "" {
			continue
		}
		if _, seen := vals[sub]; !seen {
			subs = append(subs, sub)
		}
		vals[sub] = append(vals[sub], a.v.s)
	}
	return subs, vals
}

// parseSectionHeader parses "[section]", "[section "sub"]" or
// "[section.sub]", returning the key prefix (section lower-cased; a quoted
// subsection as written, a dotted one lower-cased) and the rest of the line
// after "]".
func parseSectionHeader(s string) (name, rest string, ok bool) {
	end := strings.IndexByte(s, ']')
	// A quoted subsection may contain "]".
	if q := strings.IndexByte(s, '"'); q >= 0 && (end < 0 || q < end) {
		var sub strings.Builder
		i := q + 1
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			sub.WriteByte(s[i])
		}
		if i >= len(s) {
			return "", "", false
		}
		after := strings.TrimLeft(s[i+1:], " \t")
		if !strings.HasPrefix(after, "]") {
			return "", "", false
		}
		sect := strings.TrimSpace(s[1:q])
		if sect == "" {
			return "", "", false
		}
		return strings.ToLower(sect) + "." + sub.String(), after[1:], true
	}
	if end < 0 {
		return "", "", false
	}
	sect := strings.TrimSpace(s[1:end])
	if sect == "" {
		return "", "", false
	}
	// [section.sub] (deprecated): the subsection is case-insensitive.
	return strings.ToLower(sect), s[end+1:], true
}

// parseValue parses the text after "=", handling quotes, escapes and
// comments. cont reports a trailing backslash (the value continues on the
// next line).
func parseValue(s string) (val string, cont bool) {
	var b strings.Builder
	quoted := false
	spaces := 0 // unquoted whitespace seen but not yet written
	started := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case !quoted && (ch == '#' || ch == ';'):
			return b.String(), false
		case !quoted && (ch == ' ' || ch == '\t'):
			if started {
				spaces++
			}
			continue
		}
		if spaces > 0 {
			b.WriteString(strings.Repeat(" ", spaces))
			spaces = 0
		}
		started = true
		switch ch {
		case '"':
			quoted = !quoted
		case '\\':
			if i+1 >= len(s) {
				return "", true
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			default:
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), false
}

func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
