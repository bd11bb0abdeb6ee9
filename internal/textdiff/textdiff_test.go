package textdiff

import "testing"

func TestLines(t *testing.T) {
	if d := Lines("a\nb\n", "a\nb\n"); d != "" {
		t.Fatalf("equal texts: %q", d)
	}
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	b := "1\n2\n3\n4\n5\nsix\n7\n8\n9\n10\n\n"
	want := "@@ line 3 @@\n 3\n 4\n 5\n-6\n+six\n 7\n 8\n 9\n 10\n+\n"
	if d := Lines(a+"11\n12\n13\n14\n15\n", "one\n"+a[2:]+"11\n12\n13\n14\n"); d != "@@ line 1 @@\n-1\n+one\n 2\n 3\n 4\n@@ line 12 @@\n 12\n 13\n 14\n-15\n" {
		t.Fatalf("two groups:\n%s", d)
	}
	if d := Lines(a, b); d != want {
		t.Fatalf("Lines:\n%s\nwant:\n%s", d, want)
	}
}
