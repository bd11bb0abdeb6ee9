package memfile

import (
	"errors"
	"testing"
)

// TestFindPrecedence: a full ID, then a list number, then a key, then a
// unique ID prefix (issue 10, defect 19).
func TestFindPrecedence(t *testing.T) {
	f := Parse([]byte("# Memories\n\n" +
		"## a\n- ID: 2\n- Content: id two\n\n" +
		"## b\n- ID: bbbb00000002\n- Key: 1\n- Content: keyed one\n\n" +
		"## c\n- ID: cccc00000003\n- Key: bbbb\n- Content: key shadows a prefix\n\n" +
		"## d\n- ID: dddd00000004\n- Key: twice\n- Content: d\n\n" +
		"## e\n- ID: eeee00000005\n- Key: twice\n- Content: e\n"))
	for ref, want := range map[string]int{
		"2":            0, // the full ID "2" wins over entry 2
		"1":            0, // a number wins over the key "1"
		"3":            2,
		"bbbb":         2, // a key wins over an ID prefix
		"bbbb00000002": 1,
		"dddd0":        3,
		"eeee":         4,
	} {
		if got, err := f.Find(ref); err != nil || got != want {
			t.Errorf("Find(%q) = %d, %v; want %d", ref, got, err, want)
		}
	}
	for ref, want := range map[string]error{"twice": ErrAmbiguous, "9": ErrNotFound, "zz": ErrNotFound, "zzzzzz": ErrNotFound} {
		if _, err := f.Find(ref); !errors.Is(err, want) {
			t.Errorf("Find(%q): %v, want %v", ref, err, want)
		}
	}
}

func TestCheckKey(t *testing.T) {
	for _, k := range []string{"api-auth", "v1.2 decision", "ключ"} {
		if err := CheckKey(k); err != nil {
			t.Errorf("CheckKey(%q): %v", k, err)
		}
	}
	for _, k := range []string{"", " ", "12", "-3", "a\nb", "a\tb", "\x1b[2J"} {
		if err := CheckKey(k); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckKey(%q) = %v, want ErrInvalid", k, err)
		}
	}
}
