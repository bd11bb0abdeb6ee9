package store

import (
	"bytes"
	"github.com/memsync/memsync/memfile"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzFixedPoint: after the first rewrite a file is stable. For any bytes x,
// render(parse(render(parse(x)))) == render(parse(x)), the second parse
// finds the same dialect and the same entries (by ID), and no entry is lost.
// Each input is tried as it is and forced into each dialect (ralph by a
// leading "### mem-" entry, orch by a leading "- " line).
func FuzzFixedPoint(f *testing.F) {
	f.Add([]byte(seedExample))
	f.Add([]byte("## Note: n\n- Tags: a\n- Tags: b\nstray line\n- Content: c\n- Content: d\n"))
	f.Add([]byte("# M\r\n\r\n## A: b\r\n- Tags: x\r\n- Content: y\r\n  z\r\n"))
	f.Add([]byte("# M\n\n## Note: doc\nTitle\n=======\n<<<<<<< HEAD\n- Content: a\n=======\n- Content: b\n>>>>>>> x\n"))
	for _, name := range []string{"ralph-orchestrator.md", "ralph-pi-mono.md", "ralph-woocommerce.md"} {
		data, err := os.ReadFile(filepath.Join(formatTestdata, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, x []byte) {
		checkFixedPoint(t, x)
		checkFixedPoint(t, append([]byte("### mem-0-fuzz\n"), x...))
		checkFixedPoint(t, append([]byte("- \n"), x...))
	})
}

func checkFixedPoint(t *testing.T, x []byte) {
	t.Helper()
	p1 := memfile.Parse(x)
	r1 := p1.Render()
	p2 := memfile.Parse(r1)
	r2 := p2.Render()
	if !bytes.Equal(r1, r2) {
		t.Fatalf("second rewrite differs\ninput:  %q\nfirst:  %q\nsecond: %q", x, r1, r2)
	}
	if p2.Dialect != p1.Dialect {
		t.Fatalf("dialect %v became %v\ninput: %q\nfirst: %q", p1.Dialect, p2.Dialect, x, r1)
	}
	ids := func(p *memfile.File) []string {
		out := make([]string, len(p.Entries))
		for i := range p.Entries {
			out[i] = p.Entries[i].ID
		}
		slices.Sort(out)
		return out
	}
	if a, b := ids(p1), ids(p2); !slices.Equal(a, b) {
		t.Fatalf("entries changed in the rewrite: %q -> %q\ninput: %q\nfirst: %q", a, b, x, r1)
	}
}
