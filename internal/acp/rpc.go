package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/ioh-lsp/ioh-lsp/internal/jsonrpc"
)

// ACP speaks JSON-RPC 2.0 one message a line (internal/jsonrpc's
// LineFramer over stdin and stdout); this file routes it to the Server.

// JSON-RPC 2.0 error codes.
const (
	codeParseError     = jsonrpc.ParseError
	codeInvalidRequest = jsonrpc.InvalidRequest
	codeMethodNotFound = jsonrpc.MethodNotFound
	codeInvalidParams  = jsonrpc.InvalidParams
	codeInternal       = jsonrpc.InternalError
)

// maxLine bounds one incoming message; a longer line is answered with
// -32600 and skipped, never buffered whole. A variable for tests.
var maxLine = 32 << 20

// RPCError is a JSON-RPC error object; handlers return one to choose the
// code, any other error is answered as -32603.
type RPCError = jsonrpc.Error

func invalidParams(format string, args ...any) *RPCError {
	return jsonrpc.Errorf(codeInvalidParams, format, args...)
}

// handler answers the peer's requests and notifications. Requests run
// concurrently, each on its own goroutine; notifications run in order on
// the reading goroutine, so they must not block.
type handler interface {
	request(ctx context.Context, method string, params json.RawMessage) (any, error)
	notification(ctx context.Context, method string, params json.RawMessage)
}

// admitter is implemented by a handler that must know of a request the
// moment it is read, before the messages behind it are handled: admit
// runs on the reading goroutine, then the request's own goroutine starts.
// (A session/cancel right behind a session/prompt must find the prompt.)
type admitter interface {
	admit(method string, params json.RawMessage)
}

// replyThen is a request's result with what to send after the reply
// (a session's first updates, which name an id the client learns from
// the reply).
type replyThen struct {
	result any
	then   func()
}

// errClosed: the peer went away while a request waited for its answer.
var errClosed = jsonrpc.ErrClosed

// conn is the agent's side of one ACP connection: a jsonrpc.Conn once
// serve runs. Every outgoing message goes through the Conn's one ordered
// queue, so a prompt's reply never overtakes the session/update
// notifications sent before it, and a slow reader never blocks a run's
// event sink.
type conn struct {
	w     io.Writer
	log   *slog.Logger
	rpc   atomic.Pointer[jsonrpc.Conn]
	ready chan struct{} // closed once rpc is set
}

func newConn(w io.Writer, log *slog.Logger) *conn {
	return &conn{w: w, log: log, ready: make(chan struct{})}
}

// notify sends a notification; before serve or after the end it is
// dropped (there is no one to read it).
func (c *conn) notify(method string, params any) {
	rpc := c.rpc.Load()
	if rpc == nil {
		c.log.Warn("acp: a notification before the connection serves", "method", method)
		return
	}
	if err := rpc.Notify(method, params); err != nil {
		c.log.Debug("acp: notification not sent", "method", method, "err", err)
	}
}

// call sends a request to the peer and decodes its result into out. It
// ends with ctx (the request stays unanswered on the peer's side; ACP's
// session/cancel tells the client to answer it as cancelled).
func (c *conn) call(ctx context.Context, method string, params, out any) error {
	select {
	case <-c.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	return c.rpc.Load().Call(ctx, method, params, out)
}

// serve reads messages until r ends or ctx is done, dispatching them to
// h. It returns after every request handler it started has returned and
// what they sent is written.
func (c *conn) serve(ctx context.Context, r io.Reader, h handler) error {
	o := jsonrpc.Options{Logger: c.log}
	if a, ok := h.(admitter); ok {
		o.Admit = func(req *jsonrpc.Request) { a.admit(req.Method, req.Params) }
	}
	rpc := jsonrpc.NewConn(jsonrpc.LineFramer(r, c.w, maxLine), o)
	c.rpc.Store(rpc)
	close(c.ready)
	if err := rpc.Serve(ctx, route(h)); err != nil {
		return fmt.Errorf("acp stream: %w", err)
	}
	return nil
}

// route adapts h: a request with no result answers {} (ACP's empty
// result), a replyThen sends its updates behind the reply.
func route(h handler) jsonrpc.Handler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if !req.IsCall() {
			h.notification(ctx, req.Method, req.Params)
			return nil, nil
		}
		res, err := h.request(ctx, req.Method, req.Params)
		if err != nil {
			return nil, err
		}
		then := func() {}
		if a, ok := res.(replyThen); ok {
			res, then = a.result, a.then
		}
		if res == nil {
			res = struct{}{}
		}
		return jsonrpc.Then{Result: res, After: then}, nil
	}
}
