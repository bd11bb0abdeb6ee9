package mcpserver

import (
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestQueueOrder: while a request is unanswered the next request waits, a
// notification before it does not, a response and a cancellation of the
// request under way go ahead, and a cancellation of a waiting request
// drops it.
func TestQueueOrder(t *testing.T) {
	f := &frameWriter{pending: map[string]bool{"1": true}}
	f.cond = sync.NewCond(&f.mu)
	add := func(line string) {
		t.Helper()
		m, err := jsonrpc.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		f.add(frameOf(m, []byte(line+"\n")))
	}
	add(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`)
	add(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}`)
	add(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	add(`{"jsonrpc":"2.0","id":"s1","result":{}}`)
	add(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	want := func(line string) {
		t.Helper()
		i := f.next()
		if i < 0 {
			t.Fatalf("nothing to pass on, want %s (queue %d frames)", line, len(f.queue))
		}
		if got := string(f.queue[i].line); got != line+"\n" {
			t.Fatalf("passed on %q, want %s", got, line)
		}
		f.queue = append(f.queue[:i], f.queue[i+1:]...)
	}
	want(`{"jsonrpc":"2.0","id":"s1","result":{}}`)
	want(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	if i := f.next(); i >= 0 {
		t.Fatalf("request 2 passed on while 1 is unanswered: %s", f.queue[i].line)
	}
	delete(f.pending, "1")
	want(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`)
	if len(f.queue) != 0 {
		t.Fatalf("request 3, cancelled while waiting, is still queued: %d frames", len(f.queue))
	}
}
