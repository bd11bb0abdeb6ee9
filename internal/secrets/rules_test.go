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
