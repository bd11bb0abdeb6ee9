package main

import (
	"io"
	"os"
	"sync"
	"time"
)

// Output is buffered: a command's lines reach stdout and stderr in few
// writes (one at exit, for most), not one write(2) per line. The two
// streams share one buffer order: bytes written to one stream are written
// out before any written later to the other, so a warning printed before a
// result still comes before it on a terminal that shows both. What waits
// longer than outputDelay is written out anyway (a lock wait, the network),
// and exit flushes the rest (flush, on every path through runContext).

// outputDelay is the longest buffered output waits to be written.
const outputDelay = 50 * time.Millisecond

// outputMax is the most buffered before it is written out.
const outputMax = 64 << 10

// output is the pair of buffered streams of one run.
type output struct {
	mu      sync.Mutex
	stdout  stream
	stderr  stream
	pending *stream // the stream holding buffered bytes, nil for none
	timer   *time.Timer
	direct  bool // unbuffered from now on (unbuffer)
}

// stream is one buffered stream of an output.
type stream struct {
	o   *output
	w   io.Writer
	buf []byte
	err error // the first write error: later writes return it
}

// newOutput buffers stdout and stderr.
func newOutput(stdout, stderr io.Writer) *output {
	o := &output{}
	o.stdout = stream{o: o, w: stdout}
	o.stderr = stream{o: o, w: stderr}
	return o
}

// Write buffers p, after writing out what the other stream holds.
func (s *stream) Write(p []byte) (int, error) {
	o := s.o
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending != nil && o.pending != s {
		o.flushLocked()
	}
	if s.err != nil {
		return 0, s.err
	}
	if o.direct {
		n, err := s.w.Write(p)
		s.err = err
		return n, err
	}
	s.buf = append(s.buf, p...)
	o.pending = s
	if len(s.buf) >= outputMax {
		o.flushLocked()
		return len(p), s.err
	}
	if o.timer == nil {
		o.timer = time.AfterFunc(outputDelay, o.flush)
	} else {
		o.timer.Reset(outputDelay)
	}
	return len(p), nil
}

// file is the file under s (os.Stdout, os.Stderr), nil when it writes
// elsewhere (a test's buffer).
func (s *stream) file() *os.File {
	f, _ := s.w.(*os.File)
	return f
}

// flush writes out what is buffered.
func (o *output) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushLocked()
}

func (o *output) flushLocked() {
	s := o.pending
	if s == nil {
		return
	}
	o.pending = nil
	if o.timer != nil {
		o.timer.Stop()
	}
	if len(s.buf) > 0 && s.err == nil {
		_, s.err = s.w.Write(s.buf)
	}
	s.buf = s.buf[:0]
}

// unbuffer flushes, and makes every later write go out at once: for the
// commands that serve a protocol or a page on their streams (mcp, ui).
func (o *output) unbuffer() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushLocked()
	o.direct = true
}

// fileOf is the file w writes to: w itself or, for a buffered stream, the
// file under it; nil if none.
func fileOf(w io.Writer) *os.File {
	switch w := w.(type) {
	case *os.File:
		return w
	case *stream:
		return w.file()
	}
	return nil
}

// forChild is w as the output of a child process (a pager, an editor,
// git): what memsync buffered is written out first and the child gets the
// file itself, the terminal where it is one, not a pipe.
func forChild(w io.Writer) io.Writer {
	s, ok := w.(*stream)
	if !ok {
		return w
	}
	s.o.flush()
	if f := s.file(); f != nil {
		return f
	}
	return w
}

// unbuffer makes the output w belongs to unbuffered (output.unbuffer);
// nothing for another writer.
func unbuffer(w io.Writer) {
	if s, ok := w.(*stream); ok {
		s.o.unbuffer()
	}
}

// choose is yes when ok, else no: the word a message picks by a condition
// (words.If, which this package cannot import).
func choose(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}
