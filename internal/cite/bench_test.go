package cite

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkAutoCite is what automatic citation adds to an add whose
// content names a tracked file with a line, in a repository of 2,000
// files: the git index read and the cited file fingerprinted. Target:
// 0.5 ms.
func BenchmarkAutoCite(b *testing.B) {
	files := map[string]string{}
	for i := range 2000 {
		files[fmt.Sprintf("src/d%02d/f%04d.go", i%50, i)] = numbered(40)
	}
	top := newRepo(b, files).top
	index := filepath.Join(top, ".git", "index")
	for b.Loop() {
		ix, err := ReadIndex(index)
		if err != nil {
			b.Fatal(err)
		}
		mk := &Maker{Top: top, Commit: "3f2a1c4e5d6f", Index: ix}
		if cs := mk.Auto("the pool size: see src/d07/f0007.go:12 and f0042.go"); len(cs) != 2 {
			b.Fatalf("%+v", cs)
		}
	}
}
