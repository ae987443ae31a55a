package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/jsonrpc"
)

// framing is one of the two framers, with how to write one raw frame.
type framing struct {
	name  string
	new   func(r io.Reader, w io.Writer, limit int) jsonrpc.Framer
	frame func(body string) string
}

var framings = []framing{
	{"header", func(r io.Reader, w io.Writer, limit int) jsonrpc.Framer {
		return jsonrpc.HeaderFramer(r, w, int64(limit))
	},
		func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }},
	{"line", func(r io.Reader, w io.Writer, limit int) jsonrpc.Framer { return jsonrpc.LineFramer(r, w, limit) },
		func(body string) string { return body + "\n" }},
}

// link is a served Conn on one end of two OS pipes; the test holds the
// other end, raw (write, and a framer of the same kind to read) or as a
// second Conn (peer).
type link struct {
	t      *testing.T
	f      framing
	srv    *jsonrpc.Conn
	served chan error
	in     *os.File // the server's input, written by the test
	out    *os.File // the server's output, read by the test
	reader jsonrpc.Framer
}

func pipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// serve starts a Conn running h over pipes with the given frame limit.
func serve(t *testing.T, f framing, limit int, o jsonrpc.Options, h jsonrpc.Handler) *link {
	t.Helper()
	inR, inW := pipe(t)
	outR, outW := pipe(t)
	o.Logger = slog.New(slog.DiscardHandler)
	l := &link{t: t, f: f, in: inW, out: outR, served: make(chan error, 1)}
	l.srv = jsonrpc.NewConn(f.new(inR, outW, limit), o)
	l.reader = f.new(outR, io.Discard, 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { l.served <- l.srv.Serve(ctx, h); outW.Close() }()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		go io.Copy(io.Discard, outR)
		select {
		case <-l.srv.Done():
		case <-time.After(10 * time.Second):
			t.Error("Serve did not end after its input closed")
		}
	})
	return l
}

// peer is a second Conn on the test's ends of the pipes.
func (l *link) peer(h jsonrpc.Handler) *jsonrpc.Conn {
	l.t.Helper()
	c := jsonrpc.NewConn(l.f.new(l.out, l.in, 1<<20), jsonrpc.Options{Logger: slog.New(slog.DiscardHandler)})
	go c.Serve(context.Background(), h)
	return c
}

func (l *link) raw(s string) {
	l.t.Helper()
	if _, err := io.WriteString(l.in, s); err != nil {
		l.t.Fatalf("write: %v", err)
	}
}

