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
// transport unchanged. At the end of the input the session ends only once
// every request read has been answered, so a client that writes its
// requests and closes stdin (a pipe) gets every answer, and no call under
// way is cut short.
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
	go t.filter(pw, w)
	return &closeConn{Connection: conn, w: w}, nil
}

// frameWriter serializes whole frames: the SDK writes each message with one
// Write, and so do the error answers of filter. It also keeps the ids of
// the requests passed on and not yet answered.
type frameWriter struct {
	mu      sync.Mutex
	cond    *sync.Cond
	w       io.Writer
	pending map[string]bool // ids (as JSON) of requests passed on, unanswered
	done    bool            // the session closed or a write failed
}

func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.w.Write(p)
	if id, ok := responseID(p); ok {
		delete(f.pending, string(id))
	}
	if err != nil {
		f.done = true
	}
	f.cond.Broadcast()
	return n, err
}

func (f *frameWriter) Close() error { return nil }

// track notes a message passed on to the SDK: a request is pending until
// its answer is written; a cancellation ends the wait for its request.
func (f *frameWriter) track(m jsonrpc.Message) {
	req, ok := m.(*jsonrpc.Request)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case req.ID.IsValid():
		id, _ := json.Marshal(req.ID.Raw())
		f.pending[string(id)] = true
	case req.Method == "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			var v any
			if json.Unmarshal(p.RequestID, &v) == nil {
				id, _ := json.Marshal(v)
				delete(f.pending, string(id))
			}
		}
	}
}

// drain waits until every request passed on is answered, or the session
// is gone.
func (f *frameWriter) drain() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.pending) > 0 && !f.done {
		f.cond.Wait()
	}
}

func (f *frameWriter) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done = true
	f.cond.Broadcast()
}

// closeConn tells the frameWriter when the session closes, so that drain
// does not wait for answers that will never come.
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

// filter copies the good lines of t.Reader to out and answers the bad ones
// on w; it closes out at the end of the input or when the session is gone.
func (t *LineTransport) filter(out *io.PipeWriter, w *frameWriter) {
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
				w.track(m)
				if _, werr := out.Write(append(line, '\n')); werr != nil {
					return // the session closed its end
				}
			} else {
				if t.Log != nil {
					fmt.Fprintf(t.Log, "memsync: mcp: input line %d dropped: %s\n", n, msg)
				}
				if _, werr := w.Write(errorFrame(id, code, msg)); werr != nil {
					_ = out.CloseWithError(werr)
					return
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
				w.drain()
			}
			_ = out.CloseWithError(err)
			return
		}
	}
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
