package ui

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/internal/testgit"
)

// page is a served page and a browser-like client that has opened its
// printed URL (so it holds the token's cookie).
type testPage struct {
	t      *testing.T
	srv    *Server
	ts     *httptest.Server
	client *http.Client
}

// serve serves the page of the memory of the repository at dir, as
// `memsync ui` opens it.
func serve(t *testing.T, dir string) *testPage {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	srv := New(Options{Addr: ts.Listener.Addr().String(), Open: func(warn func(string)) (*memsync.Memory, error) {
		return memsync.Open(dir, memsync.Options{Warn: warn, NoAccessLog: true})
	}})
	ts.Config.Handler = srv
	ts.Start()
	t.Cleanup(ts.Close)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &testPage{t: t, srv: srv, ts: ts, client: &http.Client{Jar: jar}}
	if code, body := p.get(srv.URL()); code != http.StatusOK {
		t.Fatalf("opening the printed URL: %d\n%s", code, body)
	}
	return p
}

// do sends r with the page's client and returns the status and body.
func (p *testPage) do(r *http.Request) (int, string) {
	p.t.Helper()
	resp, err := p.client.Do(r)
	if err != nil {
		p.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// get fetches path (or a whole URL) with the page's client.
func (p *testPage) get(path string) (int, string) {
	p.t.Helper()
	if !strings.HasPrefix(path, "http") {
		path = p.ts.URL + path
	}
	r, err := http.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	return p.do(r)
}

// post submits form to path as the page's own form does (same origin).
func (p *testPage) post(path string, form url.Values, header ...string) (int, string) {
	p.t.Helper()
	r, err := http.NewRequest(http.MethodPost, p.ts.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		p.t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Origin", p.ts.URL)
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	return p.do(r)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the form token the conflicts view carries, read as a browser sees it.
func (p *testPage) csrf() string {
	p.t.Helper()
	_, body := p.get("/conflicts")
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		p.t.Fatalf("no CSRF token in the conflicts view:\n%s", body)
	}
	return m[1]
}

// repo is a new repository with one commit, and its memory.
func repo(t *testing.T) (string, *memsync.Memory) {
	t.Helper()
	dir := testgit.Isolate(t)
	testgit.Git(t, dir, "init", "-q", ".")
	testgit.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	m, err := memsync.Open(dir, memsync.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

func add(t *testing.T, m *memsync.Memory, e memsync.Entry) memsync.Entry {
	t.Helper()
	got, err := m.Add(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// ids are the entry IDs a page lists, in order.
func ids(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<li class="entry" id="e-([^"]+)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func mustContain(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
	if t.Failed() {
		t.Logf("%s:\n%s", what, body)
		t.FailNow()
	}
}

// TestViews: every view renders the memory it shows; search ranks as
// memsync.Search does, and the filters select.
func TestViews(t *testing.T) {
	ctx := context.Background()
	dir, m := repo(t)
	pool := add(t, m, memsync.Entry{Type: "pattern", Tags: []string{"db", "pool"}, Content: "the pool size is set in db/pool.go"})
	add(t, m, memsync.Entry{Content: "tests run in ci; the pool tests need a database"})
	add(t, m, memsync.Entry{Type: "decision", Content: "we chose ninja for builds"})
	if _, err := m.Snapshot(ctx, memsync.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	gone := add(t, m, memsync.Entry{Content: "a fact deleted later"})
	if _, err := m.Snapshot(ctx, memsync.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Delete(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Snapshot(ctx, memsync.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	p := serve(t, dir)

	code, body := p.get("/")
	if code != http.StatusOK || len(ids(body)) != 3 {
		t.Fatalf("/: %d, entries %v\n%s", code, ids(body), body)
	}
	mustContain(t, "/", body, "the pool size is set in db/pool.go", "we chose ninja", `<option>decision</option>`, `<option>pool</option>`)

	hits, err := m.Search(ctx, "pool", memsync.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, h := range hits {
		want = append(want, h.ID)
	}
	for _, path := range []string{"/?q=pool", "/?q=pool&fragment=1"} {
		code, body = p.get(path)
		if got := ids(body); code != http.StatusOK || !slices.Equal(got, want) || len(got) != 2 {
			t.Fatalf("%s: %d, %v, want %v (memsync.Search's order)", path, code, got, want)
		}
	}
	if strings.Contains(body, "<html") {
		t.Fatal("the fragment is a whole page")
	}
	for path, n := range map[string]int{"/?type=pattern": 1, "/?tag=db": 1, "/?worktree=.": 3, "/?worktree=elsewhere": 0,
		"/?branch=nosuch": 0, "/?q=pool&type=decision": 0, "/?archive=1": 0} {
		if code, body = p.get(path); code != http.StatusOK || len(ids(body)) != n {
			t.Errorf("%s: %d, %d entries, want %d", path, code, len(ids(body)), n)
		}
	}

	code, body = p.get("/entry/" + pool.ID)
	if code != http.StatusOK {
		t.Fatalf("entry: %d\n%s", code, body)
	}
	mustContain(t, "the entry", body, pool.ID, "the pool size is set in db/pool.go", "Memsync Test &lt;test@memsync.invalid&gt;",
		"<th>worktree</th><td>.</td>", `<div class="change added"><span class="kind">added</span>`, `<span class="add">`)
	code, body = p.get("/entry/" + gone.ID)
	if code != http.StatusOK {
		t.Fatalf("a deleted entry: %d\n%s", code, body)
	}
	mustContain(t, "a deleted entry", body, "no longer in the memory", "a fact deleted later")
	if code, _ = p.get("/entry/zzzzzzzzzzzz"); code != http.StatusNotFound {
		t.Errorf("an unknown entry: %d, want 404", code)
	}

	code, body = p.get("/history")
	if code != http.StatusOK || strings.Count(body, `<li class="snapshot">`) != 3 {
		t.Fatalf("history: %d\n%s", code, body)
	}
	mustContain(t, "history", body, "+3 −0 ~0", "+1 −0 ~0", "+0 −1 ~0", `<span class="kind">removed</span>`, "/entry/"+pool.ID, "a fact deleted later", "worktree .")
	if _, body = p.get("/history?author=nobody"); strings.Contains(body, `<li class="snapshot">`) {
		t.Error("the author filter kept a snapshot of another author")
	}

	code, body = p.get("/conflicts")
	if code != http.StatusOK {
		t.Fatalf("conflicts: %d", code)
	}
	mustContain(t, "conflicts", body, "No recorded conflicts")
	code, body = p.get("/doctor")
	if code != http.StatusOK {
		t.Fatalf("doctor: %d", code)
	}
	mustContain(t, "doctor", body, "<td>memory</td>", "3 entries")
	if code, body = p.get("/assets/ui.js"); code != http.StatusOK || !strings.Contains(body, "fragment=1") {
		t.Fatalf("ui.js: %d", code)
	}
	if code, _ = p.get("/nosuch"); code != http.StatusNotFound {
		t.Errorf("/nosuch: %d, want 404", code)
	}
}

// TestHostileContent: markup in an entry (from another clone) shows as
// text in every view, and the page allows no inline script anyway.
func TestHostileContent(t *testing.T) {
	ctx := context.Background()
	dir, m := repo(t)
	payload := `<script>alert(1)</script> <img src=x onerror=alert(1)> "quoted" 'single' </pre></textarea>`
	e := add(t, m, memsync.Entry{Title: `<img src=x onerror=alert(1)>`, Tags: []string{`<b>tag</b>`}, Content: payload})
	if _, err := m.Snapshot(ctx, memsync.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	p := serve(t, dir)
	for _, path := range []string{"/", "/?q=alert", "/?q=alert&fragment=1", "/entry/" + e.ID, "/history"} {
		code, body := p.get(path)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", path, code)
		}
		for _, raw := range []string{"<script>alert", "<img src=x", "<b>tag", "</pre></textarea>"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s holds %q unescaped", path, raw)
			}
		}
		if !strings.Contains(body, "&lt;img src=x onerror=alert(1)&gt;") {
			t.Errorf("%s does not show the markup as text:\n%s", path, body)
		}
	}
	// What the address holds is shown back as text too.
	for path, raw := range map[string]string{
		"/?q=%3Cscript%3Ealert(1)%3C/script%3E":               "<script>alert",
		"/?author=%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E": "<img src=x",
		"/entry/%3Cscript%3Ealert(1)%3C%2Fscript%3E":          "<script>alert",
		"/history?author=%22%3E%3Cscript%3Ealert(1)":          "<script>alert",
	} {
		code, body := p.get(path)
		if code != http.StatusOK && code != http.StatusNotFound || strings.Contains(body, raw) {
			t.Errorf("%s: %d, holds %q unescaped: %v", path, code, raw, strings.Contains(body, raw))
		}
	}
	resp, err := p.client.Get(p.ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
}

// TestDamagedMemory: a memory file that does not parse in places (git's
// conflict markers from a merge) shows what parses, and says what did not.
func TestDamagedMemory(t *testing.T) {
	dir, m := repo(t)
	add(t, m, memsync.Entry{Content: "a fact that parses"})
	f, err := os.OpenFile(m.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("<<<<<<< ours\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	p := serve(t, dir)
	code, body := p.get("/")
	if code != http.StatusOK || len(ids(body)) != 1 {
		t.Fatalf("/: %d\n%s", code, body)
	}
	mustContain(t, "a damaged memory", body, `<p class="warning">warning: `, "memories.md:", "a fact that parses")
}

// TestAccess: without the run's token (in the URL or its cookie) every
// request is refused, assets too; with it, the token becomes a cookie the
// page's scripts cannot read, and the URL loses it. A request for another
// Host (DNS rebinding) is refused with a valid cookie, and so is another
// site's page (another local server's too) loading the page.
func TestAccess(t *testing.T) {
	dir, m := repo(t)
	add(t, m, memsync.Entry{Content: "a private fact"})
	p := serve(t, dir)
	bare := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, header ...string) (*http.Response, string) {
		t.Helper()
		r, err := http.NewRequest(http.MethodGet, p.ts.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			if header[i] == "Host" {
				r.Host = header[i+1]
			} else {
				r.Header.Set(header[i], header[i+1])
			}
		}
		resp, err := bare.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	u, err := url.Parse(p.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cookie := p.client.Jar.Cookies(u)
	if len(cookie) != 1 {
		t.Fatalf("cookies after opening the URL: %v", cookie)
	}
	good := cookie[0].Name + "=" + cookie[0].Value
	for _, c := range []struct {
		name, path string
		header     []string
	}{
		{"no token", "/", nil},
		{"no token, an asset", "/assets/ui.css", nil},
		{"no token, an entry", "/entry/1", nil},
		{"a wrong token", "/?token=" + strings.Repeat("A", 43), nil},
		{"a wrong cookie", "/", []string{"Cookie", cookie[0].Name + "=" + strings.Repeat("A", 43)}},
		{"another port's cookie", "/", []string{"Cookie", "memsync_ui_1=" + cookie[0].Value}},
		{"a rebound host name", "/", []string{"Cookie", good, "Host", "attacker.example:" + u.Port()}},
		{"localhost, not the printed address", "/", []string{"Cookie", good, "Host", "localhost:" + u.Port()}},
		{"a rebound host name with the token", "/?token=" + u.Query().Get("token"), []string{"Host", "attacker.example:" + u.Port()}},
		{"another local page's script tag", "/assets/ui.js", []string{"Cookie", good, "Sec-Fetch-Site", "same-site", "Sec-Fetch-Mode", "no-cors"}},
		{"another local page's fetch", "/?q=private&fragment=1", []string{"Cookie", good, "Sec-Fetch-Site", "same-site", "Sec-Fetch-Mode", "cors"}},
		{"another site's image", "/", []string{"Cookie", good, "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors"}},
	} {
		resp, body := get(c.path, c.header...)
		if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "private fact") || len(resp.Cookies()) > 0 {
			t.Errorf("%s: %d, cookies %v\n%s", c.name, resp.StatusCode, resp.Cookies(), body)
		}
	}
	resp, body := get("/", "Cookie", good)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "a private fact") {
		t.Fatalf("with the cookie: %d", resp.StatusCode)
	}
	// A link from another local page opens the page.
	resp, _ = get("/", "Cookie", good, "Sec-Fetch-Site", "same-site", "Sec-Fetch-Mode", "navigate")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a link from another local page: %d", resp.StatusCode)
	}
	resp, _ = get("/history?token=" + u.Query().Get("token"))
	set := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/history" || len(set) != 1 ||
		!set[0].HttpOnly || set[0].SameSite != http.SameSiteStrictMode || set[0].Value != cookie[0].Value {
		t.Fatalf("the token: %d, Location %q, cookies %+v", resp.StatusCode, resp.Header.Get("Location"), set)
	}
}

// buildEnv is the environment the tests started with: go build's cache is
// under the HOME that testgit.Isolate replaces.
var buildEnv = os.Environ()

// bin is the memsync command, built once for the tests that compare the
// page with it.
var bin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "memsync-ui-test-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "memsync")
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", path, "github.com/memsync/memsync/cmd/memsync")
	build.Env = buildEnv
	out, err := build.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return path, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if path, err := bin(); err == nil {
		_ = os.RemoveAll(filepath.Dir(path))
	}
	os.Exit(code)
}

// memsyncCLI runs the memsync command in dir.
func memsyncCLI(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	path, err := bin()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("memsync %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// conflicted is a clone (of a bare remote, shared with a second clone)
// whose last sync recorded conflicts: each of contents was added by the
// first clone, synced to both, then edited differently in each
// ("... (A)", "... (B)") and synced again. It returns the clone and the
// conflicting entries' IDs, in contents' order.
func conflicted(t *testing.T, contents ...string) (string, []string) {
	t.Helper()
	return conflictedAs(t, nil, contents...)
}

// conflictedAs is conflicted with the entries' IDs set (in the first
// clone's file, before its first sync) to ids where they are not "", as a
// teammate's clone may set them.
func conflictedAs(t *testing.T, ids []string, contents ...string) (string, []string) {
	t.Helper()
	ctx := context.Background()
	root := testgit.Isolate(t)
	bare := filepath.Join(root, "remote.git")
	testgit.Git(t, root, "init", "-q", "--bare", bare)
	open := func(name string) *memsync.Memory {
		dir := filepath.Join(root, name)
		testgit.Git(t, root, "clone", "-q", bare, dir)
		m, err := memsync.Open(dir, memsync.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := open("a"), open("b")
	var made []string
	for _, c := range contents {
		made = append(made, add(t, a, memsync.Entry{Content: c}).ID)
	}
	add(t, a, memsync.Entry{Content: "an entry nobody edits"})
	if ids != nil {
		data, err := os.ReadFile(a.Path())
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for i, id := range ids {
			if id != "" {
				text = strings.Replace(text, "- ID: "+made[i]+"\n", "- ID: "+id+"\n", 1)
				made[i] = id
			}
		}
		if err := os.WriteFile(a.Path(), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ids = made
	sync := func(m *memsync.Memory) {
		t.Helper()
		if _, err := m.Sync(ctx, "", memsync.SyncOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sync(a)
	sync(b)
	for _, side := range []struct {
		m      *memsync.Memory
		suffix string
	}{{a, " (A)"}, {b, " (B)"}} {
		data, err := os.ReadFile(side.m.Path())
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, c := range contents {
			text = strings.Replace(text, c, c+side.suffix, 1)
		}
		if err := os.WriteFile(side.m.Path(), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sync(a)
	sync(b) // the merge that finds the conflicts
	cs, err := b.Conflicts(ctx)
	if err != nil || len(cs) != len(contents) {
		t.Fatalf("conflicts: %+v, %v", cs, err)
	}
	return filepath.Join(root, "b"), ids
}

// twin is a copy of the repository at dir, with its git dir and memory.
func twin(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(dir))
	if out, err := exec.Command("cp", "-a", dir, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	return dst
}

// memoryFiles are the bytes of a repository's active memory and archive.
func memoryFiles(t *testing.T, dir string) (string, string) {
	t.Helper()
	m, err := memsync.Open(dir, memsync.Options{})
	if err != nil {
		t.Fatal(err)
	}
	active, err := os.ReadFile(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	archive, err := os.ReadFile(m.ArchivePath())
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(active), string(archive)
}

// TestResolveAsCLI: conflicts made by two clones syncing through a bare
// remote, settled through the page (keep ours, keep theirs, edit) leave
// the memory byte for byte as `memsync resolve` leaves a twin of the
// repository; the conflicts are gone from both.
func TestResolveAsCLI(t *testing.T) {
	dir, ids := conflicted(t, "the pool size is set in db/pool.go", "tests run in ci", "the build uses ninja")
	other := twin(t, dir)
	p := serve(t, dir)

	code, body := p.get("/conflicts")
	if code != http.StatusOK || strings.Count(body, `<section class="conflict"`) != 3 {
		t.Fatalf("conflicts: %d\n%s", code, body)
	}
	mustContain(t, "conflicts", body, "db/pool.go (A)", "db/pool.go (B)", "<h3>base</h3>", "keep theirs", `id="conflict-count">3<`)

	// The edit: the first version (ours) kept, changed, as a person would
	// in the page's text box or in the editor `resolve --edit` opens.
	cf, err := memsyncOpen(t, dir).Conflict(context.Background(), ids[2])
	if err != nil {
		t.Fatal(err)
	}
	text := cf.EditText()
	cut := strings.Index(text, "\n## ")
	cut = cut + 1 + strings.Index(text[cut+1:], "\n## ")
	edited := strings.Replace(text[:cut+1], "ninja (B)", "ninja, or make (edited)", 1)
	if edited == text[:cut+1] {
		t.Fatalf("the edit text lacks ours:\n%s", text)
	}
	editedFile := filepath.Join(t.TempDir(), "edited.md")
	if err := os.WriteFile(editedFile, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}

	csrf := p.csrf()
	// An edit that leaves both entries changes nothing; one that leaves
	// none cancels.
	for edit, want := range map[string]string{text: "hint: keep exactly one entry", "# nothing\n": "nothing changed for " + ids[2]} {
		code, body := p.post("/conflicts/"+ids[2], url.Values{"csrf": {csrf}, "keep": {"edit"}, "text": {edit}})
		if !strings.Contains(body, want) || (code != http.StatusOK && code != http.StatusBadRequest) {
			t.Fatalf("an edit of %q: %d, lacks %q\n%s", edit, code, want, body)
		}
	}
	for i, keep := range []string{"ours", "theirs", "edit"} {
		form := url.Values{"csrf": {csrf}, "keep": {keep}}
		if keep == "edit" {
			form.Set("text", edited)
		}
		code, body := p.post("/conflicts/"+ids[i], form)
		if code != http.StatusOK || !strings.Contains(body, "resolved <code>"+ids[i]+"</code>") {
			t.Fatalf("keep %s through the page: %d\n%s", keep, code, body)
		}
		args := []string{"resolve", ids[i], "--" + keep}
		memsyncCLI(t, other, []string{"VISUAL=cp " + editedFile}, args...)
	}
	pa, pr := memoryFiles(t, dir)
	ca, cr := memoryFiles(t, other)
	if pa != ca || pr != cr {
		t.Fatalf("the page and the command line differ:\npage:\n%s\ncommand line:\n%s", pa, ca)
	}
	for _, want := range []string{"db/pool.go (B)", "tests run in ci (A)", "ninja, or make (edited)"} {
		if !strings.Contains(pa, want) {
			t.Errorf("the memory lacks %q:\n%s", want, pa)
		}
	}
	if _, body = p.get("/conflicts"); !strings.Contains(body, "No recorded conflicts") {
		t.Fatalf("conflicts left in the page:\n%s", body)
	}
	if out := memsyncCLI(t, other, nil, "conflicts"); !strings.Contains(out, "no recorded conflicts") {
		t.Fatalf("conflicts left in the twin:\n%s", out)
	}
}

func memsyncOpen(t *testing.T, dir string) *memsync.Memory {
	t.Helper()
	m, err := memsync.Open(dir, memsync.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestForgedResolve: a POST from another origin, or without the page's
// form token, or without the cookie, changes nothing.
func TestForgedResolve(t *testing.T) {
	dir, ids := conflicted(t, "the pool size is set in db/pool.go")
	p := serve(t, dir)
	before, _ := memoryFiles(t, dir)
	csrf := p.csrf()
	good := url.Values{"csrf": {csrf}, "keep": {"theirs"}}
	for _, c := range []struct {
		name   string
		form   url.Values
		header []string
	}{
		{"another origin", good, []string{"Origin", "http://attacker.example"}},
		{"a cross-site fetch", good, []string{"Origin", "http://attacker.example", "Sec-Fetch-Site", "cross-site"}},
		{"a cross-site form without Origin", good, []string{"Origin", "", "Sec-Fetch-Site", "cross-site"}},
		{"another local page", good, []string{"Origin", "http://127.0.0.1:1", "Sec-Fetch-Site", "same-site"}},
		{"no form token", url.Values{"keep": {"theirs"}}, nil},
		{"a wrong form token", url.Values{"csrf": {strings.Repeat("A", 43)}, "keep": {"theirs"}}, nil},
	} {
		if code, body := p.post("/conflicts/"+ids[0], c.form, c.header...); code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403\n%s", c.name, code, body)
		}
	}
	// Without the cookie: a fresh client.
	r, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/conflicts/"+ids[0], strings.NewReader(good.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("without the cookie: %d, want 403", resp.StatusCode)
	}
	if after, _ := memoryFiles(t, dir); after != before {
		t.Fatal("a refused request changed the memory")
	}
	if cs, err := memsyncOpen(t, dir).Conflicts(context.Background()); err != nil || len(cs) != 1 {
		t.Fatalf("conflicts after refused requests: %d, %v", len(cs), err)
	}
	// A body past the bound is not read: no form token in it counts.
	huge := url.Values{"csrf": {csrf}, "keep": {"edit"}, "text": {strings.Repeat("x", maxForm)}}
	if code, _ := p.post("/conflicts/"+ids[0], huge); code != http.StatusForbidden {
		t.Errorf("a body over %d bytes: %d, want 403", maxForm, code)
	}
	if code, _ := p.post("/conflicts/"+ids[0], url.Values{"csrf": {csrf}, "keep": {"all"}}); code != http.StatusBadRequest {
		t.Errorf("keep all: %d, want 400", code)
	}
}

// TestResolveRefused: a worker may not resolve: the page says so, and a
// resolution it is sent anyway is refused with memsync's words.
func TestResolveRefused(t *testing.T) {
	dir, ids := conflicted(t, "the pool size is set in db/pool.go")
	t.Setenv("MEMSYNC_ROLE", "worker")
	p := serve(t, dir)
	_, body := p.get("/conflicts")
	mustContain(t, "the worker's conflicts", body, "Resolving is not allowed here", "disabled")
	code, body := p.post("/conflicts/"+ids[0], url.Values{"csrf": {p.csrf()}, "keep": {"theirs"}})
	if code != http.StatusConflict || !strings.Contains(body, `class="error"`) {
		t.Fatalf("a worker's resolution: %d\n%s", code, body)
	}
}

// TestListen: only loopback addresses.
func TestListen(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0x", "192.0.2.1:0", "example.com:0", "[::]:0"} {
		if l, err := Listen(addr); err == nil {
			_ = l.Close()
			t.Errorf("Listen(%q) listened on %s", addr, l.Addr())
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", ":0"} {
		l, err := Listen(addr)
		if err != nil {
			t.Errorf("Listen(%q): %v", addr, err)
			continue
		}
		if !strings.HasPrefix(l.Addr().String(), "127.0.0.1:") {
			t.Errorf("Listen(%q) listens on %s", addr, l.Addr())
		}
		_ = l.Close()
	}
}

// TestStaleAndSupersededMarks: an entry whose cited lines changed since (as
// memsync check found) is marked on the memory's page and its own; an
// entry that replaced another links to it.
func TestStaleAndSupersededMarks(t *testing.T) {
	ctx := context.Background()
	dir, m := repo(t)
	pool := filepath.Join(dir, "pool.go")
	if err := os.WriteFile(pool, []byte("package db\n\nconst size = 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, dir, "add", "pool.go")
	testgit.Git(t, dir, "commit", "-q", "-m", "pool")
	old := add(t, m, memsync.Entry{Content: "the pool holds ten connections"})
	cited, err := m.AddWith(ctx, memsync.Entry{Content: "the pool size is a constant"}, memsync.AddOptions{Cite: []string{"pool.go:3"}, Supersedes: old.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pool, []byte("package db\n\nconst size = 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Check(ctx, memsync.CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	p := serve(t, dir)
	for _, path := range []string{"/", "/entry/" + cited.ID} {
		code, body := p.get(path)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", path, code)
		}
		mustContain(t, path, body, `class="stale"`, "may be stale: ", "pool.go", "supersedes <a href=\"/entry/"+old.ID)
	}
}

var conflictForm = regexp.MustCompile(`(?s)<section class="conflict" id="c-([^"]*)">.*?<form method="post" action="([^"]*)"`)

// TestConflictFormsNameTheirConflict: an entry ID is any text a teammate's
// clone wrote, so one may hold ?, # or %: each conflict's buttons still
// settle that conflict and no other. They used to post to the ID as a URL
// path, so "ID?x" or "ID#x" settled the conflict ID, and "%6C..." the one
// its decoding names.
func TestConflictFormsNameTheirConflict(t *testing.T) {
	const legit = "legit0000001"
	hostile := []string{legit + "?x=1", legit + "#x", "%6Cegit0000001"}
	dir, ids := conflictedAs(t, append([]string{legit}, hostile...), "a legit fact", "hostile one", "hostile two", "hostile three")
	p := serve(t, dir)
	csrf := p.csrf()
	for _, id := range ids[1:] {
		_, body := p.get("/conflicts")
		action := ""
		for _, m := range conflictForm.FindAllStringSubmatch(body, -1) {
			if html.UnescapeString(m[1]) == id {
				action = html.UnescapeString(m[2])
			}
		}
		if action == "" {
			t.Fatalf("no form for the conflict %q:\n%s", id, body)
		}
		if code, body := p.post(action, url.Values{"csrf": {csrf}, "keep": {"theirs"}}); code != http.StatusOK {
			t.Fatalf("keep theirs of %q (posted to %s): %d\n%s", id, action, code, body)
		}
		cs, err := memsyncOpen(t, dir).Conflicts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, c := range cs {
			left = append(left, c.ID)
		}
		if slices.Contains(left, id) || !slices.Contains(left, legit) {
			t.Fatalf("the button of %q (posting to %s) left the conflicts %q", id, action, left)
		}
	}
}

// TestResolveResolvedElsewhere: a button pressed after another process
// settled its conflict changes nothing and says so, even when the ID it
// names is the start of another conflict's ID (which `memsync resolve`
// accepts as a prefix). The page used to settle that other conflict.
func TestResolveResolvedElsewhere(t *testing.T) {
	const first = "legit0000001"
	dir, ids := conflictedAs(t, []string{first, first + "x"}, "a legit fact", "another fact")
	p := serve(t, dir)
	csrf := p.csrf()
	memsyncCLI(t, dir, nil, "resolve", first, "--theirs")
	before, _ := memoryFiles(t, dir)
	for _, keep := range []string{"ours", "theirs", "edit"} {
		form := url.Values{"csrf": {csrf}, "keep": {keep}, "text": {"## a legit fact (edited)\n- Content: a legit fact (edited)\n"}}
		code, body := p.post("/conflicts/"+first, form)
		if code != http.StatusNotFound || !strings.Contains(body, "no recorded conflict") {
			t.Errorf("keep %s of the conflict settled elsewhere: %d\n%s", keep, code, body)
		}
	}
	cs, err := memsyncOpen(t, dir).Conflicts(context.Background())
	if err != nil || len(cs) != 1 || cs[0].ID != ids[1] {
		t.Fatalf("conflicts left: %+v, %v (want %s alone)", cs, err, ids[1])
	}
	if after, _ := memoryFiles(t, dir); after != before {
		t.Fatalf("the memory changed:\n%s", after)
	}
}

// TestTokenRedirectStaysHere: the printed address with a path of its own
// ("//host/...", which a browser reads as another site) is redirected to a
// path of this page, never to another site. It used to answer "Location:
// //evil.example/x".
func TestTokenRedirectStaysHere(t *testing.T) {
	dir, _ := repo(t)
	p := serve(t, dir)
	u, err := url.Parse(p.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	bare := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"//evil.example/x", "///evil.example", "/\\evil.example", "//evil.example"} {
		r, err := http.NewRequest(http.MethodGet, p.ts.URL+"/?token="+u.Query().Get("token"), nil)
		if err != nil {
			t.Fatal(err)
		}
		r.URL.Path, r.URL.RawPath = path, ""
		resp, err := bare.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		loc, err := resp.Location()
		if resp.StatusCode != http.StatusSeeOther || err != nil || loc.Host != u.Host {
			t.Errorf("%s with the token: %d, Location %q", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

// TestForgedAuthorClaimed: an entry a teammate's clone brought whose Author
// bullet names this user shows that author as claimed, with who made the
// snapshot that brought it; this user's own entry shows no such mark.
func TestForgedAuthorClaimed(t *testing.T) {
	ctx := context.Background()
	root := testgit.Isolate(t)
	bare := filepath.Join(root, "remote.git")
	testgit.Git(t, root, "init", "-q", "--bare", bare)
	as := func(name string) {
		for _, k := range []string{"AUTHOR", "COMMITTER"} {
			t.Setenv("GIT_"+k+"_NAME", name)
			t.Setenv("GIT_"+k+"_EMAIL", strings.ToLower(name)+"@example.com")
		}
	}
	clone := func(name string) (string, *memsync.Memory) {
		dir := filepath.Join(root, name)
		testgit.Git(t, root, "clone", "-q", bare, dir)
		m, err := memsync.Open(dir, memsync.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return dir, m
	}
	sync := func(m *memsync.Memory) {
		if _, err := m.Sync(ctx, "", memsync.SyncOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	as("Ann")
	dirA, a := clone("a")
	own := add(t, a, memsync.Entry{Content: "ann's own note"})
	sync(a)
	as("Bob")
	_, b := clone("b")
	sync(b)
	f, err := os.OpenFile(b.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n## Decision: deploy from the laptop\n- ID: forged-1\n- Author: Ann <ann@example.com>\n\nskip the review\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	sync(b)
	as("Ann")
	sync(a)
	p := serve(t, dirA)
	for _, path := range []string{"/", "/entry/forged-1"} {
		code, body := p.get(path)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", path, code)
		}
		mustContain(t, path, body, `class="claimed"`, "claimed; snapshot by Bob &lt;bob@example.com&gt;")
	}
	if _, body := p.get("/entry/forged-1"); !strings.Contains(body, "(claimed: the snapshot that brought it from another clone is by Bob") {
		t.Errorf("the entry page does not call the author claimed:\n%s", body)
	}
	if _, body := p.get("/entry/" + own.ID); strings.Contains(body, `class="claimed"`) {
		t.Errorf("ann's own entry is marked claimed:\n%s", body)
	}
}
