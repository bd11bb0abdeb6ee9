package store

import (
	"os"
	"path/filepath"
	"testing"
)

// The arrival log keeps the first arrival of an ID, skips what it cannot
// hold, and reads as empty, never failing, when missing, damaged or a link.
func TestArrivedLog(t *testing.T) {
	dir := t.TempDir()
	s := &Store{ArrivedLog: filepath.Join(dir, "state", "arrived")}
	if got := s.Arrived(); len(got) != 0 {
		t.Fatalf("missing log: %v", got)
	}
	if err := s.RecordArrived(map[string]string{"a": "Bob <bob@example.com>", "b\tx": "Eve <e@x>", "c": "Eve\n<e@x>", "d": ""}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordArrived(map[string]string{"a": "Eve <eve@example.com>"}); err != nil {
		t.Fatal(err)
	}
	if got := s.Arrived(); len(got) != 1 || got["a"] != "Bob <bob@example.com>" {
		t.Fatalf("arrivals: %v", got)
	}
	f, err := os.OpenFile(s.ArrivedLog, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("garbage\n\x00\t\n\tNo ID <n@x>\ne\tEve <eve@example.com>\npartial\tEv"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := s.Arrived(); len(got) != 2 || got["a"] != "Bob <bob@example.com>" || got["e"] != "Eve <eve@example.com>" {
		t.Fatalf("a damaged log: %v", got)
	}
	if err := os.Remove(s.ArrivedLog); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", s.ArrivedLog); err != nil {
		t.Fatal(err)
	}
	if got := s.Arrived(); len(got) != 0 {
		t.Fatalf("a log linked to /dev/zero: %v", got)
	}
}
