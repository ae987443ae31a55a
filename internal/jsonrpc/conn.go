// Package jsonrpc is the one JSON-RPC 2.0 connection of the language
// server and the ACP agent: request and response correlation,
// notifications, calls from either side, cancellation and error objects,
// over a Framer (HeaderFramer for LSP's Content-Length headers,
// LineFramer for ACP's one message a line).
//
// The order of work is the point (STYLE 12): notifications run on the
// read loop, strictly in the order they arrived, before the next message
// is read; requests run each on its own goroutine, so a request handler
// may call back to the peer (Conn.Call) without deadlocking the read
// loop. A notification handler must not wait on the peer: start a
// goroutine for that. At most Options.MaxInFlight requests are handled
// at once: at the bound the read loop stops reading (backpressure, never
// a dropped message) until one returns. Everything written goes through one ordered queue
// drained by one writer, so an answer never overtakes what was sent
// before it, and a slow peer never blocks the sender.
//
// Malformed input is answered (-32700 for bytes that are not JSON, -32600
// for JSON that is not a JSON-RPC 2.0 message or a frame over the limit)
// and logged, and the connection goes on; an answer to one of our calls
// that is not a valid response fails that call with ErrBadAnswer (and is
// not answered); a panic in a handler becomes an InternalError answer. The package is a leaf: it imports nothing of the
// module.
package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Handler answers a request (its result or error is the answer) or
// handles a notification (its result is dropped, its error logged).
type Handler func(ctx context.Context, req *Request) (any, error)

// Options configure a Conn; the zero value is usable.
type Options struct {
	Logger *slog.Logger
	// Marshal and Unmarshal encode params and results (encoding/json
	// when nil). json.RawMessage values pass through verbatim.
	Marshal   func(any) ([]byte, error)
	Unmarshal func([]byte, any) error
	// Admit, when set, sees each request on the read loop before its
	// handler starts on its own goroutine: what it records is in place
	// before any message behind the request is handled.
	Admit func(req *Request)
	// CallCancelled, when set, is called when the context of a Call ends
	// before the answer came (LSP sends $/cancelRequest).
	CallCancelled func(id ID)
	// MaxInFlight bounds the peer's requests handled at once (0:
	// DefaultMaxInFlight). At the bound the connection stops reading
	// until a handler returns: nothing is dropped, the peer's writes
	// block once the stream's buffer fills. Each of our calls waiting
	// for an answer raises the bound by one, so handlers that call back
	// to the peer never stall the reading of their answers. A handler
	// that waits for a notification (a cancel) keeps its place, and at
	// the bound that notification is read only once another handler
	// returns: the default is far above what a peer keeps open.
	MaxInFlight int
}

// DefaultMaxInFlight is Options.MaxInFlight's default: far more requests
// than an editor or an ACP client keeps open, few enough that a peer
// flooding requests holds a bounded number of goroutines and messages.
const DefaultMaxInFlight = 64

// ErrClosed is the error of a Call or Notify on a connection that ended
// (or whose peer went away while the call waited).
var ErrClosed = errors.New("json-rpc connection closed")

// ErrBadAnswer is wrapped by the error of a Call whose answer came but
// is not a JSON-RPC 2.0 response (an error object of the wrong shape,
// both a result and an error, or neither); the connection goes on.
var ErrBadAnswer = errors.New("the peer's answer is not a valid JSON-RPC 2.0 response")

// answer is what a Call waiting for its id receives: the response, or
// why it could not be read.
type answer struct {
	m   *envelope
	err error
}

// Conn is one JSON-RPC connection over a Framer.
type Conn struct {
	fr   Framer
	opts Options
	log  *slog.Logger
	out  *writer

	nextID   atomic.Int64
	mu       sync.Mutex
	pending  map[ID]chan answer             // our calls waiting for answers
	inflight map[ID]context.CancelCauseFunc // the peer's requests being handled
	running  int                            // handlers started and not returned
	freed    *sync.Cond                     // on mu: running fell, pending grew or Serve is ending
	closed   bool
	done     chan struct{}
}

