// Package ui is the local page of `memsync ui`: the memory with search and
// filters, one entry with its provenance and history, the timeline of
// snapshots, the recorded conflicts with buttons that settle them, and the
// doctor's report. It is served from the binary (templates and assets are
// embedded) and talks to the memory only through *memsync.Memory.
//
// The page is safe by construction: it listens on loopback only; it answers
// only requests whose Host is the address it printed (DNS rebinding); every
// request needs the per-run token of the printed URL, which the first
// request turns into an HttpOnly, SameSite=Strict cookie; a page of
// another site (another local server's too) may link to it but not load it
// (fetch metadata); a state change (POST) also needs the page's CSRF token
// and a same-origin request; and
// html/template escapes every piece of memory content, which the page's
// Content-Security-Policy backs up by allowing no inline script.
//
// Nothing here runs before it is used: templates are parsed at the first
// request, so other memsync commands pay nothing for the page.
package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/memsync/memsync"
)

// ErrAddr is what Listen returns (wrapped) for an address that is not a
// loopback HOST:PORT.
var ErrAddr = errors.New("the page listens on a loopback HOST:PORT only (127.0.0.1, ::1 or localhost; port 0 picks a free one)")

// Listen listens on addr (HOST:PORT), which must be a loopback address;
// a HOST of "" or "localhost" is 127.0.0.1, and PORT 0 picks a free port.
func Listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %w", addr, ErrAddr)
	}
	if host == "" || strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("--addr %q: %w", addr, ErrAddr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return nil, fmt.Errorf("--addr %q: %w", addr, ErrAddr)
	}
	return net.Listen("tcp", net.JoinHostPort(host, port))
}

// Options set up a Server.
type Options struct {
	// Addr is the address the page is served at (the listener's,
	// 127.0.0.1:PORT): the only Host the server answers.
	Addr string
	// Open opens the memory for one request; warn receives what the
	// memory warns of (a damaged line), which the page shows.
	Open func(warn func(string)) (*memsync.Memory, error)
}

// Server serves the page. It holds no memory between requests: each
// request opens the memory (Options.Open) and reads it anew.
type Server struct {
	open   func(warn func(string)) (*memsync.Memory, error)
	host   string // what the Host header must be
	origin string // what the Origin header of a POST may be
	token  string // the per-run secret of the printed URL
	csrf   string // the per-run secret of the page's forms
	cookie string // the cookie that carries token
	mux    *http.ServeMux
	xorig  *http.CrossOriginProtection
}

// New returns a Server for the page at o.Addr, with fresh secrets.
func New(o Options) *Server {
	s := &Server{open: o.Open, host: o.Addr, origin: "http://" + o.Addr, token: secret(), csrf: secret(),
		xorig: http.NewCrossOriginProtection()}
	// Cookies are shared by every port of a host: name the cookie after
	// the port, so two pages (two repositories) do not log each other out.
	_, port, _ := net.SplitHostPort(o.Addr)
	s.cookie = "memsync_ui_" + port
	s.routes()
	return s
}

// URL is the address to open: the page with this run's token.
func (s *Server) URL() string { return s.origin + "/?token=" + s.token }

// Serve serves the page on l until ctx ends, then stops (requests under
// way get a few seconds to finish).
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(stop)
	}()
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}

// secret is 32 random bytes, URL-safe.
func secret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it crashes the program instead)
	return base64.RawURLEncoding.EncodeToString(b)
}

func same(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// ServeHTTP checks every request (Host, token, and for a POST origin and
// CSRF token) before the page answers it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // not no-referrer: with it, a browser sends a form's Origin as "null"
	h.Set("Cache-Control", "no-store")
	if r.Host != s.host {
		http.Error(w, "memsync ui answers only requests for "+s.host+" (the address it printed)", http.StatusForbidden)
		return
	}
	// Another local server's page is the same site (cookies ignore the
	// port), so the browser sends the cookie with its requests: such a page,
	// or any other site's, may link to the page but not load it into
	// itself (a script, an image, a fetch), which would tell it the page
	// is there and let it time searches of the memory.
	if site := r.Header.Get("Sec-Fetch-Site"); (site == "same-site" || site == "cross-site") && r.Header.Get("Sec-Fetch-Mode") != "navigate" {
		http.Error(w, "refused: another site's page may link to this page, not load it", http.StatusForbidden)
		return
	}
	if t := r.URL.Query().Get("token"); t != "" {
		if !same(t, s.token) {
			http.Error(w, "this token is not this run's: open the address 'memsync ui' printed last", http.StatusForbidden)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		// The same page without the token, so it stays out of the history
		// and the address bar; its path with one leading slash, since a
		// browser reads "//host/..." as another site.
		q := r.URL.Query()
		q.Del("token")
		u := url.URL{Path: "/" + strings.TrimLeft(r.URL.Path, "/"), RawQuery: q.Encode()}
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			// Opened from LaunchFile's page: a redirect would go on with that
			// page as its initiator, and the browser would not send the
			// SameSite=Strict cookie; a hop made by this page itself does.
			h.Set("Content-Type", "text/html; charset=utf-8")
			_, _ = fmt.Fprintf(w, "<!doctype html><meta http-equiv=\"refresh\" content=\"0;url=%s\"><title>memsync ui</title>\n", html.EscapeString(u.String()))
			return
		}
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
		return
	}
	if c, err := r.Cookie(s.cookie); err != nil || !same(c.Value, s.token) {
		http.Error(w, "no access: open the address 'memsync ui' printed (it carries this run's token)", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if err := s.xorig.Check(r); err != nil {
			http.Error(w, "refused: a change must come from the page itself ("+err.Error()+")", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != s.origin {
			http.Error(w, "refused: a change must come from the page itself (origin "+o+")", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if !same(r.PostFormValue("csrf"), s.csrf) {
			http.Error(w, "refused: the form's CSRF token is missing or not this run's; reload the page", http.StatusForbidden)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// maxForm bounds a POST's body (an edited entry).
const maxForm = 4 << 20
