package main

import (
	"io"
	"os"
	"strings"

	"github.com/memsync/memsync"
)

// isTerminal tells whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f := fileOf(w)
	if f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// colorOK decides, for every command, whether output to w is coloured: only
// on a terminal, never when NO_COLOR is set to anything (https://no-color.org)
// or TERM is dumb.
func colorOK(w io.Writer) bool {
	return os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && isTerminal(w)
}

// The colours memsync uses (SGR codes).
const (
	bold   = "1"
	red    = "31"
	green  = "32"
	yellow = "33"
	cyan   = "36"
)

// paint is text escaped (termsafe.Text), in the colour of code when the
// session's output is coloured (colorOK) and code and text are not "".
func (s *session) paint(code, text string) painted {
	text = memsync.Printable(text)
	if !s.color || code == "" || text == "" {
		return painted(text)
	}
	return painted("\x1b[" + code + "m" + text + "\x1b[0m")
}

// diffColor is the colour of a line of a unified diff: hunk headers cyan,
// removed lines red, added lines green, others none.
func diffColor(line string) string {
	for _, p := range [][2]string{{"@@", cyan}, {"---", bold}, {"+++", bold}, {"-", red}, {"+", green}} {
		if strings.HasPrefix(line, p[0]) {
			return p[1]
		}
	}
	return ""
}
