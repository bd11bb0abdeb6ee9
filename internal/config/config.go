// Package config reads how memories are used by a loop engine: orch's
// orch.yml block
//
//	memories:
//	  enabled: true
//	  inject: auto        # auto | manual | none
//	  budget: 2000        # tokens (about 4 bytes each); 0 = no limit
//	  filter:
//	    types: [fix, solution]
//	    tags: [api]
//	    recent_days: 30
//
// in the repository root, then .agent/memsync.yml in the memory home (the
// same keys, at the top level or under "memories:"), then the environment
// (MEMSYNC_ENABLED, MEMSYNC_INJECT, MEMSYNC_BUDGET), then flags. A later
// source overrides an earlier one key by key. A bad value or an unknown key
// is an error that names the file, the line and the key.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"gopkg.in/yaml.v3"

	"github.com/memsync/memsync/internal/fsutil"
	"github.com/memsync/memsync/internal/policy"
)

// Mode is how memories reach a prompt.
type Mode string

// The injection modes.
const (
	Auto   Mode = "auto"   // memories are put before the prompt
	Manual Mode = "manual" // the prompt is left as it is; the agent reads memories when it needs them
	None   Mode = "none"   // no memory is read
)

// ParseMode checks a mode name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case Auto, Manual, None:
		return m, nil
	}
	return "", fmt.Errorf("%q is not one of auto, manual, none", s)
}

// DefaultBudget is the injection budget in tokens when none is configured.
const DefaultBudget = 4000

// BytesPerToken is the rough size of a token that budgets are counted in.
const BytesPerToken = 4

// Filter narrows which memories are injected.
type Filter struct {
	Types      []string // only these types (empty: all)
	Tags       []string // only entries with at least one of these tags (empty: all)
	AllTags    []string // only entries with all of these tags (empty: all)
	RecentDays int      // only entries dated within this many days (0: all)
}

// Config is the memories configuration of one repository.
type Config struct {
	Enabled bool
	Inject  Mode
	Budget  int // tokens; 0 = no limit
	Filter  Filter
	// Role, MaxEntries and TTLDays set the role and gc's limits where no
	// flag or environment variable does ("" and 0: not set here).
	Role       string
	MaxEntries int
	TTLDays    int
	// Model is the folder of a Model2Vec model search fuses in ("": none).
	Model string
	// Files are the configuration files that were read, in order.
	Files []string
}

// Default is the configuration when no file sets anything.
func Default() Config {
	return Config{Enabled: true, Inject: Auto, Budget: DefaultBudget}
}

// Error is a configuration error at a place in a file (or in an environment
// variable, with Line 0).
type Error struct {
	File string // file path, or the environment variable's name
	Line int
	Key  string // dotted key, e.g. "memories.inject"
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Key, e.Msg)
}

// Load reads orch.yml in root (if root is not empty) and memsync.yml in the
// memory home (if home is not empty) over the defaults, then the environment.
// memsync.yml must stay within top, the worktree that holds home ("" means
// home itself): a home folder the worktree links out of it is not read
// through. Missing files are no error, nor a file under something that is
// no folder (a .agent that is a file: doctor reports that).
func Load(root, home, top string) (Config, error) {
	c := Default()
	if root != "" {
		if err := c.readFile(filepath.Join(root, "orch.yml"), root, true); err != nil {
			return c, err
		}
	}
	if home != "" {
		if top == "" {
			top = home
		}
		if err := c.readFile(filepath.Join(home, "memsync.yml"), top, false); err != nil {
			return c, err
		}
	}
	return c, c.ApplyEnv(os.Getenv)
}

// readFile applies one file. In orch.yml only the "memories" block is
// memsync's; other top-level keys belong to orch. In memsync.yml the keys may
// be at the top level or under "memories". The file comes with a cloned
// repository: a link that leads outside within (the repository, the memory
// home) is refused, naming where it leads, and nothing is read past 1 MiB.
func (c *Config) readFile(path, within string, orch bool) error {
	data, err := fsutil.ReadWithin(path, within, maxFileSize)
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return nil
	case errors.Is(err, syscall.ELOOP):
		return &Error{File: path, Key: "(link)", Msg: "a loop of symlinks: not read"}
	case errors.As(err, new(*fsutil.OutsideError)):
		return &Error{File: path, Key: "(link)", Msg: err.Error()}
	case errors.As(err, new(*fsutil.TooLargeError)):
		return &Error{File: path, Key: "(size)", Msg: "larger than 1 MiB: not a configuration file"}
	case err != nil:
		return err
	}
	return c.parse(path, data, orch)
}

