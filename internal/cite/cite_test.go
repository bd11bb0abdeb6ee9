package cite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/testgit"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		spec       string
		path       string
		start, end int
		bad        bool
	}{
		{spec: "db/pool.go", path: "db/pool.go"},
		{spec: "db/pool.go:42", path: "db/pool.go", start: 42, end: 42},
		{spec: "db/pool.go:10-12", path: "db/pool.go", start: 10, end: 12},
		{spec: "a dir/x y.go:3", path: "a dir/x y.go", start: 3, end: 3},
		{spec: "odd:3:", path: "odd:3"},
		{spec: "c:\\x", path: "c:\\x"},
		{spec: "f.go:12-10", bad: true},
		{spec: "f.go:0", bad: true},
		{spec: "f.go:1-", bad: true},
		{spec: ":4", bad: true},
		{spec: "", bad: true},
		{spec: "a\nb", bad: true},
	} {
		p, s, e, err := ParseSpec(tc.spec)
		if tc.bad {
			if err == nil || !errors.Is(err, ErrSpec) {
				t.Errorf("ParseSpec(%q) = %q %d %d, %v; want an ErrSpec", tc.spec, p, s, e, err)
			}
			continue
		}
		if err != nil || p != tc.path || s != tc.start || e != tc.end {
			t.Errorf("ParseSpec(%q) = %q %d %d, %v; want %q %d %d", tc.spec, p, s, e, err, tc.path, tc.start, tc.end)
		}
	}
}

