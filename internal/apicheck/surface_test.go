package apicheck

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/surface.txt with the public surface as it is")

// publicPackages are the packages outside internal/ (docs/layout.md: Layout of the
// code). A package added outside internal/ fails TestPublicSurface until it
// is listed here and in the surface file.
var publicPackages = []string{".", "embed", "hooks", "lock", "mcpserver", "memfile", "memory", "worktree"}

// TestPublicSurface: the exported identifiers of the public packages are
// the reviewed list in testdata/surface.txt. An addition or a removal fails
// until the list is rewritten on purpose (go test ./internal/apicheck
// -run TestPublicSurface -update) and the change reviewed in the diff, so
// the public surface does not grow back by accident.
func TestPublicSurface(t *testing.T) {
	root := filepath.Join("..", "..")
	var got []string
	for _, pkg := range publicPackages {
		name := pkg
		if pkg == "." {
			name = "memsync"
		}
		got = append(got, exported(t, filepath.Join(root, pkg), name)...)
	}
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		name := d.Name()
		if d.IsDir() && name != "internal" && name != "cmd" && name != "scripts" && name != "testdata" && !strings.HasPrefix(name, ".") && !slices.Contains(publicPackages, name) {
			if m, _ := filepath.Glob(filepath.Join(root, name, "*.go")); len(m) > 0 {
				t.Errorf("package %s is outside internal/ but not a reviewed public package", name)
			}
		}
	}
	want := filepath.Join("testdata", "surface.txt")
	text := strings.Join(got, "\n") + "\n"
	if *update {
		if err := os.WriteFile(want, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != text {
		have := strings.Split(strings.TrimSpace(string(b)), "\n")
		for _, g := range got {
			if !slices.Contains(have, g) {
				t.Errorf("new public identifier %s (review it, then -update)", g)
			}
		}
		for _, h := range have {
			if !slices.Contains(got, h) {
				t.Errorf("public identifier %s is gone (review it, then -update)", h)
			}
		}
	}
	t.Logf("%d exported identifiers in %d public packages", len(got), len(publicPackages))
}

// exported lists the exported identifiers of the package in dir (non-test
// files): "pkg.Name" for functions, types, variables and constants,
// "pkg.Type.Method" for methods of exported types.
func exported(t *testing.T, dir, pkg string) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					out = append(out, pkg+"."+d.Name.Name)
					continue
				}
				recv := d.Recv.List[0].Type
				if s, ok := recv.(*ast.StarExpr); ok {
					recv = s.X
				}
				if g, ok := recv.(*ast.IndexExpr); ok {
					recv = g.X
				}
				if id, ok := recv.(*ast.Ident); ok && id.IsExported() {
					out = append(out, pkg+"."+id.Name+"."+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							out = append(out, pkg+"."+s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								out = append(out, pkg+"."+n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
