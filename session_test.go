package memsync

import (
	"context"
	"errors"
	"testing"
)

// TestOpenRefusesBadSession: the session becomes every added entry's
// Session bullet, so Open refuses one that is not one line of printable
// text, as a usage error (a session of invalid UTF-8 damaged the memory
// file at the first add; a newline or a bidi override went in as text).
func TestOpenRefusesBadSession(t *testing.T) {
	_, dir := openRepo(t, Options{})
	for _, s := range []string{"loop\xff", "loop\n7", "loop\u202e7", "loop\x1b[2J"} {
		m, err := Open(dir, Options{Session: s})
		if err == nil {
			_, err = m.Add(context.Background(), Entry{Content: "in a session"})
			t.Errorf("session %q: Open took it (add: %v)", s, err)
			continue
		}
		if !errors.As(err, new(*ConfigError)) {
			t.Errorf("session %q: %v, want a ConfigError", s, err)
		}
		if k, _ := Classify(err); k != KindUsage {
			t.Errorf("session %q: kind %v, want KindUsage", s, k)
		}
	}
	m, err := Open(dir, Options{Session: "loop-7 (ünï)"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := m.Add(context.Background(), Entry{Content: "in a session"})
	if err != nil || e.Fields["Session"] != "loop-7 (ünï)" {
		t.Fatalf("add: %v %v", e.Fields, err)
	}
}