func TestFormatParse(t *testing.T) {
	cs := []Citation{
		{Path: "db/pool.go", Start: 10, End: 12, Commit: "3f2a1c4e5d6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b", Sum: "0123456789abcdef"},
		{Path: "a dir/we;ird:na@me#%,|.go", Sum: "fedcba9876543210"},
		{Path: "README.md", Start: 4, End: 4, Sum: "00000000000000ff"},
	}
	v := Format(cs)
	if strings.ContainsAny(v, "\n,|") {
		t.Fatalf("Format gave %q: not one line, or a ralph separator", v)
	}
	got, err := Parse(v)
	if err != nil || !slices.Equal(got, cs) {
		t.Fatalf("Parse(Format(cs)) = %+v, %v\nwant %+v", got, err, cs)
	}
	got, err = Parse("x.go #abc; nonsense; y.go:2-3 @ab #cd")
	if err == nil || len(got) != 2 {
		t.Fatalf("Parse with a bad part = %+v, %v; want the two good ones and an error", got, err)
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"db/pool.go", "a:1", "a:1-2", "a:2-1", "odd:3:", "x y:9999999999", ":", "a:-", "a:+1", "x\u00a0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, s, e, err := ParseSpec(spec)
		if err != nil {
			return
		}
		if p == "" || s < 0 || e < s || s > maxLine || e > maxLine || (s == 0) != (e == 0) {
			t.Fatalf("ParseSpec(%q) = %q %d %d", spec, p, s, e)
		}
		// The stored form reads back as the same citation.
		c := Citation{Path: p, Start: s, End: e, Sum: "ab"}
		got, err := Parse(Format([]Citation{c}))
		if err != nil || len(got) != 1 || got[0] != c {
			t.Fatalf("round trip of %+v: %+v, %v", c, got, err)
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add("db/pool.go:10-12 @3f2a #0123; README.md #ab")
	f.Add("a%20b:1-1 #ff")
	f.Fuzz(func(t *testing.T, v string) {
		cs, _ := Parse(v)
		for _, c := range cs {
			if c.Path == "" || c.Sum == "" || c.End < c.Start {
				t.Fatalf("Parse(%q) gave %+v", v, c)
			}
		}
	})
}

func TestFind(t *testing.T) {
	text := Lines([]byte("a\nb\nc\nd\ne\nb\nc\n"))
	sum, _ := text.Sum(2, 3)
	if got := text.Find(sum, 2, 2); got != 2 {
		t.Errorf("Find at its place = %d, want 2", got)
	}
	if got := text.Find(sum, 6, 2); got != 6 {
		t.Errorf("Find near 6 = %d, want the nearer copy at 6", got)
	}
	if got := text.Find("0000000000000000", 2, 2); got != 0 {
		t.Errorf("Find of nothing = %d", got)
	}
	indented, _ := Lines([]byte("x\n\t  b\r\n c \n")).Sum(2, 3)
	if indented != sum {
		t.Errorf("re-indented lines have another fingerprint")
	}
}

// repo is a git repository with one commit of files.
type repo struct {
	t   testing.TB
	top string
}

func newRepo(t testing.TB, files map[string]string) *repo {
	top := testgit.Isolate(t)
	testgit.Git(t, top, "init", "-q")
	r := &repo{t, top}
	for p, s := range files {
		r.write(p, s)
	}
	testgit.Git(t, top, "add", "-A")
	testgit.Git(t, top, "commit", "-q", "-m", "files")
	return r
}

func (r *repo) write(p, s string) {
	full := filepath.Join(r.top, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) git(args ...string) string { return testgit.Git(r.t, r.top, args...) }

func (r *repo) index() *Index {
	ix, err := ReadIndex(filepath.Join(r.top, ".git", "index"))
	if err != nil {
		r.t.Fatal(err)
	}
	return ix
}

func (r *repo) maker() *Maker {
	return &Maker{Top: r.top, Commit: r.git("rev-parse", "HEAD"), Index: r.index()}
}

func (r *repo) cite(spec string) Citation {
	c, err := r.maker().FromSpec(spec)
	if err != nil {
		r.t.Fatalf("cite %s: %v", spec, err)
	}
	return c
}

func (r *repo) check(c Citation) Result {
	k := &Checker{Top: r.top, Index: r.index(), Renames: GitRenames(context.Background(), r.top)}
	return k.Check(c)
}

// numbered is n lines "line 1" ... "line n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   string
		change func(r *repo)
		state  State
		now    string // the citation's spec now
		reason string // a part of the reason
	}{
		{"unchanged", "db/pool.go:10-12", func(*repo) {}, Fresh, "db/pool.go:10-12", ""},
		{"lines inserted above", "db/pool.go:10-12", func(r *repo) { r.write("db/pool.go", "new\nnew\nnew\n"+numbered(20)) }, Moved, "db/pool.go:13-15", "moved to lines 13-15"},
		{"lines removed above", "db/pool.go:10-12", func(r *repo) { r.write("db/pool.go", strings.SplitN(numbered(20), "\n", 6)[5]) }, Moved, "db/pool.go:5-7", "moved to lines 5-7"},
		{"lines changed", "db/pool.go:10-12", func(r *repo) {
			r.write("db/pool.go", strings.Replace(numbered(20), "line 11\n", "line eleven\n", 1))
		}, Stale, "db/pool.go:10-12", "db/pool.go lines 10-12 changed since "},
		{"a line changed below", "db/pool.go:10-12", func(r *repo) {
			r.write("db/pool.go", strings.Replace(numbered(20), "line 15\n", "line fifteen\n", 1))
		}, Fresh, "db/pool.go:10-12", ""},
		{"whole file changed", "db/pool.go", func(r *repo) { r.write("db/pool.go", numbered(21)) }, Stale, "db/pool.go", "db/pool.go changed since"},
		{"file deleted", "db/pool.go:3", func(r *repo) { r.git("rm", "-q", "db/pool.go") }, Stale, "db/pool.go:3", "db/pool.go was deleted since"},
		{"file deleted, not with git", "db/pool.go:3", func(r *repo) { _ = os.Remove(filepath.Join(r.top, "db/pool.go")) }, Stale, "db/pool.go:3", "was deleted"},
		{"git mv", "db/pool.go:10-12", func(r *repo) { r.git("mv", "db/pool.go", "db/conn.go") }, Renamed, "db/conn.go:10-12", "renamed to db/conn.go"},
		{"git mv and committed", "db/pool.go", func(r *repo) { r.git("mv", "db/pool.go", "db/conn.go"); r.git("commit", "-qm", "mv") }, Renamed, "db/conn.go", "renamed to db/conn.go"},
		{"git mv, lines moved there", "db/pool.go:10-12", func(r *repo) {
			r.git("mv", "db/pool.go", "db/conn.go")
			r.write("db/conn.go", "package db\n"+numbered(20))
		}, Renamed, "db/conn.go:11-13", "renamed to db/conn.go"},
		{"git mv, lines changed there", "db/pool.go:10-12", func(r *repo) {
			r.git("mv", "db/pool.go", "db/conn.go")
			r.write("db/conn.go", strings.Replace(numbered(20), "line 10\n", "line ten\n", 1))
		}, Stale, "db/conn.go:10-12", "db/pool.go was renamed to db/conn.go and changed since"},
		{"file shrank past the range", "db/pool.go:10-12", func(r *repo) { r.write("db/pool.go", numbered(8)) }, Stale, "db/pool.go:10-12", "db/pool.go lines 10-12 is past the end of the file (8 lines)"},
		{"path with spaces", "my dir/the file.go:2-3", func(r *repo) { r.write("my dir/the file.go", "x\n"+numbered(4)) }, Moved, "my dir/the file.go:3-4", "moved to lines 3-4"},
		{"replaced by a folder", "db/pool.go", func(r *repo) {
			_ = os.Remove(filepath.Join(r.top, "db/pool.go"))
			r.write("db/pool.go/x", "x")
		}, Stale, "db/pool.go", "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t, map[string]string{"db/pool.go": numbered(20), "my dir/the file.go": numbered(4), "other.go": "package other\n"})
			c := r.cite(tc.spec)
			tc.change(r)
			got := r.check(c)
			if got.State != tc.state || got.Now.Spec() != tc.now || !strings.Contains(got.Reason, tc.reason) || (tc.reason == "") != (got.Reason == "") {
				t.Fatalf("check %s = %s %s %q; want %s %s %q", tc.spec, got.State, got.Now.Spec(), got.Reason, tc.state, tc.now, tc.reason)
			}
		})
	}
}