type reply struct {
	ID     any             `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// next reads the next message the server wrote, under a deadline.
func (l *link) next() reply {
	l.t.Helper()
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() { b, err := l.reader.Read(); ch <- res{append([]byte(nil), b...), err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			l.t.Fatalf("read a reply: %v", r.err)
		}
		var m reply
		if err := json.Unmarshal(r.b, &m); err != nil {
			l.t.Fatalf("reply %q is not JSON: %v", r.b, err)
		}
		return m
	case <-time.After(10 * time.Second):
		l.t.Fatal("no reply within 10s")
	}
	return reply{}
}

// expect reads the next reply and checks its id and error code (0: a
// result).
func (l *link) expect(what string, id any, code int) reply {
	l.t.Helper()
	m := l.next()
	got := 0
	if m.Error != nil {
		got = m.Error.Code
	}
	if m.ID != id || got != code {
		l.t.Errorf("%s: got id %v code %d (%+v), want id %v code %d", what, m.ID, got, m.Error, id, code)
	}
	return m
}

// echo answers "echo" with its params, "fail" with InvalidParams, "boom"
// with a plain error and "panic" by panicking.
func echo(_ context.Context, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case "echo":
		return req.Params, nil
	case "fail":
		return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, "bad %s", "thing")
	case "boom":
		return nil, errors.New("it broke")
	case "panic", "panic/note":
		panic("kaboom")
	}
	return nil, jsonrpc.Errorf(jsonrpc.MethodNotFound, "method not found: %s", req.Method)
}

func eachFraming(t *testing.T, f func(t *testing.T, fr framing)) {
	for _, fr := range framings {
		t.Run(fr.name, func(t *testing.T) { f(t, fr) })
	}
}

func TestRequestIsAnswered(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		l := serve(t, f, 1<<20, jsonrpc.Options{}, echo)
		cli := l.peer(echo)
		var got map[string]int
		if err := cli.Call(context.Background(), "echo", map[string]int{"a": 1}, &got); err != nil || got["a"] != 1 {
			t.Fatalf("echo: %v %v", got, err)
		}
		err := cli.Call(context.Background(), "fail", nil, nil)
		var e *jsonrpc.Error
		if !errors.As(err, &e) || e.Code != jsonrpc.InvalidParams || e.Message != "bad thing" {
			t.Fatalf("fail: %v, want InvalidParams", err)
		}
		if err := cli.Call(context.Background(), "boom", nil, nil); !errors.As(err, &e) || e.Code != jsonrpc.InternalError || e.Message != "it broke" {
			t.Fatalf("boom: %v, want InternalError with the text", err)
		}
		// A panic is an answer, for a request and a notification alike;
		// the connection goes on.
		if err := cli.Call(context.Background(), "panic", nil, nil); !errors.As(err, &e) || e.Code != jsonrpc.InternalError {
			t.Fatalf("panic: %v, want InternalError", err)
		}
		if err := cli.Notify("panic/note", nil); err != nil {
			t.Fatal(err)
		}
		if err := cli.Call(context.Background(), "echo", "alive", &got); err == nil {
			t.Fatal("echo of a string decoded into a map")
		}
	})
}

func TestNotificationBurstArrivesInOrder(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		var mu sync.Mutex
		var seen []int
		release := make(chan struct{})
		l := serve(t, f, 1<<20, jsonrpc.Options{}, func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			switch req.Method {
			case "slow":
				<-release // a request blocked here holds up nothing else
				return "slow done", nil
			case "note":
				var n int
				if err := req.Decode(&n); err != nil {
					return nil, err
				}
				mu.Lock()
				seen = append(seen, n)
				mu.Unlock()
				return nil, nil
			case "count":
				mu.Lock()
				defer mu.Unlock()
				return len(seen), nil
			}
			return nil, nil
		})
		cli := l.peer(echo)
		slow := make(chan error, 1)
		go func() { slow <- cli.Call(context.Background(), "slow", nil, nil) }()
		for i := range 500 {
			if err := cli.Notify("note", i); err != nil {
				t.Fatal(err)
			}
		}
		var n int
		if err := cli.Call(context.Background(), "count", nil, &n); err != nil {
			t.Fatal(err)
		}
		close(release)
		if err := <-slow; err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if n != 500 {
			t.Fatalf("count %d, want all 500 notifications handled before the request behind them", n)
		}
		for i, v := range seen {
			if v != i {
				t.Fatalf("notification %d handled at position %d: out of order", v, i)
			}
		}
	})
}

// TestCallBackWhileAnotherRequestIsInFlight: a request handler calls the
// client and waits for its answer while another request still runs; the
// read loop is free to read that answer (no deadlock).
func TestCallBackWhileAnotherRequestIsInFlight(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		release := make(chan struct{})
		var srv *jsonrpc.Conn
		l := serve(t, f, 1<<20, jsonrpc.Options{}, func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			switch req.Method {
			case "slow":
				<-release
				return "slow", nil
			case "ask":
				var answer string
				if err := srv.Call(ctx, "client/question", "why?", &answer); err != nil {
					return nil, err
				}
				return "the client said " + answer, nil
			}
			return nil, nil
		})
		srv = l.srv
		cli := l.peer(func(_ context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method == "client/question" {
				return "because", nil
			}
			return nil, jsonrpc.Errorf(jsonrpc.MethodNotFound, "no")
		})
		slow := make(chan error, 1)
		go func() { slow <- cli.Call(context.Background(), "slow", nil, nil) }()
		var got string
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cli.Call(ctx, "ask", nil, &got); err != nil || got != "the client said because" {
			t.Fatalf("ask: %q %v", got, err)
		}
		close(release)
		if err := <-slow; err != nil {
			t.Fatal(err)
		}
	})
}

func TestCancelAnswersRequestCancelled(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		started := make(chan struct{}, 1)
		var srv *jsonrpc.Conn
		l := serve(t, f, 1<<20, jsonrpc.Options{}, func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			switch req.Method {
			case "wait":
				started <- struct{}{}
				<-ctx.Done()
				return nil, ctx.Err()
			case "cancel": // the protocol's cancel notification names the id
				var id string
				if err := req.Decode(&id); err != nil {
					return nil, err
				}
				srv.Cancel(jsonrpc.StringID(id))
			}
			return nil, nil
		})
		srv = l.srv
		l.raw(f.frame(`{"jsonrpc":"2.0","id":"x-1","method":"wait"}`))
		<-started
		l.raw(f.frame(`{"jsonrpc":"2.0","method":"cancel","params":"x-1"}`))
		l.expect("the cancelled request", "x-1", jsonrpc.RequestCancelled)
	})
}

// TestCallWhoseContextEndsTellsTheConn: the caller's context ends before
// the answer: Call returns at once and CallCancelled names the id (LSP
// sends $/cancelRequest with it); the late answer is dropped.
func TestCallWhoseContextEndsTellsTheConn(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		cancelled := make(chan jsonrpc.ID, 1)
		l := serve(t, f, 1<<20, jsonrpc.Options{CallCancelled: func(id jsonrpc.ID) { cancelled <- id }}, echo)
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() { got <- l.srv.Call(ctx, "client/slow", nil, nil) }()
		req := l.next()
		if req.Method != "client/slow" {
			t.Fatalf("the call: %+v", req)
		}
		cancel()
		if err := <-got; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call: %v", err)
		}
		if id := <-cancelled; fmt.Sprint(req.ID) != id.String() {
			t.Fatalf("CallCancelled(%v), want the call's id %v", id, req.ID)
		}
		l.raw(f.frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":null}`, req.ID)))
		l.raw(f.frame(`{"jsonrpc":"2.0","id":2,"method":"echo","params":"after"}`))
		if m := l.expect("echo after the late answer", 2.0, 0); string(m.Result) != `"after"` {
			t.Fatalf("echo: %s", m.Result)
		}
	})
}

