package main

import "testing"

// TestSuggest: typos within 2 edits and unique prefixes find the name
// meant; a name far from all, or too short to tell, finds none.
func TestSuggest(t *testing.T) {
	cmds := []string{"init", "add", "list", "log", "hooks", "install", "search"}
	for typed, want := range map[string]string{
		"lst": "list", "ad": "add", "instal": "install", "serach": "search", "insta": "install",
		"lsit": "list", "zzzzzz": "", "x": "", "": "", "l": "",
	} {
		if got := suggest(typed, cmds); got != want {
			t.Errorf("suggest(%q) = %q, want %q", typed, got, want)
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"kitten", "sitting", 3}, {"lst", "list", 1}, {"flaw", "lawn", 2}, {"é", "e", 1}, {"lsit", "list", 1}, {"ab", "ba", 1}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