func TestFromSpecRefuses(t *testing.T) {
	r := newRepo(t, map[string]string{"a.go": numbered(5), "sub/b.go": numbered(3)})
	outside := filepath.Join(t.TempDir(), "x.go")
	if err := os.WriteFile(outside, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(r.top, "link.go")); err != nil {
		t.Fatal(err)
	}
	mk := r.maker()
	for spec, want := range map[string]error{
		outside:        ErrOutside,
		"../x.go":      ErrOutside,
		".git/config":  ErrOutside,
		"link.go":      ErrOutside, // a link in the repository to a file outside
		"a.go:4-6":     ErrSpec,    // past the end
		"missing.go":   ErrSpec,
		"sub":          ErrSpec,
		"a.go:2-1":     ErrSpec,
		"sub/../a.go:": nil,
	} {
		_, err := mk.FromSpec(spec)
		if want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Errorf("FromSpec(%q) = %v, want %v", spec, err, want)
		}
	}
	mk.Dir = filepath.Join(r.top, "sub")
	c, err := mk.FromSpec("b.go:2")
	if err != nil || c.Path != "sub/b.go" || c.Start != 2 {
		t.Errorf("FromSpec relative to sub = %+v, %v", c, err)
	}
}

func TestAuto(t *testing.T) {
	r := newRepo(t, map[string]string{"backend/db/pool.go": numbered(50), "a/util.go": "x\n", "b/util.go": "y\n", "README.md": "# r\n"})
	r.write("untracked.go", "u\n")
	got := r.maker().Auto("The pool size is set in `backend/db/pool.go` (see pool.go:42, and pool.go:40-44). " +
		"util.go is ambiguous; untracked.go is not tracked; README.md. nothing/here.go, pool.go:999.")
	var specs []string
	for _, c := range got {
		specs = append(specs, c.Spec())
	}
	want := []string{"backend/db/pool.go", "backend/db/pool.go:42", "backend/db/pool.go:40-44", "README.md"}
	if !slices.Equal(specs, want) {
		t.Fatalf("Auto = %q, want %q", specs, want)
	}
}