func TestMalformedMessagesAreAnsweredAndTheConnGoesOn(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		l := serve(t, f, 1<<20, jsonrpc.Options{}, echo)
		for _, tc := range []struct {
			body string
			id   any
			code int
		}{
			{`{not json`, nil, jsonrpc.ParseError},
			{`{"jsonrpc":"2.0","id":1,"method":"echo"`, nil, jsonrpc.ParseError},
			{`[1,2]`, nil, jsonrpc.InvalidRequest},
			{`"hello"`, nil, jsonrpc.InvalidRequest},
			{`{"jsonrpc":"1.0","id":2,"method":"echo"}`, 2.0, jsonrpc.InvalidRequest},
			{`{"id":3,"method":"echo"}`, 3.0, jsonrpc.InvalidRequest},
			{`{"jsonrpc":"2.0","id":{"x":1},"method":"echo"}`, nil, jsonrpc.InvalidRequest},
			{`{"jsonrpc":"2.0","id":4}`, 4.0, jsonrpc.InvalidRequest},
			{`{"jsonrpc":"2.0","id":5,"method":7}`, 5.0, jsonrpc.InvalidRequest},
			{`{"jsonrpc":"2.0","id":6,"method":"nope"}`, 6.0, jsonrpc.MethodNotFound},
			{`{"jsonrpc":"2.0","id":"seven","method":"fail"}`, "seven", jsonrpc.InvalidParams},
			{`{"jsonrpc":"2.0","id":8,"method":"boom"}`, 8.0, jsonrpc.InternalError},
			{`{"jsonrpc":"2.0","id":null,"method":"fail"}`, nil, jsonrpc.InvalidParams},
		} {
			l.raw(f.frame(tc.body))
			l.expect(tc.body, tc.id, tc.code)
		}
		l.raw(f.frame(`{"jsonrpc":"2.0","id":9,"method":"echo","params":{"a":1}}`))
		if m := l.expect("echo after bad messages", 9.0, 0); string(m.Result) != `{"a":1}` {
			t.Fatalf("echo: %s", m.Result)
		}
	})
}

