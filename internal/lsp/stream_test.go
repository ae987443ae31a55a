package lsp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp"
)

// wireClient writes raw bytes to a real server over a pipe and reads its
// framed replies; the pipe has a deadline, so a server that stops
// answering fails the test instead of hanging it.
type wireClient struct {
	t      *testing.T
	conn   net.Conn
	in     jsonrpc2.Stream
	served <-chan error
}

func startWire(t *testing.T) *wireClient {
	t.Helper()
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- newServer().Serve(ctx, a) }()
	t.Cleanup(func() { cancel(); b.Close() })
	if err := b.SetDeadline(time.Now().Add(3 * time.Minute)); err != nil {
		t.Fatal(err)
	}
	return &wireClient{t: t, conn: b, in: jsonrpc2.NewHeaderStream(b), served: served}
}

func (w *wireClient) raw(s string) {
	w.t.Helper()
	if _, err := w.conn.Write([]byte(s)); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

func (w *wireClient) frame(body string) {
	w.t.Helper()
	w.raw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

// next returns the next response, skipping the server's own requests and
// notifications (log messages).
func (w *wireClient) next() *jsonrpc2.Response {
	w.t.Helper()
	for {
		msg, _, err := w.in.Read(context.Background())
		if err != nil {
			w.t.Fatalf("read: %v (the server stopped answering)", err)
		}
		if r, ok := msg.(*jsonrpc2.Response); ok {
			return r
		}
	}
}

// expect reads the next response and checks its id (0: null) and error
// code (0: success).
func (w *wireClient) expect(what string, id int64, code jsonrpc2.Code, msgHas string) {
	w.t.Helper()
	r := w.next()
	gotID, isNum := r.ID().Number()
	switch {
	case id == 0 && r.ID().IsValid():
		w.t.Errorf("%s: reply id %v, want null", what, r.ID())
	case id != 0 && (!isNum || gotID != id):
		w.t.Errorf("%s: reply id %v, want %d", what, r.ID(), id)
	}
	var we *jsonrpc2.Error
	if code == 0 {
		if r.Err() != nil {
			w.t.Errorf("%s: error %v, want success", what, r.Err())
		}
		return
	}
	if !errorsAs(r.Err(), &we) || we.Code != code || !strings.Contains(we.Message, msgHas) {
		w.t.Errorf("%s: reply error %v, want code %d containing %q", what, r.Err(), code, msgHas)
	}
}

func (w *wireClient) call(id int64, method string, params any) {
	w.t.Helper()
	p, err := json.Marshal(params)
	if err != nil {
		w.t.Fatal(err)
	}
	w.frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p))
}

// TestMalformedInputIsAnsweredAndTheSessionGoesOn: a body that is not
// JSON, JSON that is not a message, a malformed header and garbage between
// frames each get an error reply, and the session goes on to a clean
// shutdown (before, the first of them ended the session with exit 1).
func TestMalformedInputIsAnsweredAndTheSessionGoesOn(t *testing.T) {
	w := startWire(t)
	w.call(1, "initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}})
	w.expect("initialize", 1, 0, "")

	w.frame(`{"jsonrpc":"2.0","id":2,"method":"shutdown"`) // cut short: not JSON
	w.expect("invalid JSON", 0, jsonrpc2.ParseError, "not valid JSON")

	w.frame(`{"jsonrpc":"2.0","id":3}`) // JSON, but neither a request nor a response
	w.expect("not a message", 3, jsonrpc2.InvalidRequest, "invalid request")

	w.frame(`[1, 2]`)
	w.expect("a batch", 0, jsonrpc2.InvalidRequest, "invalid request")

	w.raw("this is not a header\r\n\r\n{}")
	w.expect("a header line without a colon", 0, jsonrpc2.ParseError, "without a colon")

	w.raw("Content-Length: twelve\r\n\r\n{\"a\": 1}\r\n")
	w.expect("a length that is not a number", 0, jsonrpc2.ParseError, "Content-Length")

	w.raw("Content-Length: 2\r\nX-Header: " + strings.Repeat("x", 20<<10) + "\r\n\r\n{}")
	w.expect("an overlong header line", 0, jsonrpc2.ParseError, "longer than")

	// A Content-Length that is too short leaves the body's tail in front
	// of the next header: the reader resynchronises at that header.
	body := `{"jsonrpc":"2.0","id":4,"method":"workspace/executeCommand","params":{"command":"ioh.runs"}}`
	w.raw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body)-5, body))
	w.expect("a short Content-Length", 0, jsonrpc2.ParseError, "not valid JSON")
	w.call(5, "workspace/executeCommand", map[string]any{"command": "ioh.runs"})
	w.expect("the tail of the short frame", 0, jsonrpc2.ParseError, "bytes before a Content-Length")
	w.expect("the request after it", 5, 0, "")

	w.call(6, "shutdown", nil)
	w.expect("shutdown", 6, 0, "")
	w.frame(`{"jsonrpc":"2.0","method":"exit"}`)
	select {
	case err := <-w.served:
		if err != nil {
			t.Errorf("Serve = %v, want nil after shutdown and exit", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return after exit")
	}
}

// TestOversizedMessageIsSkippedWithoutBeingBuffered sends a message larger
// than lsp.MaxMessageSize: the server answers it (with its id, found in
// its first bytes) and goes on, having allocated a small fraction of the
// message (before, the whole body was buffered, twice over).
func TestOversizedMessageIsSkippedWithoutBeingBuffered(t *testing.T) {
	w := startWire(t)
	w.call(1, "initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}})
	w.expect("initialize", 1, 0, "")

	const size = lsp.MaxMessageSize + 16<<20
	head := `{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":{"command":"ioh.runs","arguments":["`
	tail := `"]}}`
	chunk := bytes.Repeat([]byte("A"), 64<<10)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w.raw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", size, head))
	for left := size - len(head) - len(tail); left > 0; left -= len(chunk) {
		if _, err := w.conn.Write(chunk[:min(left, len(chunk))]); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	w.raw(tail)
	w.expect("the oversized message", 7, jsonrpc2.InvalidRequest, "larger than the limit")
	runtime.ReadMemStats(&after)
	grew := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d bytes while skipping a %d-byte message", grew, size)
	if grew > size/8 {
		t.Errorf("the server allocated %d bytes for a skipped %d-byte message", grew, size)
	}

	w.call(2, "workspace/executeCommand", map[string]any{"command": "ioh.runs"})
	w.expect("the request after it", 2, 0, "")
}
