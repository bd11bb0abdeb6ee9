package ui

import (
	"html"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync"
)

// TestLaunchFile: the file a browser opener gets is this user's alone, in
// a folder of its own, leads to the URL, and is gone once removed; the
// token request it makes (a cross-site navigation) is answered with a hop
// this page makes itself, which sets the cookie, so the browser sends the
// SameSite=Strict cookie on the next request.
func TestLaunchFile(t *testing.T) {
	dir, m := repo(t)
	add(t, m, memsync.Entry{Content: "a fact for the page"})
	p := serve(t, dir)
	path, remove, err := LaunchFile(p.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{path, 0o600}, {filepath.Dir(path), 0o700 | os.ModeDir}} {
		fi, err := os.Stat(c.path)
		if err != nil || fi.Mode() != c.mode {
			t.Errorf("%s: %v, mode %v, want %v", c.path, err, fi.Mode(), c.mode)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), `content="0;url=`+html.EscapeString(p.srv.URL())+`"`) {
		t.Errorf("the launch file (%v):\n%s", err, b)
	}
	remove()
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("removed, the folder is still there: %v", err)
	}

	r, err := http.NewRequest(http.MethodGet, strings.Replace(p.srv.URL(), "http://"+p.srv.host, p.ts.URL, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	r.Header.Set("Sec-Fetch-Mode", "navigate")
	bare := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := bare.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `content="0;url=/"`) || len(resp.Cookies()) != 1 ||
		strings.Contains(string(body), "a fact") {
		t.Errorf("a cross-site token request: %d, cookies %v\n%s", resp.StatusCode, resp.Cookies(), body)
	}
}
