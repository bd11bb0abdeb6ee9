package memsync

import (
	"context"
	"errors"
	"testing"
	"time"
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

// TestOpenRefusesNegativeLimits: a negative lock timeout or size cap is a
// usage error, as MEMSYNC_LOCK_TIMEOUT=-1s and MEMSYNC_MAX_BYTES=-1 are;
// from Options (and so from --lock-timeout, --max-bytes) it silently meant
// the default (10 s, 10 MB).
func TestOpenRefusesNegativeLimits(t *testing.T) {
	_, dir := openRepo(t, Options{})
	for _, o := range []Options{{LockTimeout: -time.Second}, {MaxBytes: -1}, {SyncTimeout: -time.Second}} {
		_, err := Open(dir, o)
		if k, _ := Classify(err); !errors.As(err, new(*ConfigError)) || k != KindUsage {
			t.Errorf("%+v: %v (kind %v), want a ConfigError", o, err, k)
		}
	}
	for k, v := range map[string]string{"MEMSYNC_LOCK_TIMEOUT": "-1s", "MEMSYNC_MAX_BYTES": "-1", "MEMSYNC_SYNC_TIMEOUT": "-1s"} {
		t.Setenv(k, v)
		if _, err := Open(dir, Options{}); !errors.As(err, new(*ConfigError)) {
			t.Errorf("%s=%s: %v, want a ConfigError", k, v, err)
		}
		t.Setenv(k, "")
	}
}
