package jsonrpc_test

// Cancellation and the end of a connection: a Cancel answers
// RequestCancelled, a call whose context ends tells the connection, and
// nothing read behind the end is started.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/jsonrpc"
)

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
