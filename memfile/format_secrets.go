package memfile

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/memsync/memsync/internal/secrets"
)

// ErrSecret refuses an entry holding what looks like a credential (an access key, a
// token, a private key), found by gitleaks' published rules. Every such
// error is a *SecretError.
var ErrSecret = errors.New("entry holds a secret")

// SecretAllowedField is the bullet that lets an entry hold what the secret
// rules it names find ("- Secret-Allowed: generic-api-key"): the recorded,
// explicit override for a false positive (see Entry.AllowSecrets).
const SecretAllowedField = "Secret-Allowed"

// SecretFinding is one secret found in an entry.
type SecretFinding struct {
	Rule        string // the gitleaks rule ID, e.g. "aws-access-token"
	Description string // what the rule finds
	Field       string // where: "title", "content", "tags" or a bullet's key
	Line        int    // 1-based line within that field
	Column      int    // 1-based column (in characters) on that line
	Excerpt     string // the match with the secret redacted
}

// SecretError refuses an entry that holds secrets; it is an ErrSecret. Its
// message names the rule and the position, never the secret (nor the title,
// which may hold it).
type SecretError struct {
	Findings []SecretFinding // at least one
}

func (e *SecretError) Error() string {
	f := e.Findings[0]
	msg := fmt.Sprintf("%s: %s at %s line %d, column %d (%s)", ErrSecret, f.Rule, f.Field, f.Line, f.Column, f.Excerpt)
	if n := len(e.Findings) - 1; n > 0 {
		msg += fmt.Sprintf(" and %d more", n)
		if others := e.Rules()[1:]; len(others) > 0 {
			msg += " (" + strings.Join(others, ", ") + ")"
		}
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrSecret) true.
func (e *SecretError) Unwrap() error { return ErrSecret }

// Rules are the rules of the findings, each once, in order.
func (e *SecretError) Rules() []string {
	var out []string
	for _, f := range e.Findings {
		if !slices.Contains(out, f.Rule) {
			out = append(out, f.Rule)
		}
	}
	return out
}

// SecretHint is the advice that goes with an ErrSecret.
const SecretHint = "take the secret out of the entry (and rotate it if it is a real one: it was on this machine in clear); " +
	"if it is no secret, store it anyway with --allow-secret (MCP: allow_secret), which records the rule in the entry as '- " + SecretAllowedField + ": RULE'"

// Secrets returns the secrets found in the entry's title, content, tags and
// bullets, except those found by a rule its Secret-Allowed bullet names.
func (e *Entry) Secrets() []SecretFinding {
	allowed := e.allowedSecretRules()
	var out []SecretFinding
	for _, f := range e.allSecrets() {
		if !slices.Contains(allowed, f.Rule) {
			out = append(out, f)
		}
	}
	return out
}

// AllowSecrets records in the entry's Secret-Allowed bullet every rule that
// finds a secret in it, and returns the rules it added: after it, Secrets
// is empty and CheckSecrets passes.
func (e *Entry) AllowSecrets() []string {
	allowed := e.allowedSecretRules()
	var added []string
	for _, f := range e.allSecrets() {
		if !slices.Contains(allowed, f.Rule) {
			allowed = append(allowed, f.Rule)
			added = append(added, f.Rule)
		}
	}
	if len(added) > 0 {
		e.SetField(SecretAllowedField, strings.Join(allowed, ", "))
	}
	return added
}

// CheckSecrets refuses an entry that holds a secret no Secret-Allowed rule
// lets in (a *SecretError), and is nil otherwise. Store.Validate calls it,
// so every write of a new or changed entry is checked; a write path that
// moves stored entries (restore, the fold of a worktree copy) calls it too.
func CheckSecrets(e *Entry) error {
	if fs := e.Secrets(); len(fs) > 0 {
		return &SecretError{Findings: fs}
	}
	return nil
}

func (e *Entry) allowedSecretRules() []string {
	var out []string
	for r := range strings.SplitSeq(e.Field(SecretAllowedField), ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// allSecrets scans the entry's text as one (one keyword pass), each part on
// lines of its own, and maps each finding back to its part. The heading is
// scanned as written, type and title on one line ("Api Key: …" holds the
// key word and the value together); the type also as given (SetType) and
// as stored (lower case), where those differ.
func (e *Entry) allSecrets() []SecretFinding {
	type part struct {
		name  string
		start int
		shift int // characters before the part on its first line
	}
	var b strings.Builder
	var parts []part
	add := func(name, v string) {
		if v == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		parts = append(parts, part{name: name, start: b.Len()})
		b.WriteString(v)
	}
	add("content", e.Content)
	if e.Type == "" {
		add("title", e.Title)
	} else {
		label := e.label()
		add("type", label+": "+e.Title)
		parts = append(parts, part{name: "title", start: b.Len() - len(e.Title), shift: utf8.RuneCountInString(label) + 2})
		for i, t := range []string{e.typeIn, e.Type} {
			if t != label && (i == 0 || t != e.typeIn) {
				add("type", t)
			}
		}
	}
	add("tags", strings.Join(e.Tags, ", "))
	for _, f := range e.Extra {
		if f.Key != SecretAllowedField {
			name := f.Key
			if name == "" {
				name = "stray line"
			}
			add(name, f.Value)
		}
	}
	text := b.String()
	var out []SecretFinding
	for _, f := range scanned(text) {
		p := parts[0]
		for _, q := range parts {
			if q.start <= f.Offset {
				p = q
			}
		}
		line, col := f.Line-strings.Count(text[:p.start], "\n"), f.Column
		if line == 1 {
			col -= p.shift
		}
		out = append(out, SecretFinding{
			Rule: f.RuleID, Description: f.Description, Field: p.name,
			Line: line, Column: col, Excerpt: f.Excerpt,
		})
	}
	return out
}

// clean remembers texts a scan found nothing in, in this process: a sync
// scans the entries a merge brings in, and again when it adopts the merge
// once pushed. Bounded; a text with findings is scanned each time.
var clean = struct {
	sync.Mutex
	texts map[string]bool
}{texts: map[string]bool{}}

// maxClean bounds clean (about a memory's worth of entries).
const maxClean = 4096

// scanned is secrets.Scan of text, remembering a clean text.
func scanned(text string) []secrets.Finding {
	clean.Lock()
	known := clean.texts[text]
	clean.Unlock()
	if known {
		return nil
	}
	found := secrets.Scan(text)
	if len(found) == 0 {
		clean.Lock()
		if len(clean.texts) >= maxClean {
			clear(clean.texts)
		}
		clean.texts[text] = true
		clean.Unlock()
	}
	return found
}
