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

// TestFloodOfRequestsIsBounded: a peer that floods requests gets at most
// MaxInFlight handled at once; the connection stops reading meanwhile (a
// notification behind them waits too) and drops nothing: once the
// handlers return, every request is answered and the notification
// handled.
func TestFloodOfRequestsIsBounded(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		const limit, flood = 4, 40
		var mu sync.Mutex
		started, noted := 0, false
		release := make(chan struct{})
		l := serve(t, f, 1<<20, jsonrpc.Options{MaxInFlight: limit}, func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if !req.IsCall() {
				mu.Lock()
				noted = true
				mu.Unlock()
				return nil, nil
			}
			mu.Lock()
			started++
			mu.Unlock()
			<-release
			return "done", nil
		})
		var frames strings.Builder
		for i := range flood {
			frames.WriteString(f.frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"block"}`, i)))
		}
		frames.WriteString(f.frame(`{"jsonrpc":"2.0","method":"note"}`))
		l.raw(frames.String())
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			n := started
			mu.Unlock()
			if n >= limit || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // room for more to start, were reading on
		mu.Lock()
		n, seen := started, noted
		mu.Unlock()
		if n != limit || seen {
			t.Fatalf("%d handlers started and the notification behind them handled: %v; want %d and not yet", n, seen, limit)
		}
		close(release)
		answered := map[any]bool{}
		for range flood {
			m := l.next()
			if m.Error != nil {
				t.Fatalf("request %v answered %+v", m.ID, m.Error)
			}
			answered[m.ID] = true
		}
		if len(answered) != flood {
			t.Fatalf("%d distinct answers of %d", len(answered), flood)
		}
		mu.Lock()
		defer mu.Unlock()
		if !noted {
			t.Fatal("the notification behind the flood was not handled")
		}
	})
}

// TestCallBacksDoNotCountAgainstTheBound: with room for one request,
// handlers that call back to the peer still all run: each call waiting
// for its answer makes room for one more, so the read loop reads the
// answers instead of waiting behind the next request.
func TestCallBacksDoNotCountAgainstTheBound(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		var srv *jsonrpc.Conn
		l := serve(t, f, 1<<20, jsonrpc.Options{MaxInFlight: 1}, func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			var answer string
			if err := srv.Call(ctx, "client/question", nil, &answer); err != nil {
				return nil, err
			}
			return answer, nil
		})
		srv = l.srv
		cli := l.peer(func(context.Context, *jsonrpc.Request) (any, error) { return "because", nil })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		errs := make(chan error, 3)
		for range 3 {
			go func() { errs <- cli.Call(ctx, "ask", nil, nil) }()
		}
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatalf("ask: %v", err)
			}
		}
	})
}
