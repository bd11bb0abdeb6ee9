package ui

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memsync/memsync"
)

//go:embed assets
var assets embed.FS

// The page's views, each at a stable URL.
func (s *Server) routes() {
	s.mux = http.NewServeMux()
	static, _ := fs.Sub(assets, "assets/static")
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.index)
	s.mux.HandleFunc("GET /entry/{id}", s.entry)
	s.mux.HandleFunc("GET /history", s.history)
	s.mux.HandleFunc("GET /conflicts", s.conflicts)
	s.mux.HandleFunc("POST /conflicts/{id}", s.resolve)
	s.mux.HandleFunc("GET /doctor", s.doctor)
}

// page is what every view's template gets.
type page struct {
	Title, Nav  string // the view's title, and its item in the navigation
	Repo, File  string // the repository's folder, the memory file
	CSRF        string // the token every form sends
	Conflicts   int    // recorded conflicts, for the navigation
	Warnings    []string
	Error, Hint string
	Data        any

	mu sync.Mutex
}

func (p *page) warn(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Warnings = append(p.Warnings, msg)
}

// begin opens the memory for a request and starts its page; on failure it
// has answered with the error.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, title, nav string) (*memsync.Memory, *page, bool) {
	p := &page{Title: title, Nav: nav, CSRF: s.csrf}
	m, err := s.open(p.warn)
	if err != nil {
		s.fail(w, p, err)
		return nil, nil, false
	}
	p.Repo, p.File = where(m)
	if cs, err := conflicts(r.Context(), m); err == nil {
		p.Conflicts = len(cs)
	}
	return m, p, true
}

// fail answers with the error page.
func (s *Server) fail(w http.ResponseWriter, p *page, err error) {
	status, hint := errorKind(err)
	p.Error, p.Hint = err.Error(), hint
	if p.Title == "" {
		p.Title = "error"
	}
	s.render(w, "error", status, p)
}

