package secrets

import "testing"

// Go's regexp accepts every rule of the set (gitleaks uses Go's regexp);
// a rule it refused would be skipped, and this count would show it.
func TestRulesCompile(t *testing.T) {
	bad := Uncompilable()
	scanning, pathRules := Rules()
	t.Logf("%d rules scan text, %d are bound to file paths, %d do not compile: %v", scanning, pathRules, len(bad), bad)
	if len(bad) > 0 {
		t.Errorf("rules Go's regexp refuses: %v", bad)
	}
	if scanning < 200 {
		t.Errorf("only %d rules scan text; the generated rule set looks truncated", scanning)
	}
}

// A rule's relaxed form matches every text the rule matches (it only
// decides that a text needs no compilation of the rule).
func TestRelaxedGate(t *testing.T) {
	if got := relax(`a\{3,50}b[\w]{0,50}?c{2,4}`); got != `a\{3,50}b[\w]{0,}c{2,4}` {
		t.Errorf("relax = %q", got)
	}
	texts := ordinaryMemories(t)
	for _, c := range secretCorpus() {
		texts = append(texts, c.text)
	}
	gated := 0
	for _, r := range ruleSet {
		if !r.applies() || r.compile() != nil {
			continue
		}
		r.mayMatch("")
		if r.gate != nil {
			gated++
		}
		for _, s := range texts {
			if r.re.MatchString(s) && !r.mayMatch(s) {
				t.Errorf("%s: the relaxed form misses %q", r.id, s)
			}
		}
	}
	t.Logf("%d rules have a relaxed form", gated)
}
