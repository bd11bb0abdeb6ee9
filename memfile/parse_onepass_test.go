package memfile

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// checkOnePass fails unless the one-pass parse of s equals the reference's.
func checkOnePass(t *testing.T, s string) {
	t.Helper()
	got, want := parse(s), parseReference(s)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("one-pass parse differs from the reference\ninput: %q\ngot:  %+v\nwant: %+v", s, got, want)
	}
}

// TestParseOnePassRealFiles: on the real files (ralph's), the seeds of the
// fuzz targets and generated files, the one-pass parse gives what the
// parse that made several passes gave.
func TestParseOnePassRealFiles(t *testing.T) {
	files, _ := filepath.Glob("/work/shared/testdata/real-memories/*")
	local, _ := filepath.Glob("testdata/*.md")
	seeds, _ := filepath.Glob("testdata/fuzz/*/*")
	for _, name := range append(append(files, local...), seeds...) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		checkOnePass(t, string(data))
	}
	for _, size := range []int{0, 100, 4 << 10, 512 << 10} {
		checkOnePass(t, string(GenerateFile(size, uint64(size))))
	}
}

// FuzzParseOnePass: on any bytes, and on them made to read as either
// dialect, the one-pass parse equals the reference.
func FuzzParseOnePass(f *testing.F) {
	for _, s := range []string{seedExample, "# M\r\n\r\n## A: b\r\n- Tags: x\r\n- Content: y\r\n  z\r\n", "## Patterns\n\n### mem-1-abcd\n> x\n## Fix\n- Content: y\n### mem-2-abcd\n",
		"# M\n\n## Note: doc\nTitle\n=======\n<<<<<<< HEAD\n- Content: a\n=======\n- Content: b\n>>>>>>> x\n", "a\rb\r", "## X\n- ID: 1\n\x00\n", "### mem-1-abcd\n- Content: x\n## Y\n- ID: q\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, x []byte) {
		checkOnePass(t, string(x))
		checkOnePass(t, "### mem-0-fuzz\n"+string(x))
		checkOnePass(t, "## Z\n- \n"+string(x))
	})
}

// BenchmarkParseOnePass: the parse of a 10 MB generated memory, one pass
// (Parse) against the reference that made several passes.
func BenchmarkParseOnePass(b *testing.B) {
	data := string(GenerateFile(10<<20, 1))
	for _, c := range []struct {
		name  string
		parse func(string) *File
	}{{"one-pass", parse}, {"reference", parseReference}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				c.parse(data)
			}
		})
	}
}
