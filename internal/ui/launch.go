package ui

import (
	"html"
	"os"
	"path/filepath"
)

// LaunchFile writes a small HTML file that sends a browser on to url (the
// page with this run's token) and returns its path, in a new folder only
// this user may enter, and a func that removes both. A browser opener is
// given the path rather than url: every user of the machine can read a
// command line (ps), not a 0600 file in a 0700 folder.
func LaunchFile(url string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "memsync-ui-") // 0700
	if err != nil {
		return "", nil, err
	}
	remove := func() { _ = os.RemoveAll(dir) }
	path := filepath.Join(dir, "open.html")
	u := html.EscapeString(url)
	page := `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">` +
		`<meta http-equiv="refresh" content="0;url=` + u + `"><title>memsync ui</title><p><a href="` + u + `">Open the memsync page</a></p>` + "\n"
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = f.WriteString(page)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		remove()
		return "", nil, err
	}
	return path, remove, nil
}
