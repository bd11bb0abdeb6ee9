package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsLibraryOnly: the command line is an adapter over the library:
// its code (tests aside) imports of this module only the root package and
// mcpserver, so whatever it needs is reached through the public API.
func TestImportsLibraryOnly(t *testing.T) {
	const module = "github.com/memsync/memsync"
	allowed := map[string]bool{module: true, module + "/mcpserver": true}
	for _, dir := range []string{".", filepath.Join("..", "memsync-demo")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p, err := strconv.Unquote(imp.Path.Value)
				if err != nil {
					t.Fatal(err)
				}
				if (p == module || strings.HasPrefix(p, module+"/")) && !allowed[p] {
					t.Errorf("%s imports %s: reach it through package memsync (or mcpserver)", path, p)
				}
			}
		}
	}
}
