package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	uipage "github.com/memsync/memsync/internal/ui"
)

// chromium is the path of Debian's chromium; without one the browser test
// skips, unless MEMSYNC_TEST_CHROMIUM=required (CI) makes that a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("MEMSYNC_TEST_CHROMIUM") == "required" {
		t.Fatal("chromium is not installed and MEMSYNC_TEST_CHROMIUM=required: apt-get install chromium")
	}
	t.Skip("chromium is not installed (apt-get install chromium); MEMSYNC_TEST_CHROMIUM=required makes this a failure")
	return ""
}

// TestUIBrowser: `memsync ui` in a clone with a real conflict (two clones
// syncing through a bare remote), driven in headless chromium: without
// the token the page refuses; with it, the entries show (an entry holding
// markup as text, its script never run), search as you type narrows them,
// an entry shows its provenance and history, the timeline its snapshots;
// a cross-origin form post is refused and changes nothing; "keep theirs"
// leaves the memory byte for byte as `memsync resolve --theirs` leaves a
// twin of the clone. Screenshots go to the test's artifact dir (kept with
// -artifacts -outputdir DIR), the conflicts view to docs/ui.png with -update.
func TestUIBrowser(t *testing.T) {
	browser := chromium(t)
	env, root, remote := bareRemote(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	ada := append(slices.Clone(env), "GIT_AUTHOR_NAME=Ada Lovelace", "GIT_AUTHOR_EMAIL=ada@example.com", "MEMSYNC_AGENT=loop-1")
	grace := append(slices.Clone(env), "GIT_AUTHOR_NAME=Grace Hopper", "GIT_AUTHOR_EMAIL=grace@example.com", "MEMSYNC_AGENT=loop-2")
	for _, d := range []string{a, b} {
		gitRun(t, env, root, "clone", "-q", remote, d)
		memsyncIn(t, env, d, "init")
	}
	pool := strings.TrimSpace(memsyncIn(t, ada, a, "add", "the pool size is set in db/pool.go", "-t", "pattern", "--tags", "db,pool"))
	memsyncIn(t, ada, a, "add", "builds use ninja; make stays for CI", "-t", "decision", "--tags", "build")
	xss := strings.TrimSpace(memsyncIn(t, ada, a, "add", `payload <script>window.__xss=1</script> <img src=x onerror="window.__xss=2">`))
	memsyncIn(t, ada, a, "sync")
	memsyncIn(t, grace, b, "sync")
	memsyncIn(t, grace, b, "add", "TestPool is flaky under load: raise its timeout to 5s", "-t", "fix", "--tags", "tests")
	for range 2 { // the title, then the content
		editEntry(t, a, "set in db/pool.go", "set in config/pool.yaml")
		editEntry(t, b, "set in db/pool.go", "set by the POOL_SIZE variable")
	}
	memsyncIn(t, ada, a, "sync")
	memsyncIn(t, grace, b, "sync") // the merge that records the conflict
	if got := conflictIDs(t, env, b); len(got) != 1 || got[0] != pool {
		t.Fatalf("conflicts: %v, want [%s]", got, pool)
	}
	other := filepath.Join(t.TempDir(), "b")
	if out, err := exec.Command("cp", "-a", b, other).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	memsyncIn(t, grace, other, "resolve", pool, "--theirs")
	memory := func(dir string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, ".agent", "memories.md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}

	ui := startUI(t, grace, b, "--no-open", "--addr", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))...)
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()
	// The test's temp dir; kept with go test -artifacts -outputdir DIR.
	shots := t.ArtifactDir()
	shot := func(name string) []byte {
		t.Helper()
		png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		path := filepath.Join(shots, name+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
		return png
	}
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// text is the visible text of the first element sel matches, read by
	// the page's own script once the document is loaded (a node looked up
	// by the driver goes stale when a click's redirect replaces the page).
	text := func(sel string) string {
		t.Helper()
		const missing = "\x00missing"
		js := fmt.Sprintf(`(function(){ const e = document.readyState === "complete" && document.querySelector(%q); return e ? e.innerText : %q })()`, sel, missing)
		for ctx.Err() == nil {
			if s, err := chromedp.Run(tab, chromedp.Evaluate[string](js)); err == nil && s != missing {
				return s
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("text of %s: not there in time", sel)
		return ""
	}
	eval := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(tab, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return s
	}
	// waitFor polls js until it is true, across the navigations a click
	// starts (a poll inside the page ends with the page).
	waitFor := func(js string) {
		t.Helper()
		for ctx.Err() == nil {
			if ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](js)); err == nil && ok {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s: not true in time", js)
	}
	expect := func(what, got string, want ...string) {
		t.Helper()
		for _, w := range want { // as the reader sees it, whatever the case the style shows
			if !strings.Contains(strings.ToLower(got), strings.ToLower(w)) {
				t.Fatalf("%s lacks %q:\n%s", what, w, got)
			}
		}
	}

	run("the page without the token", chromedp.Navigate(ui.base+"/"))
	expect("the page without the token", text("body"), "no access")

	// What the browser opener is given (ui.LaunchFile): a file:// page that
	// must get the browser in, cookie and all, with no token in any argv.
	launch, removeLaunch, err := uipage.LaunchFile(ui.started.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer removeLaunch()
	run("the opener's file", chromedp.Navigate("file://"+launch), chromedp.WaitVisible(chromedp.CSS("#results")))
	if loc := eval("location.href"); loc != ui.base+"/" {
		t.Fatalf("after the opener's file the address is %s, want %s/", loc, ui.base)
	}

	run("the printed address", chromedp.Navigate(ui.started.URL), chromedp.WaitVisible(chromedp.CSS("#results")))
	if loc := eval("location.href"); loc != ui.base+"/" {
		t.Fatalf("the token stays in the address: %s", loc)
	}
	expect("the entries", text("#results"), "4 entries", "set by the POOL_SIZE variable", "TestPool is flaky",
		`<script>window.__xss=1</script>`, `<img src=x onerror="window.__xss=2">`, "Ada Lovelace", "loop-2")
	if got := eval("typeof window.__xss"); got != "undefined" {
		t.Fatalf("the markup of an entry ran: window.__xss is %s", got)
	}
	shot("memory")

	run("search as you type", chromedp.SendKeys(chromedp.CSS(`input[name=q]`), "ninja"),
		chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
			_, err := chromedp.Poll[bool](`document.querySelectorAll("li.entry").length === 1 && location.search === "?q=ninja"`)(ctx, tt)
			return err
		}))
	expect("the search", text("#results"), "1 entry match", "builds use ninja")
	run("a filter", chromedp.Navigate(ui.base+"/?author=Grace"), chromedp.WaitVisible(chromedp.CSS("#results")))
	expect("the author filter", text("#count"), "1 entry")

	run("an entry", chromedp.Navigate(ui.base+"/entry/"+pool), chromedp.WaitVisible(chromedp.CSS("main")))
	expect("the entry", text("main"), "Provenance", "Ada Lovelace <ada@example.com>", "loop-1", "History", "added", "changed")
	shot("entry")
	run("the markup entry", chromedp.Navigate(ui.base+"/entry/"+xss), chromedp.WaitVisible(chromedp.CSS("main")))
	if got := eval("typeof window.__xss"); got != "undefined" {
		t.Fatalf("the markup of an entry ran on its page: window.__xss is %s", got)
	}

	run("the timeline", chromedp.Navigate(ui.base+"/history"), chromedp.WaitVisible(chromedp.CSS("#timeline")))
	expect("the timeline", text("#timeline"), "Grace Hopper", "memsync merge of origin", "added", "changed", "TestPool is flaky", "loop-1", "loop-2")
	if got := eval("typeof window.__xss"); got != "undefined" {
		t.Fatalf("the markup of an entry ran in the timeline: window.__xss is %s", got)
	}
	shot("history")

	// Another local page (another origin, the same site, so the browser
	// sends the cookie) posts a resolution.
	before := memory(b)
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/conflicts/%s"><input name="keep" value="theirs"><button id="go">win</button></form>`, ui.base, pool)
	}))
	defer attacker.Close()
	run("a cross-origin post", chromedp.Navigate(attacker.URL), chromedp.Click(chromedp.CSS("#go")))
	waitFor(fmt.Sprintf(`location.href.startsWith(%q) && document.readyState === "complete"`, ui.base))
	expect("the answer to a cross-origin post", text("body"), "refused")
	if memory(b) != before {
		t.Fatal("a cross-origin post changed the memory")
	}

	run("the conflicts", chromedp.Navigate(ui.base+"/conflicts"), chromedp.WaitVisible(chromedp.CSS("section.conflict")))
	expect("the conflict", text("section.conflict"), "base", "ours (in the memory now)", "theirs",
		"set in db/pool.go", "set by the POOL_SIZE variable", "set in config/pool.yaml", "keep theirs")
	png := shot("conflicts")
	if *update {
		docs := filepath.Join("..", "..", "docs")
		if err := os.MkdirAll(docs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docs, "ui.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("keep theirs", chromedp.Click(chromedp.CSS(`button[value=theirs]`)))
	waitFor(`document.getElementById("resolved") !== null`)
	expect("the resolution", text("#resolved"), "resolved "+pool, "kept theirs", "snapshot")
	expect("the conflicts after it", text("main"), "No recorded conflicts")
	if got, want := memory(b), memory(other); got != want {
		t.Fatalf("the page resolved differently from memsync resolve --theirs:\npage:\n%s\ncommand line:\n%s", got, want)
	}
	if got := conflictIDs(t, env, b); len(got) != 0 {
		t.Fatalf("conflicts left: %v", got)
	}
	cancelTab()
	ui.stop(t)
}

// TestUIOtherLocalPageLoadsNothing: a page of another local server (another
// port of 127.0.0.1: the same site, so the browser sends the page's
// SameSite=Strict cookie along) gets nothing from the page, so it can
// neither tell the page is there nor make the browser run searches of the
// memory for it (to time them, or by the thousand). Its script tag loaded
// the page's script; now the request is refused.
func TestUIOtherLocalPageLoadsNothing(t *testing.T) {
	browser := chromium(t)
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsyncIn(t, env, repo, "add", "the deploy needle is kept in vault")
	ui := startUI(t, env, repo, "--no-open")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox)...)
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()
	if err := chromedp.Do(tab, chromedp.Navigate(ui.started.URL), chromedp.WaitVisible(chromedp.CSS("#results"))); err != nil {
		t.Fatalf("the printed address: %v", err)
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `<!doctype html><script>window.got = ""</script>
<script src="%[1]s/assets/ui.js" onload="got = 'loaded'" onerror="got = 'refused'"></script>
<a id="go" href="%[1]s/">the page</a>`, ui.base)
	}))
	defer other.Close()
	if !strings.HasPrefix(other.URL, "http://127.0.0.1:") {
		t.Fatalf("the other page is at %s, not on 127.0.0.1", other.URL)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(other.URL)); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(tab, chromedp.Poll[string](`got`))
	if err != nil {
		t.Fatalf("the other page's script tag: %v", err)
	}
	if got != "refused" {
		t.Fatalf("another local page's script tag: %s, want refused", got)
	}
	// A link from the other page opens the page.
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#go")), chromedp.WaitVisible(chromedp.CSS("#results"))); err != nil {
		t.Fatalf("a link from the other page: %v", err)
	}
}
