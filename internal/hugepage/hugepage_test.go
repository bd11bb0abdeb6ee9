package hugepage

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 511, 512, 4096, MinSize - 1, MinSize, MinSize + 513} {
		data := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d: read %d bytes, err %v", size, len(got), err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestMake(t *testing.T) {
	type pair struct{ a, b string }
	for _, n := range []int{0, 1, MinSize / 32, MinSize/32 + 1} {
		s := Make[pair](n)
		if len(s) != n || cap(s) != n {
			t.Fatalf("Make(%d): len %d cap %d", n, len(s), cap(s))
		}
		for i := range s {
			if s[i] != (pair{}) {
				t.Fatalf("Make(%d)[%d] not zero", n, i)
			}
			s[i] = pair{"x", "y"}
		}
	}
}
