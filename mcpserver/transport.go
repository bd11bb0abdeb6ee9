package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxLine is the longest line a LineTransport passes on (8 MiB);
// memsync's entries are at most 64 KiB, so no tool call comes near it.
const DefaultMaxLine = 8 << 20

// LineTransport is the MCP stdio transport (newline-delimited JSON-RPC)
// made to outlive bad input. The SDK's own transport ends the session on the
// first line that does not decode; this one reads the lines itself and
// answers each bad one, going on with the next:
//
//   - a line that is not JSON: a parse error (-32700) with id null;
//   - JSON that is no JSON-RPC message: an invalid request (-32600), with the
//     line's id when it has a usable one;
//   - a line longer than MaxLine: read to its end without keeping it, then an
//     invalid request with id null;
//   - a batch (an array of messages, which MCP 2025-06-18 removed): an
//     invalid request with id null; the SDK ends the session on one.
//
// Each dropped line is also reported on Log. Good lines go to the SDK's
// transport unchanged, and one request at a time: the SDK handles calls
// concurrently, so a get sent right after a save could run first; here the
// next request (or the answer to a bad line) is passed on only once every
// earlier one is answered, so a client that pipelines its requests gets
// them handled, and answered, in the order it sent them. Notifications keep
// their place in that order; the client's responses and its cancellations
// of a request under way go ahead of a waiting request, and a cancellation
// of a request still waiting drops that request. At the end of the input
// the session ends only once every request read has been answered, so a
// client that writes its requests and closes stdin (a pipe) gets every
// answer, and no call under way is cut short.
type LineTransport struct {
	Reader  io.Reader
	Writer  io.Writer
	Log     io.Writer // where dropped lines are reported; nil: nowhere
	MaxLine int       // 0: DefaultMaxLine
}

// Connect implements mcp.Transport.
func (t *LineTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	w := &frameWriter{w: t.Writer, pending: map[string]bool{}}
	w.cond = sync.NewCond(&w.mu)
	conn, err := (&mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: -1}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	go t.filter(w)
	go w.forward(pw)
	return &closeConn{Connection: conn, w: w}, nil
}

// frameWriter serializes whole frames: the SDK writes each message with one
// Write, and so do the error answers to bad lines. It also keeps the input
// read and not yet passed on, and the ids of the requests passed on and not
// yet answered.
type frameWriter struct {
	mu      sync.Mutex
	cond    *sync.Cond
	w       io.Writer
	pending map[string]bool // ids (keyOf) of requests passed on, unanswered
	queue   []frame         // input read, not yet passed on, in the order read
	queued  int             // the bytes in queue
	eof     bool            // the input ended (readErr says how)
	readErr error
	done    bool // the session closed or a write failed
}

// frame is one line of input on its way to the SDK, or the error answer to
// a bad line.
type frame struct {
	line   []byte // the message with its "\n"; nil for an answer
	answer []byte // the error answer to a bad line
	id     string // a request's id (keyOf); "" for a notification
	ahead  bool   // a response or a cancellation: goes ahead of a waiting request
	cancel string // for a cancellation, the id it cancels (keyOf)
}

// maxQueued is how much input the reader keeps ahead of the SDK (one line
// more when the queue is empty).
const maxQueued = 2 * DefaultMaxLine

func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.w.Write(p)
	if id, ok := responseID(p); ok {
		delete(f.pending, idKey(id))
	}
	if err != nil {
		f.done = true
	}
	f.cond.Broadcast()
	return n, err
}

func (f *frameWriter) Close() error { return nil }

// add queues a frame for forward. A cancellation of a request still in the
// queue drops both. It waits while the queue is full, and drops the frame
// once the session is gone.
func (f *frameWriter) add(fr frame) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.queued > 0 && f.queued+len(fr.line)+len(fr.answer) > maxQueued && !f.done {
		f.cond.Wait()
	}
	defer f.cond.Broadcast()
	if f.done {
		return // no one reads it any more
	}
	if fr.cancel != "" {
		for i, q := range f.queue {
			if q.id == fr.cancel {
				f.queue = append(f.queue[:i], f.queue[i+1:]...)
				f.queued -= len(q.line)
				return
			}
		}
	}
	f.queue = append(f.queue, fr)
	f.queued += len(fr.line) + len(fr.answer)
}

// end notes the end of the input.
func (f *frameWriter) end(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.eof, f.readErr = true, err
	f.cond.Broadcast()
}

// next is the index in the queue of the frame to pass on now, or -1: a
// response or cancellation at once; else the first frame, a request or an
// answer only once no request is unanswered.
func (f *frameWriter) next() int {
	first := true
	for i, fr := range f.queue {
		switch {
		case fr.ahead:
			return i
		case first:
			first = false
			if (fr.id == "" && fr.answer == nil) || len(f.pending) == 0 {
				return i
			}
		}
	}
	return -1
}