// NewConn returns a connection over fr; Serve reads it. Calls and
// notifications may be sent as soon as it exists.
func NewConn(fr Framer, o Options) *Conn {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Marshal == nil {
		o.Marshal = json.Marshal
	}
	if o.Unmarshal == nil {
		o.Unmarshal = json.Unmarshal
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	c := &Conn{
		fr: fr, opts: o, log: o.Logger,
		pending: map[ID]chan answer{}, inflight: map[ID]context.CancelCauseFunc{},
		done: make(chan struct{}),
	}
	c.freed = sync.NewCond(&c.mu)
	c.out = newWriter(fr, o.Logger)
	return c
}

// Serve reads messages until the input ends, the reader fails or ctx is
// done (which closes the framer's reader), handing them to h. It returns
// once every request handler it started has returned and everything
// queued is written: nil at the end of the input or of ctx, else the
// read or write error that ended it.
func (c *Conn) Serve(ctx context.Context, h Handler) error {
	defer close(c.done)
	// Only the caller's ctx closes the reader: at the end of the input
	// the answers still queued go out over a stream that stays open.
	stop := context.AfterFunc(ctx, func() { _ = c.fr.Close() })
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(ctx, func() { // a read loop waiting for room stops
		c.mu.Lock()
		c.freed.Broadcast()
		c.mu.Unlock()
	})()
	var wg sync.WaitGroup
	err := c.readLoop(ctx, h, &wg)
	cancel() // the peer is gone: stop what runs, answer nothing more
	c.mu.Lock()
	c.closed = true
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	wg.Wait()
	if werr := c.out.close(); werr != nil && err == nil {
		err = fmt.Errorf("write: %w", werr)
	}
	return err
}

func (c *Conn) readLoop(ctx context.Context, h Handler, wg *sync.WaitGroup) error {
	for {
		body, err := c.fr.Read()
		var fe *FrameError
		switch {
		case errors.As(err, &fe):
			c.reject(fe.ID, fe.Code, fe.Message)
			continue
		case err == nil:
			if ctx.Err() != nil {
				// Ended (exit, a signal): what was read behind it
				// stays unanswered, never started on a closing server.
				return nil
			}
			c.dispatch(ctx, body, h, wg)
			continue
		}
		if errors.Is(err, io.EOF) || ctx.Err() != nil || c.out.failed() {
			return nil // the end of the input, one asked for, or a broken pipe (reported by Serve)
		}
		c.log.Warn("json-rpc input: the stream ended", "err", err)
		return fmt.Errorf("read: %w", err)
	}
}

// Close closes the framer's reader, which ends Serve.
func (c *Conn) Close() error { return c.fr.Close() }

// Done is closed when Serve has returned.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Cancel cancels the context of the peer's request id, if it is still
// being handled. A cancelled request whose handler returns an error or
// no result is answered RequestCancelled.
func (c *Conn) Cancel(id ID) {
	c.mu.Lock()
	cancel := c.inflight[id]
	c.mu.Unlock()
	if cancel != nil {
		cancel(errPeerCancelled)
	}
}

// errPeerCancelled is the cause of a request's context that Cancel
// ended: only such a request is answered RequestCancelled for ending
// early; one whose connection ended (exit after shutdown) keeps its own
// answer.
var errPeerCancelled = errors.New("jsonrpc: the request was cancelled by its sender")

// Notify sends a notification (params nil: none).
func (c *Conn) Notify(method string, params any) error {
	p, err := c.marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s params: %w", method, err)
	}
	return c.out.push(appendNotification(make([]byte, 0, envelopeSize(method, p)), method, p))
}