// TestMalformedHeadersResynchronise: each broken header is answered
// before the framer waits for more input, and it finds the next frame.
func TestMalformedHeadersResynchronise(t *testing.T) {
	l := serve(t, framings[0], 1<<20, jsonrpc.Options{}, echo)
	for _, tc := range []struct{ raw, has string }{
		{"this is not a header\r\n\r\n{}", "without a colon"},
		{"Content-Length: twelve\r\n\r\n{\"a\": 1}\r\n", "Content-Length"},
		{"Content-Length: 2\r\nX-Header: " + strings.Repeat("x", 20<<10) + "\r\n\r\n{}", "longer than"},
	} {
		l.raw(tc.raw)
		if m := l.expect(tc.has, nil, jsonrpc.ParseError); !strings.Contains(m.Error.Message, tc.has) {
			t.Errorf("%q answered %q", tc.raw, m.Error.Message)
		}
	}
	body := `{"jsonrpc":"2.0","id":4,"method":"echo","params":"four"}`
	l.raw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body)-5, body)) // the tail spills
	l.expect("a short Content-Length", nil, jsonrpc.ParseError)
	l.raw(framings[0].frame(`{"jsonrpc":"2.0","id":5,"method":"echo","params":"five"}`))
	l.expect("the tail in front of the next header", nil, jsonrpc.ParseError)
	l.expect("the request after it", 5.0, 0)
}

func TestOversizeFrameIsSkippedWithItsID(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		l := serve(t, f, 1<<10, jsonrpc.Options{}, echo)
		l.raw(f.frame(`{"jsonrpc":"2.0","id":7,"method":"echo","params":"` + strings.Repeat("x", 200<<10) + `"}`))
		if m := l.expect("the oversize frame", 7.0, jsonrpc.InvalidRequest); !strings.Contains(m.Error.Message, "larger than the limit of 1024 bytes") {
			t.Errorf("oversize answered %q", m.Error.Message)
		}
		l.raw(f.frame(`{"jsonrpc":"2.0","id":8,"method":"echo","params":"short"}`))
		if m := l.expect("the frame after it", 8.0, 0); string(m.Result) != `"short"` {
			t.Fatalf("echo: %s", m.Result)
		}
	})
}

// TestEOFMidFrame: the input ends inside a frame: Serve ends (an error
// for a header frame cut short; a last line without its newline is still
// a message), and a call waiting for an answer gets ErrClosed.
func TestEOFMidFrame(t *testing.T) {
	for _, tc := range []struct {
		f       framing
		tail    string
		wantErr bool
	}{
		{framings[0], "Content-Length: 40\r\n\r\n{\"jsonrpc\"", true},
		{framings[0], "Content-Len", true},
		{framings[1], `{"jsonrpc":"2.0","id":1,"method":"echo","params":"last"}`, false},
	} {
		t.Run(tc.f.name, func(t *testing.T) {
			l := serve(t, tc.f, 1<<20, jsonrpc.Options{}, echo)
			waiting := make(chan error, 1)
			go func() { waiting <- l.srv.Call(context.Background(), "client/q", nil, nil) }()
			l.next() // the call is out
			l.raw(tc.tail)
			l.in.Close()
			if !tc.wantErr {
				l.expect("the last line", 1.0, 0)
			}
			select {
			case err := <-l.served:
				if (err != nil) != tc.wantErr {
					t.Fatalf("Serve = %v, want error %v", err, tc.wantErr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not end at EOF")
			}
			if err := <-waiting; !errors.Is(err, jsonrpc.ErrClosed) {
				t.Fatalf("waiting call: %v, want ErrClosed", err)
			}
		})
	}
}

// TestBrokenPipeEndsTheConn: the peer stops reading (its end of the
// output closed): the first failed write ends Serve with the error, and
// later sends fail with ErrClosed instead of queueing forever.
func TestBrokenPipeEndsTheConn(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		l := serve(t, f, 1<<20, jsonrpc.Options{}, echo)
		l.out.Close()
		for l.srv.Notify("note", strings.Repeat("x", 1<<10)) == nil {
			select {
			case <-l.srv.Done():
			default:
				continue
			}
			break
		}
		select {
		case err := <-l.served:
			if err == nil || !strings.Contains(err.Error(), "write") {
				t.Fatalf("Serve = %v, want the write error", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not end after the pipe broke")
		}
		if err := l.srv.Notify("note", nil); !errors.Is(err, jsonrpc.ErrClosed) {
			t.Fatalf("Notify after the end: %v, want ErrClosed", err)
		}
	})
}

// TestThenSendsAfterTheAnswer: what a Then result sends goes out behind
// the answer (ACP's session/new, whose first updates name the session the
// answer creates).
func TestThenSendsAfterTheAnswer(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		var srv *jsonrpc.Conn
		l := serve(t, f, 1<<20, jsonrpc.Options{}, func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			return jsonrpc.Then{Result: "made", After: func() { _ = srv.Notify("made/update", 1) }}, nil
		})
		srv = l.srv
		l.raw(f.frame(`{"jsonrpc":"2.0","id":1,"method":"make"}`))
		l.expect("the answer", 1.0, 0)
		if m := l.next(); m.Method != "made/update" {
			t.Fatalf("after the answer: %+v", m)
		}
	})
}

