package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// echo is a handler that answers "echo" with its params and records
// notifications in order.
type echo struct {
	mu    sync.Mutex
	notes []string
}

func (e *echo) request(_ context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "echo":
		return params, nil
	case "fail":
		return nil, invalidParams("bad %s", "thing")
	case "boom":
		return nil, errors.New("it broke")
	}
	return nil, &RPCError{Code: codeMethodNotFound, Message: "method not found: " + method}
}

func (e *echo) notification(_ context.Context, method string, params json.RawMessage) {
	e.mu.Lock()
	e.notes = append(e.notes, method+" "+string(params))
	e.mu.Unlock()
}

// pipeConn serves a conn over pipes; send writes raw lines to it and next
// reads one line it wrote.
type pipeConn struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	c    *conn
	done chan error
}

func newPipeConn(t *testing.T, h handler) *pipeConn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := newConn(outW, slog.New(slog.DiscardHandler))
	p := &pipeConn{t: t, in: inW, out: bufio.NewReader(outR), c: c, done: make(chan error, 1)}
	go func() { p.done <- c.serve(context.Background(), inR, h); outW.Close() }()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR) // let the outbox flush
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Error("serve did not end after stdin closed")
		}
	})
	return p
}

func (p *pipeConn) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("write %q: %v", line, err)
	}
}

func (p *pipeConn) next() map[string]any {
	p.t.Helper()
	type res struct {
		line string
		err  error
	}
	ch := make(chan res, 1)
	go func() { l, err := p.out.ReadString('\n'); ch <- res{l, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			p.t.Fatalf("read reply: %v", r.err)
		}
		if strings.Count(r.line, "\n") != 1 {
			p.t.Fatalf("reply is not one line: %q", r.line)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(r.line), &m); err != nil {
			p.t.Fatalf("reply %q is not JSON: %v", r.line, err)
		}
		return m
	case <-time.After(10 * time.Second):
		p.t.Fatal("no reply within 10s")
	}
	return nil
}

func errCode(m map[string]any) (id any, code int) {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return m["id"], 0
	}
	return m["id"], int(e["code"].(float64))
}

func TestFramingAnswersBadLinesAndGoesOn(t *testing.T) {
	p := newPipeConn(t, &echo{})
	for _, tc := range []struct {
		line string
		id   any
		code int
	}{
		{`{not json`, nil, codeParseError},
		{`{"jsonrpc":"2.0","id":1,"method":"echo"`, nil, codeParseError},
		{`[1,2]`, nil, codeInvalidRequest},
		{`"hello"`, nil, codeInvalidRequest},
		{`{"jsonrpc":"1.0","id":2,"method":"echo"}`, 2.0, codeInvalidRequest},
		{`{"id":3,"method":"echo"}`, 3.0, codeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"echo"}`, nil, codeInvalidRequest},
		{`{"jsonrpc":"2.0","id":4}`, 4.0, codeInvalidRequest},
		{`{"jsonrpc":"2.0","id":5,"method":7}`, 5.0, codeInvalidRequest},
		{`{"jsonrpc":"2.0","id":6,"method":"nope"}`, 6.0, codeMethodNotFound},
		{`{"jsonrpc":"2.0","id":"seven","method":"fail"}`, "seven", codeInvalidParams},
		{`{"jsonrpc":"2.0","id":8,"method":"boom"}`, 8.0, codeInternal},
	} {
		p.send(tc.line)
		id, code := errCode(p.next())
		if id != tc.id || code != tc.code {
			t.Errorf("%s: got id %v code %d, want id %v code %d", tc.line, id, code, tc.id, tc.code)
		}
	}
	// Blank lines and CRLF endings are fine; the connection still works.
	p.send("")
	p.send(`{"jsonrpc":"2.0","id":9,"method":"echo","params":{"a":1}}` + "\r")
	m := p.next()
	if m["id"] != 9.0 || m["result"].(map[string]any)["a"] != 1.0 {
		t.Fatalf("echo after bad lines: %v", m)
	}
}

func TestFramingSkipsAnOverlongLine(t *testing.T) {
	old := maxLine
	maxLine = 1 << 10
	t.Cleanup(func() { maxLine = old })
	p := newPipeConn(t, &echo{})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":"` + strings.Repeat("x", 200<<10) + `"}`)
	if _, code := errCode(p.next()); code != codeInvalidRequest {
		t.Fatalf("overlong line: code %d, want %d", code, codeInvalidRequest)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":"short"}`)
	if m := p.next(); m["result"] != "short" {
		t.Fatalf("after the overlong line: %v", m)
	}
}

func TestNotificationsKeepTheirOrder(t *testing.T) {
	h := &echo{}
	p := newPipeConn(t, h)
	var want []string
	for i := range 50 {
		params := `{"n":` + strings.Repeat("1", i%5+1) + `}`
		p.send(`{"jsonrpc":"2.0","method":"note","params":` + params + `}`)
		want = append(want, "note "+params)
	}
	p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":0}`)
	p.next() // notifications are handled inline before the next line is read
	h.mu.Lock()
	defer h.mu.Unlock()
	if strings.Join(h.notes, "\n") != strings.Join(want, "\n") {
		t.Fatalf("notifications out of order:\n%s", strings.Join(h.notes, "\n"))
	}
}

func TestCallRoundTripAndCancel(t *testing.T) {
	p := newPipeConn(t, &echo{})
	got := make(chan error, 1)
	var res struct {
		OK bool `json:"ok"`
	}
	go func() { got <- p.c.call(context.Background(), "ask", map[string]int{"n": 1}, &res) }()
	req := p.next()
	if req["method"] != "ask" || req["jsonrpc"] != "2.0" {
		t.Fatalf("request: %v", req)
	}
	id, _ := json.Marshal(req["id"])
	p.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"ok":true}}`)
	if err := <-got; err != nil || !res.OK {
		t.Fatalf("call: %v, %+v", err, res)
	}

	// An error answer comes back as *RPCError.
	go func() { got <- p.c.call(context.Background(), "ask", nil, nil) }()
	id, _ = json.Marshal(p.next()["id"])
	p.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32000,"message":"no"}}`)
	var re *RPCError
	if err := <-got; !errors.As(err, &re) || re.Code != -32000 {
		t.Fatalf("error answer: %v", err)
	}

	// A call whose context ends returns without an answer.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { got <- p.c.call(ctx, "ask", nil, nil) }()
	p.next()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
}

func TestCallEndsWhenThePeerLeaves(t *testing.T) {
	inR, inW := io.Pipe()
	c := newConn(io.Discard, slog.New(slog.DiscardHandler))
	served := make(chan error, 1)
	go func() { served <- c.serve(context.Background(), inR, &echo{}) }()
	got := make(chan error, 1)
	go func() { got <- c.call(context.Background(), "ask", nil, nil) }()
	time.Sleep(10 * time.Millisecond) // let the call register (either order is correct)
	inW.Close()
	select {
	case err := <-got:
		if !errors.Is(err, errClosed) {
			t.Fatalf("call after the peer left: %v, want errClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call still waiting after the peer left")
	}
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
