package secrets

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzScan: no input panics, a scan of up to 64 KiB (an entry's limit)
// ends in bounded time, and a finding's position and excerpt are sound.
func FuzzScan(f *testing.F) {
	for _, c := range secretCorpus() {
		f.Add(c.text)
	}
	f.Add("password = \"\"")
	f.Add("-----BEGIN PRIVATE KEY-----")
	f.Add("key: \xff\xfe token=é" + strings.Repeat("a", 200))
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 64<<10 {
			s = s[:64<<10]
		}
		start := time.Now()
		fs := Scan(s)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Scan of %d bytes took %v", len(s), d)
		}
		for _, f := range fs {
			if f.Offset < 0 || f.Offset > len(s) || f.Line < 1 || f.Column < 1 {
				t.Fatalf("bad position %+v in %q", f, s)
			}
			if f.Line != strings.Count(s[:f.Offset], "\n")+1 {
				t.Fatalf("line %d for offset %d in %q", f.Line, f.Offset, s)
			}
			if utf8.RuneCountInString(f.Excerpt) > excerptRunes {
				t.Fatalf("excerpt too long: %q", f.Excerpt)
			}
		}
	})
}

// A large entry full of keywords scans in bounded time (Go's regexp is
// linear; the rules' bounded repetitions keep the constant small).
func TestScanLargeBounded(t *testing.T) {
	s := strings.Repeat("api_key = token secret password auth access: curl -u x ", 64<<10/56)
	start := time.Now()
	_ = Scan(s)
	d := time.Since(start)
	t.Logf("%d bytes of keywords: %v", len(s), d)
	if d > 5*time.Second {
		t.Errorf("Scan of %d bytes took %v", len(s), d)
	}
}