func TestIndexMatchesGit(t *testing.T) {
	files := map[string]string{"a.go": "a\n", "dir/b c.go": "b\n", "dir/sub/deep/d.txt": "d\n"}
	for i := range 30 {
		files[fmt.Sprintf("many/f%02d.go", i)] = fmt.Sprint(i)
	}
	r := newRepo(t, files)
	for _, version := range []string{"2", "3", "4"} {
		r.git("update-index", "--index-version", version)
		ix := r.index()
		for _, line := range strings.Split(r.git("ls-files", "-s"), "\n") {
			meta, p, _ := strings.Cut(line, "\t")
			blob := strings.Fields(meta)[1]
			fi, err := os.Stat(filepath.Join(r.top, p))
			if err != nil {
				t.Fatal(err)
			}
			if !ix.Tracked(p) {
				t.Fatalf("index v%s: %q not tracked", version, p)
			}
			if got, ok := ix.Blob(p, fi); ok && got != blob {
				t.Fatalf("index v%s: %q blob %s, git says %s", version, p, got, blob)
			}
		}
		if ix.Len() != len(files) {
			t.Fatalf("index v%s: %d entries, want %d", version, ix.Len(), len(files))
		}
	}
	if got := BlobID([]byte("a\n")); got != r.git("hash-object", "a.go") {
		t.Errorf("BlobID = %s, git says otherwise", got)
	}
}

func TestCacheByBlob(t *testing.T) {
	r := newRepo(t, map[string]string{"a.go": numbered(10)})
	c := r.cite("a.go:3-4")
	path := filepath.Join(t.TempDir(), "cache")
	// The files are older than the index once git has written it again.
	r.git("update-index", "--really-refresh")
	run := func() (*Cache, Result) {
		cache := OpenCache(path)
		k := &Checker{Top: r.top, Index: r.index(), Cache: cache}
		res := k.Check(c)
		if err := cache.Save(0o600); err != nil {
			t.Fatal(err)
		}
		return cache, res
	}
	cache, res := run()
	if res.State != Fresh || len(cache.entries) != 1 {
		t.Fatalf("first check: %+v, cache %v", res, cache.entries)
	}
	blob := r.git("rev-parse", "HEAD:a.go")
	for k := range cache.entries {
		if k.blob != blob {
			t.Fatalf("cached under %s, want the blob %s", k.blob, blob)
		}
	}
	// A cached finding is used without reading the file: make the file
	// unreadable and keep its size and time.
	full := filepath.Join(r.top, "a.go")
	if err := os.Chmod(full, 0); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chmod(full, 0o644) }()
	if os.Getuid() == 0 {
		t.Skip("root reads unreadable files")
	}
	if _, res = run(); res.State != Fresh {
		t.Fatalf("second check did not use the cache: %+v", res)
	}
}

// TestFindBounded: a large block cited in a large file that no longer
// holds it is given up on in bounded time.
func TestFindBounded(t *testing.T) {
	var b strings.Builder
	for i := range 400000 {
		fmt.Fprintf(&b, "%d\n", i)
	}
	text := Lines([]byte(b.String()))
	start := time.Now()
	if got := text.Find("0000000000000000", 200000, 5000); got != 0 {
		t.Fatalf("Find = %d", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Find took %v", d)
	}
}
