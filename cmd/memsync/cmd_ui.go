package main

import (
	"errors"
	"os/exec"
	"runtime"

	"github.com/urfave/cli/v2"

	"github.com/memsync/memsync"
	"github.com/memsync/memsync/internal/ui"
)

func uiCommand() command {
	return command{name: "ui", usage: "serve a local page: the memory, its history, conflicts to settle with a click",
		flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "listen on `HOST:PORT`, a loopback address only; port 0 picks a free port"},
			&cli.BoolFlag{Name: "no-open", Usage: "print the address only; do not open a browser (which is opened through a file only you may read, so the token is in no command line)"},
		},
		args: noArgs("ui"), opens: repoOnly, serves: true, run: runUI}
}

// uiStarted is what `memsync ui --json` prints once the page is served.
type uiStarted struct {
	URL    string `json:"url"`    // the page, with this run's token
	Addr   string `json:"addr"`   // the address it listens on
	Memory string `json:"memory"` // the memory file it shows
}

func runUI(s *session, c *cli.Context) error {
	l, err := ui.Listen(c.String("addr"))
	if errors.Is(err, ui.ErrAddr) {
		return usageError{err}
	}
	if err != nil {
		return withHint(err, "pick another port with --addr 127.0.0.1:PORT, or port 0 for a free one")
	}
	// Each request opens the memory anew, as the MCP server does (which
	// file it is can change while the page is served). A person looking at
	// the page is not an agent reading the memory: no access is recorded
	// (gc's TTL), and warnings go to the page.
	srv := ui.New(ui.Options{Addr: l.Addr().String(), Open: func(warn func(string)) (*memsync.Memory, error) {
		return s.openWith(false, func(o *memsync.Options) { o.Warn, o.NoAccessLog = warn, true })
	}})
	started := uiStarted{URL: srv.URL(), Addr: l.Addr().String(), Memory: s.m.Path()}
	err = s.print(started, nil, func() {
		s.printf("memsync ui: %s\n", started.URL)
	})
	if err != nil {
		_ = l.Close()
		return err
	}
	if c.Bool("no-open") {
		s.eprintf("Ctrl-C stops the page\n")
	} else if how, remove := openBrowser(started.URL); how != "" {
		defer remove()
		s.eprintf("opened with %s; Ctrl-C stops the page\n", how)
	} else {
		s.eprintf("no browser opener (xdg-open, open) found: open that address in a browser; Ctrl-C stops the page\n")
	}
	return srv.Serve(c.Context, l)
}

// openBrowser opens url with the system's opener (xdg-open, or open on
// macOS) and names it; "" when there is none. The opener gets a file that
// leads to url (ui.LaunchFile), so the token is in no command line; remove
// takes the file away. It never waits for the browser, and a browser that
// does not start is no error of memsync's.
func openBrowser(url string) (name string, remove func()) {
	name = "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", nil
	}
	file, remove, err := ui.LaunchFile(url)
	if err != nil {
		return "", nil
	}
	cmd := exec.Command(path, file)
	if cmd.Start() != nil {
		remove()
		return "", nil
	}
	go func() { _ = cmd.Wait() }()
	return name, remove
}