// Call sends a request and decodes its result into result (nil: drop
// it). An error answer is returned as *Error; the end of ctx returns
// ctx.Err() (and calls Options.CallCancelled); the end of the connection
// returns ErrClosed.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	p, err := c.marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s params: %w", method, err)
	}
	id := NumberID(c.nextID.Add(1))
	ch := make(chan answer, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.pending[id] = ch
	c.freed.Signal() // one more request of the peer may start (Options.MaxInFlight)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.out.push(appendCall(make([]byte, 0, envelopeSize(method, p)), id, method, p)); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		if c.opts.CallCancelled != nil {
			c.opts.CallCancelled(id)
		}
		return ctx.Err()
	case a, ok := <-ch:
		if !ok {
			return ErrClosed
		}
		if a.err != nil {
			return fmt.Errorf("%s: %w", method, a.err)
		}
		if a.m.Error != nil {
			return a.m.Error
		}
		if result != nil {
			if err := c.opts.Unmarshal(a.m.Result, result); err != nil {
				return fmt.Errorf("decode %s result: %w", method, err)
			}
		}
		return nil
	}
}

// marshal encodes v; nil is nothing, json.RawMessage passes verbatim
// (checked: it becomes part of a frame).
func (c *Conn) marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if m == nil {
			return nil, nil
		}
		if !json.Valid(m) {
			return nil, errors.New("raw message is not valid JSON")
		}
		return m, nil
	}
	return c.opts.Marshal(v)
}

// reject answers a malformed message and logs it.
func (c *Conn) reject(id ID, code int, msg string) {
	c.log.Warn("json-rpc input: "+msg, "code", code, "id", id.String())
	c.answer(id, nil, &Error{Code: code, Message: msg})
}

// answer queues a response; a result that does not encode is answered
// InternalError.
func (c *Conn) answer(id ID, result []byte, e *Error) {
	if !id.IsValid() {
		id = nullID
	}
	if e != nil {
		_ = c.out.push(appendError(make([]byte, 0, envelopeSize(e.Message, e.Data)), id, e))
		return
	}
	_ = c.out.push(appendResult(make([]byte, 0, envelopeSize("", result)), id, result))
}

// dispatch classifies one body: a request goes to h on its own
// goroutine, a notification to h inline, an answer to the Call waiting
// for it; anything else is answered as malformed.
func (c *Conn) dispatch(ctx context.Context, body []byte, h Handler, wg *sync.WaitGroup) {
	m, id, fe := decode(body)
	if fe != nil {
		if fe.ID.IsValid() && isResponse(body) && c.deliver(fe.ID, answer{err: fmt.Errorf("%w: %s", ErrBadAnswer, fe.Message)}) {
			return // never answer an answer
		}
		c.reject(fe.ID, fe.Code, fe.Message)
		return
	}
	switch {
	case m.Method != "" && id.IsValid():
		if !c.admit(ctx) {
			return // ended while it waited: never started on a closing server
		}
		req := &Request{ID: id, Method: m.Method, Params: m.Params, unmarshal: c.opts.Unmarshal}
		if c.opts.Admit != nil {
			c.opts.Admit(req)
		}
		rctx, cancel := context.WithCancelCause(ctx)
		c.mu.Lock()
		c.inflight[id] = cancel
		c.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.endRequest(id, cancel)
			c.call(rctx, h, req)
		}()
	case m.Method != "":
		req := &Request{Method: m.Method, Params: m.Params, unmarshal: c.opts.Unmarshal}
		if _, err := c.run(ctx, h, req); err != nil {
			c.log.Warn("notification failed", "method", req.Method, "err", err)
		}
	case id.IsValid() && m.Result != nil && m.Error != nil:
		if !c.deliver(id, answer{err: fmt.Errorf("%w: it has both a result and an error (%v)", ErrBadAnswer, m.Error)}) {
			c.log.Warn("json-rpc input: an answer to no request of ours", "id", id.String())
		}
	case id.IsValid() && (m.Result != nil || m.Error != nil):
		if !c.deliver(id, answer{m: m}) {
			c.log.Warn("json-rpc input: an answer to no request of ours", "id", id.String())
		}
	case id.IsValid() && c.deliver(id, answer{err: fmt.Errorf("%w: it has neither a result nor an error", ErrBadAnswer)}):
		// The id is one of our calls: it is told, the peer is not answered.
	default:
		c.reject(id, InvalidRequest, "invalid request: neither a method nor a result")
	}
}

