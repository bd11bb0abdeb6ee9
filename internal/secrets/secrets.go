// Package secrets finds credentials in text with gitleaks' published rule set
// (gitleaks.toml, MIT licensed: LICENSE-gitleaks), applied as gitleaks applies
// it to a file's text: a rule runs only when one of its keywords occurs
// (case-insensitively), its match must pass the rule's entropy threshold, and
// gitleaks' global and per-rule allowlists (regexes on the secret, the match
// or the line; stop words) drop known false positives. Rules bound to file
// paths do not apply to text and are left out. A rule's expressions are
// compiled the first time one of its keywords occurs, so a scan of ordinary
// text costs a keyword search and nothing else.
//
// The rules are Go literals generated from gitleaks.toml (go generate), so
// no TOML is parsed when memsync starts.
package secrets

//go:generate go run ./gen

import (
	"cmp"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Finding is one secret found in a text.
type Finding struct {
	RuleID      string // the gitleaks rule, e.g. "aws-access-token"
	Description string // what the rule finds
	Offset      int    // byte offset of the match in the text
	Line        int    // 1-based line of the match
	Column      int    // 1-based column (in characters) of the match on its line
	Excerpt     string // the match with the secret redacted (never the secret itself)
}

// Position is "line L, column C".
func (f Finding) Position() string {
	return "line " + strconv.Itoa(f.Line) + ", column " + strconv.Itoa(f.Column)
}

// rule is one gitleaks rule (rules_gen.go).
type rule struct {
	id, description, regex, path string
	secretGroup                  int
	entropy                      float64
	keywords                     []string
	allowlists                   []*allowlist

	once sync.Once
	re   *regexp.Regexp
	err  error // the regex (or an allowlist's) does not compile: the rule is skipped

	gateOnce sync.Once
	gate     *regexp.Regexp // relax(regex); nil where it saves nothing
}

// allowlist is a gitleaks allowlist: a finding it matches is no finding.
type allowlist struct {
	and               bool   // condition "AND": every check must match
	target            string // what regexes test: "" the secret, "match", "line"
	regexes           []string
	stopwords         []string // lower case; tested against the secret
	hasPathsOrCommits bool     // path or commit checks, which text without a path never passes

	once sync.Once
	re   *regexp.Regexp // the regexes joined into one
	err  error
}

func (a *allowlist) compile() error {
	a.once.Do(func() {
		if len(a.regexes) > 0 {
			a.re, a.err = regexp.Compile("(?:" + strings.Join(a.regexes, ")|(?:") + ")")
		}
	})
	return a.err
}

// compile compiles the rule's expression; its allowlists are compiled when
// a match needs them (allowed), and Uncompilable checks them too.
func (r *rule) compile() error {
	r.once.Do(func() { r.re, r.err = regexp.Compile(r.regex) })
	return r.err
}

// mayMatch tells whether the rule's expression can match text, by its
// relaxed form where that compiles much faster (see relax): a text the
// relaxed form does not match costs no compilation of the rule itself.
func (r *rule) mayMatch(text string) bool {
	r.gateOnce.Do(func() {
		if g := relax(r.regex); g != r.regex {
			r.gate, _ = regexp.Compile(g) // nil (no gate) if it does not compile
		}
	})
	return r.gate == nil || r.gate.MatchString(text)
}

// applies tells whether the rule scans text at all: not a rule for file
// paths (a private key file name, a Terraform password field).
func (r *rule) applies() bool { return r.path == "" && r.regex != "" }

// pairs is the set of the two-byte sequences of a text, as a bitmap: a
// keyword whose first two bytes are not among them is not in the text, and
// most keywords are ruled out so, without a search each.
type pairs [1 << 16 / 64]uint64

func (p *pairs) of(text string) {
	for i := 0; i+1 < len(text); i++ {
		b := uint16(text[i])<<8 | uint16(text[i+1])
		p[b>>6] |= 1 << (b & 63)
	}
}

func (p *pairs) mayHold(word string) bool {
	if len(word) < 2 {
		return true
	}
	b := uint16(word[0])<<8 | uint16(word[1])
	return p[b>>6]&(1<<(b&63)) != 0
}

// Rules is how many rules scan text; SkippedPathRules how many of the rule
// set are bound to file paths and so never apply to a memory.
func Rules() (scanning, skippedPathRules int) {
	for _, r := range ruleSet {
		if r.applies() {
			scanning++
		} else {
			skippedPathRules++
		}
	}
	return scanning, skippedPathRules
}

// Uncompilable compiles every rule and returns the IDs of those whose
// expressions Go's regexp refuses; Scan skips them.
func Uncompilable() []string {
	var bad []string
	if err := compileGlobal(); err != nil {
		bad = append(bad, "(global allowlist)")
	}
	for _, r := range ruleSet {
		if !r.applies() {
			continue
		}
		err := r.compile()
		for _, a := range r.allowlists {
			err = cmp.Or(err, a.compile())
		}
		if err != nil {
			bad = append(bad, r.id)
		}
	}
	return bad
}

func compileGlobal() error {
	for _, a := range globalAllowlist {
		if err := a.compile(); err != nil {
			return err
		}
	}
	return nil
}

// Scan returns the secrets in text, in the order of the rule set and then
// of the text. Text with none of the rules' keywords costs one lower-casing,
// one pass to list its two-byte sequences, and a substring search for each
// keyword whose first two bytes are among them; nothing is built or
// compiled before a keyword is found (an add scans once per process).
func Scan(text string) []Finding {
	if text == "" {
		return nil
	}
	lower := strings.ToLower(text)
	var present pairs
	present.of(lower)
	var raw []found
	for _, r := range ruleSet { // the rule set's order, as gitleaks reports
		if r.applies() && hasKeyword(r, lower, &present) {
			raw = append(raw, scanRule(r, text)...)
		}
	}
	if len(raw) == 0 {
		return nil
	}
	return report(raw, text)
}

// hasKeyword tells whether lower holds one of r's keywords.
func hasKeyword(r *rule, lower string, present *pairs) bool {
	for _, k := range r.keywords {
		if present.mayHold(k) && strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

// found is a finding before it is redacted.
type found struct {
	r          *rule
	start, end int // the match
	line       int // line of the match (for the generic rules' precedence)
	secret     string
}

// scanRule is gitleaks' detectRule for text without a path or commit.
func scanRule(r *rule, text string) []found {
	if !r.mayMatch(text) || r.compile() != nil {
		return nil
	}
	var out []found
	for _, m := range r.re.FindAllStringIndex(text, -1) {
		match := strings.Trim(text[m[0]:m[1]], "\n")
		start := m[0] + strings.Index(text[m[0]:m[1]], match)
		end := start + len(match)
		secret := match
		if groups := r.re.FindStringSubmatch(match); len(groups) >= 2 {
			if r.secretGroup > 0 {
				if len(groups) <= r.secretGroup {
					continue
				}
				secret = groups[r.secretGroup]
			} else {
				for _, g := range groups[1:] {
					if g != "" {
						secret = g
						break
					}
				}
			}
		}
		if r.entropy != 0 && entropy(secret) <= r.entropy {
			continue
		}
		ls := strings.LastIndexByte(text[:start], '\n') + 1
		le := len(text)
		if i := strings.IndexByte(text[end:], '\n'); i >= 0 {
			le = end + i
		}
		line := text[ls:max(le, end)]
		if ok, err := allowed(globalAllowlist, secret, match, line); ok || err != nil {
			continue // a global allowlist that does not compile would allow nothing else either: skip
		}
		if ok, err := allowed(r.allowlists, secret, match, line); ok || err != nil {
			continue
		}
		out = append(out, found{r: r, start: start, end: end, line: strings.Count(text[:start], "\n") + 1, secret: secret})
	}
	return out
}

// allowed is gitleaks' checkFindingAllowed without paths and commits; it
// compiles the allowlists it needs.
func allowed(lists []*allowlist, secret, match, line string) (bool, error) {
	for _, a := range lists {
		if err := a.compile(); err != nil {
			return false, err
		}
		target := secret
		switch a.target {
		case "match":
			target = match
		case "line":
			target = line
		}
		regex := a.re != nil && target != "" && a.re.MatchString(target)
		stop := a.stopword(secret)
		if a.and { // every check it has must pass; text has no path or commit to pass one
			if !a.hasPathsOrCommits && (len(a.regexes) == 0 || regex) && (len(a.stopwords) == 0 || stop) {
				return true, nil
			}
		} else if regex || stop {
			return true, nil
		}
	}
	return false, nil
}

func (a *allowlist) stopword(secret string) bool {
	if len(a.stopwords) == 0 || secret == "" {
		return false
	}
	s := strings.ToLower(secret)
	for _, w := range a.stopwords {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// report drops a generic rule's finding where a specific rule found the same
// secret on the same line (gitleaks' filter) and redacts the rest.
func report(raw []found, text string) []Finding {
	var out []Finding
	for _, f := range raw {
		if strings.Contains(f.r.id, "generic") && superseded(f, raw) {
			continue
		}
		col := utf8.RuneCountInString(text[strings.LastIndexByte(text[:f.start], '\n')+1:f.start]) + 1
		out = append(out, Finding{
			RuleID: f.r.id, Description: f.r.description, Offset: f.start, Line: f.line, Column: col,
			Excerpt: excerpt(text[f.start:f.end], f.secret),
		})
	}
	return out
}

func superseded(f found, all []found) bool {
	for _, g := range all {
		if g.line == f.line && g.r != f.r && !strings.Contains(g.r.id, "generic") && strings.Contains(g.secret, f.secret) {
			return true
		}
	}
	return false
}

// excerptRunes bounds an excerpt.
const excerptRunes = 60

// excerpt is the match with the secret replaced by Redact's form, on one
// line, shortened, without control characters.
func excerpt(match, secret string) string {
	s := match
	if secret != "" {
		s = strings.Replace(match, secret, Redact(secret), 1)
	}
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)), " ")
	if r := []rune(s); len(r) > excerptRunes {
		s = string(r[:excerptRunes-1]) + "…"
	}
	return s
}

// Redact shows a secret's first characters (at most 4, none for a short
// one, none past a quarter of it) and its length, never the rest.
func Redact(secret string) string {
	r := []rune(secret)
	keep := min(4, len(r)/4)
	return string(r[:keep]) + "…(" + strconv.Itoa(len(r)) + " chars)"
}

// entropy is the Shannon entropy of s in bits per character, as gitleaks
// computes it (per rune, divided by the byte length).
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	inv := 1 / float64(len(s))
	e := 0.0
	for _, n := range counts {
		p := float64(n) * inv
		e -= p * math.Log2(p)
	}
	return e
}

// bounded is a bounded repetition {m,n}, lazy or not (Go's regexp compiles
// it as n copies).
var bounded = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{(\d+),(\d+)\}\??`) })

// relax returns expr with every bounded repetition {m,n} of n ≥ 8 turned
// into {m,}: it matches wherever expr does (and more), and compiles in a
// fraction of the time, so a text it does not match needs no compilation of
// expr at all.
func relax(expr string) string {
	var b strings.Builder
	last := 0
	for _, m := range bounded().FindAllStringSubmatchIndex(expr, -1) {
		if m[0] > 0 && expr[m[0]-1] == '\\' {
			continue // an escaped brace: a literal, not a repetition
		}
		n, _ := strconv.Atoi(expr[m[4]:m[5]])
		if n < 8 {
			continue
		}
		b.WriteString(expr[last:m[0]])
		b.WriteString("{" + expr[m[2]:m[3]] + ",}")
		last = m[1]
	}
	if last == 0 {
		return expr
	}
	return b.String() + expr[last:]
}