// maxFileSize is the largest configuration file read.
const maxFileSize = 1 << 20

// parse applies the text of the file at path. It reads the YAML as nodes
// and refuses an alias wherever it reads a value, so a YAML bomb (billion
// laughs) is never expanded; yaml.v3 refuses nesting deeper than 10000.
func (c *Config) parse(path string, data []byte, orch bool) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return &Error{File: path, Key: "(syntax)", Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	c.Files = append(c.Files, path)
	if len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return &Error{File: path, Line: top.Line, Key: "(top level)", Msg: "want a mapping of keys"}
	}
	block, prefix := top, ""
	if v := lookup(top, "memories"); v != nil || orch {
		if v == nil {
			return nil
		}
		block, prefix = v, "memories."
	}
	return c.apply(path, prefix, block)
}

func lookup(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// apply reads the keys of a memories block: it checks that the block is a
// mapping, then sets each key's value (memoryKeys, applyFilter) or says
// what is wrong with it.
func (c *Config) apply(path, prefix string, m *yaml.Node) error {
	bad := func(n *yaml.Node, key, format string, args ...any) error {
		return &Error{File: path, Line: n.Line, Key: prefix + key, Msg: fmt.Sprintf(format, args...)}
	}
	if m.Kind != yaml.MappingNode {
		key := strings.TrimSuffix(prefix, ".")
		if key == "" {
			key = "(top level)"
		}
		if m.Kind == yaml.AliasNode {
			return &Error{File: path, Line: m.Line, Key: key, Msg: aliasMsg(m)}
		}
		return &Error{File: path, Line: m.Line, Key: key, Msg: "want a mapping with enabled, inject, budget, filter"}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if v.Kind == yaml.AliasNode {
			return bad(v, k.Value, "%s", aliasMsg(v))
		}
		if k.Value == "filter" {
			if err := c.applyFilter(v, func(n *yaml.Node, key, format string, args ...any) error {
				return bad(n, strings.TrimSuffix("filter."+key, "."), format, args...)
			}); err != nil {
				return err
			}
			continue
		}
		set, ok := memoryKeys[k.Value]
		if !ok {
			return bad(k, k.Value, "unknown key (known: enabled, inject, budget, filter, role, max_entries, ttl_days, model)")
		}
		if msg := set(c, v); msg != "" {
			return bad(v, k.Value, "%s", msg)
		}
	}
	return nil
}

// memoryKeys are the keys of a memories block other than filter: each sets
// its value v in c, or says what is wrong with it ("" when nothing is).
var memoryKeys = map[string]func(c *Config, v *yaml.Node) string{
	"enabled": func(c *Config, v *yaml.Node) string {
		var b bool
		if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
			return fmt.Sprintf("%q is not true or false", v.Value)
		}
		c.Enabled = b
		return ""
	},
	"inject": func(c *Config, v *yaml.Node) string {
		mode, err := ParseMode(v.Value)
		if err != nil || v.Kind != yaml.ScalarNode {
			return fmt.Sprintf("%q is not one of auto, manual, none", v.Value)
		}
		c.Inject = mode
		return ""
	},
	"budget": func(c *Config, v *yaml.Node) string {
		if !setCount(&c.Budget, v) {
			return fmt.Sprintf("%q is not a number of tokens (0 or more)", v.Value)
		}
		return ""
	},
	"role": func(c *Config, v *yaml.Node) string {
		r, err := policy.Parse(v.Value)
		if err != nil || v.Kind != yaml.ScalarNode {
			return fmt.Sprintf("%q is not one of owner, admin, worker", v.Value)
		}
		c.Role = string(r)
		return ""
	},
	"max_entries": func(c *Config, v *yaml.Node) string { return countMsg(setCount(&c.MaxEntries, v), v) },
	"ttl_days":    func(c *Config, v *yaml.Node) string { return countMsg(setCount(&c.TTLDays, v), v) },
	"model": func(c *Config, v *yaml.Node) string {
		if v.Kind != yaml.ScalarNode || !filepath.IsAbs(v.Value) && !strings.HasPrefix(v.Value, "~/") {
			return fmt.Sprintf("%q is not an absolute folder (or one under ~/)", v.Value)
		}
		c.Model = v.Value
		return ""
	},
}

