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
//     invalid request with id null.
//
// Each dropped line is also reported on Log. Good lines go to the SDK's
// transport unchanged (batches included).
type LineTransport struct {
	Reader  io.Reader
	Writer  io.Writer
	Log     io.Writer // where dropped lines are reported; nil: nowhere
	MaxLine int       // 0: DefaultMaxLine
}

// Connect implements mcp.Transport.
func (t *LineTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	w := &frameWriter{w: t.Writer}
	go t.filter(pw, w)
	return (&mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: -1}).Connect(ctx)
}

// frameWriter serializes whole frames: the SDK writes each message with one
// Write, and so do the error answers of filter.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.w.Write(p)
}

func (f *frameWriter) Close() error { return nil }

// filter copies the good lines of t.Reader to out and answers the bad ones
// on w; it closes out at the end of the input or when the session is gone.
func (t *LineTransport) filter(out *io.PipeWriter, w io.Writer) {
	limit := t.MaxLine
	if limit <= 0 {
		limit = DefaultMaxLine
	}
	r := bufio.NewReaderSize(t.Reader, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(r, limit)
		if len(line) > 0 || tooLong {
			code, id, msg := check(line, tooLong, limit)
			if code == 0 {
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

// check tells whether a line is a frame the SDK can take: code 0, or the
// JSON-RPC error code, the id to answer with and the reason.
func check(line []byte, tooLong bool, limit int) (code int, id json.RawMessage, msg string) {
	switch {
	case tooLong:
		return jsonrpc.CodeInvalidRequest, nil, fmt.Sprintf("message longer than %d bytes", limit)
	case !json.Valid(line):
		return jsonrpc.CodeParseError, nil, "parse error: the line is not one JSON value"
	}
	msgs := []json.RawMessage{line}
	if line[0] == '[' {
		if err := json.Unmarshal(line, &msgs); err != nil || len(msgs) == 0 {
			return jsonrpc.CodeInvalidRequest, nil, "invalid request: not a JSON-RPC message or a non-empty batch"
		}
	}
	for _, m := range msgs {
		if _, err := jsonrpc.DecodeMessage(m); err != nil {
			if len(msgs) == 1 {
				id = usableID(m)
			}
			return jsonrpc.CodeInvalidRequest, id, "invalid request: " + err.Error()
		}
	}
	return 0, nil, ""
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