// forward passes the queued frames on to the SDK (out) in order, see
// LineTransport; at the end of the input it waits until every request
// passed on is answered, or the session is gone, and closes out.
func (f *frameWriter) forward(out *io.PipeWriter) {
	f.mu.Lock()
	for !f.done {
		i := f.next()
		if i < 0 {
			if f.eof && len(f.queue) == 0 {
				if f.readErr == nil && len(f.pending) > 0 {
					f.cond.Wait()
					continue
				}
				break
			}
			f.cond.Wait()
			continue
		}
		fr := f.queue[i]
		f.queue = append(f.queue[:i], f.queue[i+1:]...)
		f.queued -= len(fr.line) + len(fr.answer)
		switch {
		case fr.id != "":
			f.pending[fr.id] = true
		case fr.cancel != "":
			delete(f.pending, fr.cancel)
		}
		f.cond.Broadcast()
		f.mu.Unlock()
		var err error
		if fr.answer != nil {
			_, err = f.Write(fr.answer)
		} else {
			_, err = out.Write(fr.line)
		}
		f.mu.Lock()
		if err != nil {
			f.done = true
		}
	}
	err := f.readErr
	f.mu.Unlock()
	_ = out.CloseWithError(err)
}

func (f *frameWriter) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done = true
	f.cond.Broadcast()
}

// closeConn tells the frameWriter when the session closes, so that the
// forwarding does not wait for answers that will never come.
type closeConn struct {
	mcp.Connection
	w *frameWriter
}

func (c *closeConn) Close() error {
	c.w.stop()
	return c.Connection.Close()
}

// responseID is the id of a frame that is a response (it has no method).
// The SDK writes "id" before "result" or "error", so only the frame's head
// is read.
func responseID(frame []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(frame))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var id json.RawMessage
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, false
		}
		switch key {
		case "method":
			return nil, false
		case "result", "error":
			if id != nil {
				return id, true
			}
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if key == "id" {
			id = v
		}
	}
	return id, id != nil
}

// filter reads the lines of t.Reader and queues each on w for forward: a
// good line as it is, a bad one as its error answer.
func (t *LineTransport) filter(w *frameWriter) {
	limit := t.MaxLine
	if limit <= 0 {
		limit = DefaultMaxLine
	}
	r := bufio.NewReaderSize(t.Reader, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(r, limit)
		if len(line) > 0 || tooLong {
			m, code, id, msg := check(line, tooLong, limit)
			if code == 0 {
				w.add(frameOf(m, append(line, '\n')))
			} else {
				if t.Log != nil {
					fmt.Fprintf(t.Log, "memsync: mcp: input line %d dropped: %s\n", n, msg)
				}
				w.add(frame{answer: errorFrame(id, code, msg)})
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			w.end(err)
			return
		}
	}
}

// frameOf is the frame of a good line holding the message m.
func frameOf(m jsonrpc.Message, line []byte) frame {
	fr := frame{line: line}
	req, ok := m.(*jsonrpc.Request)
	switch {
	case !ok: // a response to a request of the server's
		fr.ahead = true
	case req.ID.IsValid():
		fr.id = keyOf(req.ID)
	case req.Method == "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if id := idKey(p.RequestID); id != "" {
				fr.ahead, fr.cancel = true, id
			}
		}
	}
	return fr
}

// keyOf is how the queue and the pending requests name a request id: one
// spelling of it, whatever the client's or the SDK's was ("\u003c" or "<",
// 1e2 or 100), so an answer or a cancellation finds its request.
func keyOf(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

// idKey is keyOf for an id given as JSON (read as the SDK reads one);
// "" when it is no valid id.
func idKey(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil || !id.IsValid() {
		return ""
	}
	return keyOf(id)
}

// readLine reads one line without its end (\n or \r\n), trimmed of spaces.
// A line past limit is read to its end and reported as tooLong, not kept.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+2 { // room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(line), tooLong, err
	}
}

// check tells whether a line is a message the SDK can take: the message
// and code 0, or the JSON-RPC error code, the id to answer with and the
// reason.
func check(line []byte, tooLong bool, limit int) (m jsonrpc.Message, code int, id json.RawMessage, msg string) {
	switch {
	case tooLong:
		return nil, jsonrpc.CodeInvalidRequest, nil, fmt.Sprintf("message longer than %d bytes", limit)
	case !json.Valid(line):
		return nil, jsonrpc.CodeParseError, nil, "parse error: the line is not one JSON value"
	case line[0] == '[':
		return nil, jsonrpc.CodeInvalidRequest, nil, "invalid request: a batch is not supported (MCP 2025-06-18 removed batches); send one message per line"
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, jsonrpc.CodeInvalidRequest, usableID(line), "invalid request: " + err.Error()
	}
	return m, 0, nil, ""
}

// usableID is the id of a message that failed to decode, if it is one a
// client can match (a string or a number).
func usableID(m json.RawMessage) json.RawMessage {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(m, &v) != nil || len(v.ID) == 0 {
		return nil
	}
	var x any
	if json.Unmarshal(v.ID, &x) != nil {
		return nil
	}
	switch x.(type) {
	case string, float64:
		return v.ID
	}
	return nil
}

// errorFrame is a JSON-RPC error response, one line.
func errorFrame(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: msg}})
	return append(b, '\n')
}