// setCount sets *dst to v when v is a whole number, 0 or more, and reports
// whether it was.
func setCount(dst *int, v *yaml.Node) bool {
	n, err := strconv.Atoi(v.Value)
	if err != nil || n < 0 || v.Kind != yaml.ScalarNode {
		return false
	}
	*dst = n
	return true
}

// countMsg is what is wrong with v, a count that setCount refused (ok false).
func countMsg(ok bool, v *yaml.Node) string {
	if ok {
		return ""
	}
	return fmt.Sprintf("%q is not a number (0 or more)", v.Value)
}

func (c *Config) applyFilter(m *yaml.Node, bad func(n *yaml.Node, key, format string, args ...any) error) error {
	if m.Kind != yaml.MappingNode {
		return bad(m, "", "want a mapping with types, tags, recent_days")
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if v.Kind == yaml.AliasNode {
			return bad(v, k.Value, "%s", aliasMsg(v))
		}
		switch k.Value {
		case "types", "tags":
			list, err := stringList(v)
			if err != nil {
				return bad(v, k.Value, "%s", err)
			}
			if k.Value == "types" {
				c.Filter.Types = list
			} else {
				c.Filter.Tags = list
			}
		case "recent_days":
			n, err := strconv.Atoi(v.Value)
			if err != nil || n < 0 || v.Kind != yaml.ScalarNode {
				return bad(v, k.Value, "%q is not a number of days (0 or more)", v.Value)
			}
			c.Filter.RecentDays = n
		default:
			return bad(k, k.Value, "unknown key (known: types, tags, recent_days)")
		}
	}
	return nil
}

// aliasMsg refuses an alias (*name) where a value is read.
func aliasMsg(n *yaml.Node) string {
	return fmt.Sprintf("a YAML alias (*%s) is not read here: write the value itself", n.Value)
}

// stringList reads [a, b] or "a, b".
func stringList(v *yaml.Node) ([]string, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		return Split(v.Value), nil
	case yaml.SequenceNode:
		var out []string
		for _, n := range v.Content {
			if n.Kind == yaml.AliasNode {
				return nil, errors.New(aliasMsg(n))
			}
			if n.Kind != yaml.ScalarNode {
				return nil, errors.New("want a list of words")
			}
			out = append(out, Split(n.Value)...)
		}
		return out, nil
	}
	return nil, errors.New("want a list of words")
}

// Split splits "a, b,,c" into [a b c].
func Split(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// ApplyEnv applies MEMSYNC_ENABLED, MEMSYNC_INJECT and MEMSYNC_BUDGET.
func (c *Config) ApplyEnv(getenv func(string) string) error {
	if v := getenv("MEMSYNC_ENABLED"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return &Error{File: "environment", Key: "MEMSYNC_ENABLED", Msg: fmt.Sprintf("%q is not true or false", v)}
		}
		c.Enabled = b
	}
	if v := getenv("MEMSYNC_INJECT"); v != "" {
		m, err := ParseMode(v)
		if err != nil {
			return &Error{File: "environment", Key: "MEMSYNC_INJECT", Msg: err.Error()}
		}
		c.Inject = m
	}
	if v := getenv("MEMSYNC_BUDGET"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return &Error{File: "environment", Key: "MEMSYNC_BUDGET", Msg: fmt.Sprintf("%q is not a number of tokens (0 or more)", v)}
		}
		c.Budget = n
	}
	return nil
}

// Mode is the injection mode in effect: None when memories are disabled.
func (c Config) Mode() Mode {
	if !c.Enabled {
		return None
	}
	return c.Inject
}