// TestAdmitRunsBeforeTheMessagesBehind: Admit sees a request before a
// notification right behind it is handled.
func TestAdmitRunsBeforeTheMessagesBehind(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		var mu sync.Mutex
		var order []string
		block := make(chan struct{})
		l := serve(t, f, 1<<20, jsonrpc.Options{Admit: func(req *jsonrpc.Request) {
			mu.Lock()
			order = append(order, "admit "+req.Method)
			mu.Unlock()
		}}, func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			mu.Lock()
			order = append(order, req.Method)
			mu.Unlock()
			if req.Method == "prompt" {
				<-block
			}
			return "ok", nil
		})
		l.raw(f.frame(`{"jsonrpc":"2.0","id":1,"method":"prompt"}`) + f.frame(`{"jsonrpc":"2.0","method":"cancel"}`))
		l.raw(f.frame(`{"jsonrpc":"2.0","id":2,"method":"sync"}`))
		l.expect("sync", 2.0, 0)
		close(block)
		l.expect("prompt", 1.0, 0)
		mu.Lock()
		defer mu.Unlock()
		if order[0] != "admit prompt" || strings.Index(strings.Join(order, ","), "admit prompt") > strings.Index(strings.Join(order, ","), "cancel") {
			t.Fatalf("order %v: want the prompt admitted before the cancel behind it", order)
		}
	})
}

// TestNothingStartsAfterTheEnd: messages already read behind one that
// ends the connection's context (LSP's exit, a signal) are not
// dispatched, so no run starts on a closing server; the one before it
// was. And a request still running then keeps its own answer (a
// shutdown's null), not RequestCancelled, which only a Cancel gives.
func TestNothingStartsAfterTheEnd(t *testing.T) {
	in := "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"shutdown\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"run\"}\n"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := make(chan struct{})
	var out strings.Builder
	var ran atomic.Int32
	c := jsonrpc.NewConn(jsonrpc.LineFramer(io.NopCloser(strings.NewReader(in)), &out, 1<<20), jsonrpc.Options{})
	err := c.Serve(ctx, func(ctx context.Context, r *jsonrpc.Request) (any, error) {
		switch r.Method {
		case "exit":
			cancel()
			close(release)
		case "shutdown":
			<-release
		default:
			ran.Add(1)
		}
		return nil, nil
	})
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("%d request(s) read behind exit were started", n)
	}
	if got := out.String(); !strings.Contains(got, `"id":8,"result":null`) || strings.Contains(got, "-32800") {
		t.Errorf("shutdown's answer: %s, want its null result", got)
	}
}
