package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/ioh-lsp/ioh-lsp/internal/jsonrpc"
)

// serveHandler runs h behind newHandler on the server's connection
// (jsonrpc's header framing and the protocol codec) over a.
func serveHandler(ctx context.Context, a net.Conn, h jsonrpc.Handler) *jsonrpc.Conn {
	srv := jsonrpc.NewConn(jsonrpc.HeaderFramer(a, a, MaxMessageSize), jsonrpc.Options{Logger: slog.New(slog.DiscardHandler), Marshal: marshal, Unmarshal: unmarshal})
	go srv.Serve(ctx, newHandler(slog.New(slog.DiscardHandler), srv, h))
	return srv
}

// pair connects a client (go.lsp.dev/jsonrpc2, as an editor's library
// would be) to a server connection running h.
func pair(t *testing.T, h jsonrpc.Handler) jsonrpc2.Conn {
	t.Helper()
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	srv := serveHandler(ctx, a, h)
	cli := jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(b))
	cli.Go(ctx, jsonrpc2.MethodNotFoundHandler)
	t.Cleanup(func() {
		cancel()
		cli.Close()
		<-srv.Done()
	})
	return cli
}

func TestHandlerPanicBecomesAnErrorReplyNotADeadServer(t *testing.T) {
	cli := pair(t, func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		switch req.Method {
		case "boom", "boom/notify":
			panic("kaboom")
		}
		return "alive", nil
	})
	ctx := context.Background()
	_, err := cli.Call(ctx, "boom", nil, nil)
	var we *jsonrpc2.Error
	if !errors.As(err, &we) || we.Code != jsonrpc2.InternalError {
		t.Fatalf("panicking call answered %v, want InternalError", err)
	}
	if err := cli.Notify(ctx, "boom/notify", nil); err != nil {
		t.Fatal(err)
	}
	var got string
	if _, err := cli.Call(ctx, "ping", nil, &got); err != nil || got != "alive" {
		t.Fatalf("after panics: %q, %v", got, err)
	}
}

func TestNotificationsInOrderWhileCallsRunConcurrently(t *testing.T) {
	var mu sync.Mutex
	var seen []int
	release := make(chan struct{})
	cli := pair(t, func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		switch req.Method {
		case "slow":
			<-release // a call blocked here must not hold up anything else
			return "slow done", nil
		case "note":
			var n int
			if err := json.Unmarshal(req.Params, &n); err != nil {
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
		return nil, jsonrpc.Errorf(jsonrpc.MethodNotFound, "no %s", req.Method)
	})
	ctx := context.Background()
	slow := make(chan error, 1)
	go func() { _, err := cli.Call(ctx, "slow", nil, nil); slow <- err }()
	for i := 0; i < 500; i++ {
		if err := cli.Notify(ctx, "note", i); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if _, err := cli.Call(ctx, "count", nil, &n); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n != 500 || len(seen) != 500 {
		t.Fatalf("count %d, seen %d, want 500 before the slow call finished", n, len(seen))
	}
	for i, v := range seen {
		if v != i {
			t.Fatalf("notification %d handled at position %d: out of order", v, i)
		}
	}
}

// TestCancelledCallAnswersRequestCancelled: a handler that ends with its
// context's error after the client's $/cancelRequest is answered -32800.
func TestCancelledCallAnswersRequestCancelled(t *testing.T) {
	expectCancelled(t, func(ctx context.Context) (any, error) { return nil, ctx.Err() })
}

// TestCancelledCallWithNilResultAnswersRequestCancelled: a handler that
// ignores its context and returns a null result after the client's
// $/cancelRequest is still answered -32800 (the connection knows the
// cancel by the context's cause), not a null the client would take
// for the method's answer.
func TestCancelledCallWithNilResultAnswersRequestCancelled(t *testing.T) {
	expectCancelled(t, func(context.Context) (any, error) { return nil, nil })
}

// expectCancelled sends a call, cancels it with $/cancelRequest once its
// handler started, and wants -32800 for it; the handler waits for its
// context to end and then returns what ret gives.
func expectCancelled(t *testing.T, ret func(context.Context) (any, error)) {
	t.Helper()
	started := make(chan struct{})
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := serveHandler(ctx, a, func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		close(started)
		<-ctx.Done()
		return ret(ctx)
	})
	defer func() { cancel(); <-srv.Done() }()
	stream := jsonrpc2.NewHeaderStream(b)
	defer b.Close()
	if _, err := stream.Write(ctx, jsonrpc2.NewCall(jsonrpc2.NewStringID("x-1"), "wait", nil)); err != nil {
		t.Fatal(err)
	}
	<-started
	if _, err := stream.Write(ctx, jsonrpc2.NewNotification("$/cancelRequest", jsonrpc2.RawMessage(`{"id":"x-1"}`))); err != nil {
		t.Fatal(err)
	}
	msg, _, err := stream.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, ok := msg.(*jsonrpc2.Response)
	var we *jsonrpc2.Error
	if !ok || !errors.As(resp.Err(), &we) || we.Code != -32800 {
		t.Fatalf("answer %#v, want -32800", msg)
	}
}

// TestResultStandsAfterTheConnectionEnds: when the connection's context
// ends while a request runs (exit arriving while shutdown drains), a
// result the handler returned stands (a shutdown's null is its answer,
// not a cancellation), and a handler that failed with the end itself
// answers -32800.
func TestResultStandsAfterTheConnectionEnds(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel() // the connection's end, not a $/cancelRequest
	for _, c := range []struct {
		name    string
		res     any
		err     error
		wantErr bool
	}{
		{"null result", nil, nil, false},
		{"a result", map[string]int{"n": 1}, nil, false},
		{"failed with the end", nil, context.Canceled, true},
	} {
		h := newHandler(slog.New(slog.DiscardHandler), nil, func(context.Context, *jsonrpc.Request) (any, error) { return c.res, c.err })
		res, err := h(ended, &jsonrpc.Request{ID: jsonrpc.NumberID(1), Method: "shutdown"})
		var we *jsonrpc.Error
		switch {
		case c.wantErr && (!errors.As(err, &we) || we.Code != jsonrpc.RequestCancelled):
			t.Errorf("%s: answered %v, want -32800", c.name, err)
		case !c.wantErr && err != nil:
			t.Errorf("%s: answered %v, want the handler's result %v", c.name, err, c.res)
		case !c.wantErr && fmt.Sprint(res) != fmt.Sprint(c.res):
			t.Errorf("%s: result %v, want %v", c.name, res, c.res)
		}
	}
}