// pages are the parsed templates, one set per view (the layout and the
// view), parsed at the first request.
var pages = sync.OnceValues(func() (map[string]*template.Template, error) {
	funcs := template.FuncMap{"short": short, "diff": diffLines, "when": when, "join": strings.Join,
		"entryURL":    func(id string) string { return "/entry/" + url.PathEscape(id) },
		"conflictURL": func(id string) string { return "/conflicts/" + url.PathEscape(id) }}
	out := map[string]*template.Template{}
	for _, name := range []string{"index", "entry", "history", "conflicts", "doctor", "error"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/"+name+".html")
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
})

// render writes view's template for p (with block, only that template:
// the part of the page a script replaces).
func (s *Server) render(w http.ResponseWriter, view string, status int, p *page, block ...string) {
	ts, err := pages()
	if err != nil {
		http.Error(w, "memsync ui: "+err.Error(), http.StatusInternalServerError)
		return
	}
	name := "layout"
	if len(block) > 0 {
		name = block[0]
	}
	var buf bytes.Buffer
	if err := ts[view].ExecuteTemplate(&buf, name, p); err != nil {
		http.Error(w, "memsync ui: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// maxShown is how many entries the index shows at most.
const maxShown = 300

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	m, p, ok := s.begin(w, r, "memory", "memory")
	if !ok {
		return
	}
	q := r.URL.Query()
	f := filters{Query: q.Get("q"), Type: q.Get("type"), Tag: q.Get("tag"), Author: q.Get("author"),
		Branch: q.Get("branch"), Worktree: q.Get("worktree"), Agent: q.Get("agent"), Archive: q.Get("archive") != ""}
	list, fc, err := entries(r.Context(), m, f)
	if err != nil {
		s.fail(w, p, err)
		return
	}
	data := struct {
		F       filters
		Facets  facets
		Entries []entryView
		Total   int
	}{f, fc, list, len(list)}
	if len(list) > maxShown {
		data.Entries = list[:maxShown]
	}
	p.Data = data
	if q.Get("fragment") != "" {
		s.render(w, "index", http.StatusOK, p, "results")
		return
	}
	s.render(w, "index", http.StatusOK, p)
}

func (s *Server) entry(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	m, p, ok := s.begin(w, r, "entry "+id, "memory")
	if !ok {
		return
	}
	e, archived, err := entry(r.Context(), m, id)
	gone := err != nil
	if gone && !notFound(err) {
		s.fail(w, p, err)
		return
	}
	hist, herr := entryHistory(r.Context(), m, id)
	if gone && herr != nil {
		// Neither the memory, its archive nor a snapshot holds it.
		s.fail(w, p, err)
		return
	}
	if !gone {
		p.Title = e.Head
	}
	data := struct {
		ID             string
		Entry          entryView
		Gone, Archived bool
		History        []snapshotView
		HistoryProblem string
	}{id, e, gone, archived, hist, ""}
	if herr != nil {
		data.HistoryProblem = herr.Error()
	}
	p.Data = data
	s.render(w, "entry", http.StatusOK, p)
}

// notFound tells whether err says that nothing matches.
func notFound(err error) bool {
	status, _ := errorKind(err)
	return status == http.StatusNotFound
}

// maxSnapshots is how many snapshots the timeline shows unless asked for all.
const maxSnapshots = 100

func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	m, p, ok := s.begin(w, r, "history", "history")
	if !ok {
		return
	}
	q := r.URL.Query()
	n := maxSnapshots
	if v, err := strconv.Atoi(q.Get("n")); err == nil && v >= 0 {
		n = v
	}
	log, err := timeline(r.Context(), m, n)
	if err != nil {
		s.fail(w, p, err)
		return
	}
	author, wt, branch := q.Get("author"), q.Get("worktree"), q.Get("branch")
	var authors, worktrees, branches []string
	shown := log[:0:0]
	for _, sn := range log {
		authors, worktrees, branches = append(authors, sn.Author), append(worktrees, sn.Worktree), append(branches, sn.Branch)
		if (author == "" || sn.Author == author) && (wt == "" || sn.Worktree == wt) && (branch == "" || sn.Branch == branch) {
			shown = append(shown, sn)
		}
	}
	p.Data = struct {
		Snapshots                    []snapshotView
		Author, Worktree, Branch     string
		Authors, Worktrees, Branches []string
		More                         bool
	}{shown, author, wt, branch, distinct(authors), distinct(worktrees), distinct(branches), n > 0 && len(log) == n}
	s.render(w, "history", http.StatusOK, p)
}

func (s *Server) conflicts(w http.ResponseWriter, r *http.Request) {
	m, p, ok := s.begin(w, r, "conflicts", "conflicts")
	if !ok {
		return
	}
	s.showConflicts(w, r, m, p, http.StatusOK)
}

// showConflicts renders the conflicts view with status (an error of a
// resolution already set on p).
func (s *Server) showConflicts(w http.ResponseWriter, r *http.Request, m *memsync.Memory, p *page, status int) {
	cs, err := conflicts(r.Context(), m)
	if err != nil {
		s.fail(w, p, err)
		return
	}
	q := r.URL.Query()
	data := struct {
		Conflicts                []conflictView
		Refused                  string
		Resolved, Kept, Snapshot string
	}{Conflicts: cs, Resolved: q.Get("resolved"), Kept: q.Get("kept"), Snapshot: q.Get("snapshot")}
	if err := mayResolve(m); err != nil {
		data.Refused = err.Error()
	}
	p.Data = data
	s.render(w, "conflicts", status, p)
}

func (s *Server) resolve(w http.ResponseWriter, r *http.Request) {
	m, p, ok := s.begin(w, r, "conflicts", "conflicts")
	if !ok {
		return
	}
	keep := r.PostFormValue("keep")
	if keep != "ours" && keep != "theirs" && keep != "edit" {
		http.Error(w, "keep is ours, theirs or edit", http.StatusBadRequest)
		return
	}
	res, err := resolve(r.Context(), m, r.PathValue("id"), keep, r.PostFormValue("text"))
	switch {
	case errors.Is(err, errCancelled):
		res = resolved{ID: r.PathValue("id"), Kept: "nothing"}
	case err != nil:
		status, hint := errorKind(err)
		if errors.As(err, new(*editError)) {
			status, hint = http.StatusBadRequest, "keep exactly one entry (or none to cancel); nothing was changed"
		}
		p.Error, p.Hint = err.Error(), hint
		s.showConflicts(w, r, m, p, status)
		return
	}
	q := url.Values{"resolved": {res.ID}, "kept": {res.Kept}}
	if res.Snapshot != "" {
		q.Set("snapshot", res.Snapshot)
	}
	http.Redirect(w, r, "/conflicts?"+q.Encode(), http.StatusSeeOther)
}

func (s *Server) doctor(w http.ResponseWriter, r *http.Request) {
	m, p, ok := s.begin(w, r, "doctor", "doctor")
	if !ok {
		return
	}
	healthy, checks, err := doctor(r.Context(), m)
	if err != nil {
		s.fail(w, p, err)
		return
	}
	p.Data = struct {
		OK     bool
		Checks []checkView
	}{healthy, checks}
	s.render(w, "doctor", http.StatusOK, p)
}

// short is a commit hash as the page shows it.
func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// when is an RFC 3339 time as the page shows it, in local time.
func when(t string) string {
	tm, err := time.Parse(time.RFC3339, t)
	if err != nil {
		return t
	}
	return tm.Local().Format("2006-01-02 15:04:05")
}

// diffLine is one line of a diff with its class (add, del, hunk or "").
type diffLine struct{ Class, Text string }

func diffLines(d string) []diffLine {
	var out []diffLine
	for l := range strings.Lines(d) {
		l = strings.TrimSuffix(l, "\n")
		class := ""
		switch {
		case strings.HasPrefix(l, "@@"):
			class = "hunk"
		case strings.HasPrefix(l, "+"):
			class = "add"
		case strings.HasPrefix(l, "-"):
			class = "del"
		}
		out = append(out, diffLine{class, l})
	}
	return out
}
