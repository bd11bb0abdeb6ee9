package words

import "testing"

func TestWords(t *testing.T) {
	if Plural(1, "y", "ies") != "y" || Plural(0, "y", "ies") != "ies" || Plural(2, "", "s") != "s" {
		t.Fatal("Plural")
	}
	if Short("0123456789abcdef") != "0123456789ab" || Short("abc") != "abc" || Short("") != "" {
		t.Fatal("Short")
	}
	if If(true, "yes", "no") != "yes" || If(false, "yes", "no") != "no" {
		t.Fatal("If")
	}
}
