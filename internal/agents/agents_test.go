package agents

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the want/ files of testdata/*.txtar")

// TestGolden runs each testdata/*.txtar: its comment's first line is
// "AGENT SCOPE [rules]" (or "AGENT SCOPE refuses" for a file setup must
// refuse); home/ and repo/ are the files before, want/ the files setup
// leaves ($TOP stands for the repository's top). Each setup then runs
// again and changes nothing, and --remove gives back the files before,
// byte for byte (a file setup made is removed).
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txtar")
	if len(files) == 0 {
		t.Fatal("no testdata/*.txtar")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			args := strings.Fields(strings.SplitN(string(ar.Comment), "\n", 2)[0])
			a, err := Find(args[0])
			if err != nil {
				t.Fatal(err)
			}
			sc, err := a.Scope(args[1])
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			e := Env{Home: filepath.Join(dir, "home"), Top: filepath.Join(dir, "repo"), GOOS: "linux",
				Command: "/opt/memsync/bin/memsync"}
			e.ConfigHome, e.CodexHome = filepath.Join(e.Home, ".config"), filepath.Join(e.Home, ".codex")
			before := map[string]string{}
			for _, f := range ar.Files {
				if strings.HasPrefix(f.Name, "want/") {
					continue
				}
				data := strings.ReplaceAll(string(f.Data), "$TOP", e.Top)
				before[f.Name] = data
				write(t, filepath.Join(dir, f.Name), data)
			}
			o := Options{Scope: sc, Rules: slices.Contains(args, "rules")}
			p, err := Setup(a, e, o)
			if slices.Contains(args, "refuses") {
				var fe *FileError
				if !errors.As(err, &fe) || !strings.HasPrefix(fe.Path, dir) {
					t.Fatalf("setup of a bad file: %v, want a FileError naming it", err)
				}
				t.Log(err)
				checkFiles(t, dir, before)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Apply(); err != nil {
				t.Fatal(err)
			}
			after := readTree(t, dir)
			if *update {
				var keep []txtar.File
				for _, f := range ar.Files {
					if !strings.HasPrefix(f.Name, "want/") {
						keep = append(keep, f)
					}
				}
				for _, name := range sortedKeys(after) {
					if after[name] != before[name] {
						keep = append(keep, txtar.File{Name: "want/" + name, Data: []byte(strings.ReplaceAll(after[name], e.Top, "$TOP"))})
					}
				}
				ar.Files = keep
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				want := maps(before)
				for _, f := range ar.Files {
					if name, ok := strings.CutPrefix(f.Name, "want/"); ok {
						want[name] = strings.ReplaceAll(string(f.Data), "$TOP", e.Top)
					}
				}
				checkFiles(t, dir, want)
			}
			again, err := Setup(a, e, o)
			if err != nil || len(again.Changes) != 0 {
				t.Fatalf("setup again: %v, changes %v", err, again.Changes)
			}
			o.Remove = true
			rm, err := Setup(a, e, o)
			if err != nil {
				t.Fatal(err)
			}
			if err := rm.Apply(); err != nil {
				t.Fatal(err)
			}
			if slices.Contains(args, "update") { // memsync's table was there before: it goes
				if ok, err := a.Wired(e, sc); ok || err != nil {
					t.Fatalf("still wired after remove: %v", err)
				}
				return
			}
			checkFiles(t, dir, before)
		})
	}
}

func maps(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readTree is every file under dir, by its slash path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkFiles: the files under dir are exactly want.
func checkFiles(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	got := readTree(t, dir)
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s is missing", name)
		} else if g != w {
			t.Errorf("%s:\n%s\nwant:\n%s", name, g, w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is there:\n%s", name, got[name])
		}
	}
}

func TestDefaultScopesLeaveTrackedFiles(t *testing.T) {
	e := Env{Home: "/h", Top: "/r", ConfigHome: "/h/.config", CodexHome: "/h/.codex", GOOS: "linux"}
	for _, a := range All() {
		path := a.ServerFile(e, a.Scopes[0])
		if strings.HasPrefix(path, "/r/") {
			t.Errorf("%s's default scope %s writes %s in the repository", a.Name, a.Scopes[0], path)
		}
	}
}

// TestRemoveHooksOfAnyName: --remove takes out the hooks setup wrote
// whatever the binary is called (it was found by the name memsync only,
// so a binary named otherwise left its hooks behind).
func TestRemoveHooksOfAnyName(t *testing.T) {
	for _, a := range []*Agent{claude, gemini} {
		dir := t.TempDir()
		e := Env{Home: filepath.Join(dir, "home"), Top: filepath.Join(dir, "repo"), GOOS: "linux", Command: "/opt/bin/memsync-v2"}
		e.ConfigHome, e.CodexHome = filepath.Join(e.Home, ".config"), filepath.Join(e.Home, ".codex")
		for _, remove := range []bool{false, true} {
			p, err := Setup(a, e, Options{Scope: User, Remove: remove})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Apply(); err != nil {
				t.Fatal(err)
			}
		}
		checkFiles(t, dir, map[string]string{})
	}
}