// admit waits, on the read loop, until a request may start: fewer than
// Options.MaxInFlight handlers run, plus one for each of our calls that
// waits for an answer (a handler calling back to the peer needs the read
// loop to read it). The wait stops reading: that is the backpressure.
// false when ctx ended first.
func (c *Conn) admit(ctx context.Context) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.running >= c.opts.MaxInFlight+len(c.pending) && ctx.Err() == nil {
		c.freed.Wait()
	}
	if ctx.Err() != nil {
		return false
	}
	c.running++
	return true
}

func (c *Conn) endRequest(id ID, cancel context.CancelCauseFunc) {
	c.mu.Lock()
	delete(c.inflight, id)
	c.running--
	c.freed.Signal()
	c.mu.Unlock()
	cancel(nil)
}

// call runs a request's handler and answers it.
func (c *Conn) call(ctx context.Context, h Handler, req *Request) {
	res, err := c.run(ctx, h, req)
	after := func() {}
	if t, ok := res.(Then); ok {
		res, after = t.Result, t.After
	}
	// Cancelled by the peer with no result of its own, or the connection
	// ended under it (a handler's own result, a shutdown's null, stands;
	// its context's error is a cancel).
	if context.Cause(ctx) == errPeerCancelled && (err != nil || isNil(res)) ||
		ctx.Err() != nil && errors.Is(err, context.Canceled) {
		err = &Error{Code: RequestCancelled, Message: "request cancelled"}
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Code: InternalError, Message: err.Error()}
		}
		c.answer(req.ID, nil, e)
		return
	}
	b, err := c.marshal(res)
	if err != nil {
		c.log.Error("encode result", "method", req.Method, "err", err)
		c.answer(req.ID, nil, Errorf(InternalError, "%s: encode result: %v", req.Method, err))
		return
	}
	c.answer(req.ID, b, nil)
	if after != nil {
		after()
	}
}

// isNil reports whether v is nil or a nil pointer, slice or map (a
// typed handler's "no result").
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return r.IsNil()
	}
	return false
}

// run calls h; a panic becomes an InternalError.
func (c *Conn) run(ctx context.Context, h Handler, req *Request) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("handler panic", "method", req.Method, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, Errorf(InternalError, "internal error in %s: %v", req.Method, p)
		}
	}()
	return h(ctx, req)
}

// deliver hands an answer to the Call waiting for id; false when no
// Call of ours waits for it.
func (c *Conn) deliver(id ID, a answer) bool {
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- a // buffered, and only its one deliver sends
	return true
}

// isResponse reports whether a body that is not a valid message is a
// JSON object shaped as an answer: no "method" member, and a "result" or
// an "error" one.
func isResponse(body []byte) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return false
	}
	_, method := members["method"]
	_, result := members["result"]
	_, failed := members["error"]
	return !method && (result || failed)
}

// decode reads a body as a JSON-RPC 2.0 message: -32700 when it is not
// JSON, -32600 (with its id when it has a usable one) when it is JSON but
// not a message.
func decode(body []byte) (*envelope, ID, *FrameError) {
	if !json.Valid(body) {
		return nil, ID{}, &FrameError{Code: ParseError, Message: "parse error: the message body is not valid JSON"}
	}
	var m envelope
	if err := unmarshalEnvelope(body, &m); err != nil {
		return nil, ID{}, &FrameError{Code: InvalidRequest, Message: "invalid request: not a JSON-RPC 2.0 request, notification or response: " + err.Error(), ID: peekID(body)}
	}
	id, idOK := parseID(m.ID)
	if m.JSONRPC != "2.0" {
		return nil, ID{}, &FrameError{Code: InvalidRequest, Message: `invalid request: "jsonrpc" must be "2.0"`, ID: id}
	}
	if len(m.ID) > 0 && !idOK {
		return nil, ID{}, &FrameError{Code: InvalidRequest, Message: "invalid request: id must be a string, a number or null"}
	}
	return &m, id, nil
}
