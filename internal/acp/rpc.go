package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
)

// JSON-RPC 2.0 error codes.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
)

// maxLine bounds one incoming message; a longer line is answered with
// -32600 and skipped, never buffered whole. A variable for tests.
var maxLine = 32 << 20

// RPCError is a JSON-RPC error object; handlers return one to choose the
// code, any other error is answered as -32603.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

func invalidParams(format string, args ...any) *RPCError {
	return &RPCError{Code: codeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// message is any JSON-RPC message: a request (id and method), a
// notification (method only) or a response (id, result or error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// response is an outgoing response; Result is always present on success
// (JSON-RPC requires it) and ID is null when the request's id could not
// be read.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
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

// conn is one newline-delimited JSON-RPC connection. Every outgoing
// message goes through one ordered queue drained by one writer, so a
// prompt's reply never overtakes the session/update notifications sent
// before it, and a slow reader never blocks a run's event sink.
type conn struct {
	log *slog.Logger
	out *outbox

	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[string]chan *message
	closed  bool
}

func newConn(w io.Writer, log *slog.Logger) *conn {
	return &conn{log: log, out: newOutbox(w, log), pending: map[string]chan *message{}}
}

// send queues one message.
func (c *conn) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		c.log.Error("encode message", "err", err)
		return
	}
	c.out.push(b)
}

// notify sends a notification.
func (c *conn) notify(method string, params any) {
	c.send(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
}

// errClosed: the peer went away while a request waited for its answer.
var errClosed = errors.New("acp connection closed")

// call sends a request to the peer and decodes its result into out. It
// ends with ctx (the request stays unanswered on the peer's side; ACP's
// session/cancel tells the client to answer it as cancelled).
func (c *conn) call(ctx context.Context, method string, params, out any) error {
	id := c.nextID.Add(1)
	key := strconv.FormatInt(id, 10)
	ch := make(chan *message, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed
	}
	c.pending[key] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
	}()
	c.send(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
	select {
	case <-ctx.Done():
		return ctx.Err()
	case m, ok := <-ch:
		if !ok {
			return errClosed
		}
		if m.Error != nil {
			return m.Error
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				return fmt.Errorf("decode %s result: %w", method, err)
			}
		}
		return nil
	}
}

// serve reads messages until r ends or ctx is done, dispatching them to
// h. It returns after every request handler it started has returned and
// the outbox is flushed.
func (c *conn) serve(ctx context.Context, r io.Reader, h handler) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	br := bufio.NewReaderSize(r, 64<<10)
	var readErr error
	for ctx.Err() == nil {
		line, tooLong, err := readLine(br)
		if tooLong {
			c.replyError(nil, codeInvalidRequest, fmt.Sprintf("message longer than %d bytes", maxLine))
		} else if len(bytes.TrimSpace(line)) > 0 {
			c.dispatch(ctx, line, h, &wg)
		}
		if err != nil {
			// After ctx ends the reader is closed under the loop (Serve):
			// that error is the end asked for, not a broken stream.
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				readErr = fmt.Errorf("read acp stream: %w", err)
			}
			break
		}
	}
	// The client is gone (or ctx ended): stop what runs, then answer
	// nothing more.
	cancel()
	c.mu.Lock()
	c.closed = true
	for k, ch := range c.pending {
		close(ch)
		delete(c.pending, k)
	}
	c.mu.Unlock()
	wg.Wait()
	c.out.close()
	return readErr
}

// readLine reads one line without its newline; a line past maxLine is
// consumed and reported as tooLong, never kept.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > maxLine {
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")), tooLong, err
	}
}

// dispatch classifies one line: a malformed one is answered with -32700
// (not JSON) or -32600 (JSON but not a JSON-RPC 2.0 message) and the
// connection goes on.
func (c *conn) dispatch(ctx context.Context, line []byte, h handler, wg *sync.WaitGroup) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || !json.Valid(line) {
			c.replyError(nil, codeParseError, "parse error: "+err.Error())
		} else {
			c.replyError(idOf(line), codeInvalidRequest, "invalid request: "+err.Error())
		}
		return
	}
	if m.JSONRPC != "2.0" {
		c.replyError(validID(m.ID), codeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
		return
	}
	if len(m.ID) > 0 && validID(m.ID) == nil {
		c.replyError(nil, codeInvalidRequest, "invalid request: id must be a string, a number or null")
		return
	}
	switch {
	case m.Method != "" && len(m.ID) > 0:
		if a, ok := h.(admitter); ok {
			a.admit(m.Method, m.Params)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := h.request(ctx, m.Method, m.Params)
			if err != nil {
				var re *RPCError
				if !errors.As(err, &re) {
					re = &RPCError{Code: codeInternal, Message: err.Error()}
				}
				c.send(response{JSONRPC: "2.0", ID: m.ID, Error: re})
				return
			}
			then := func() {}
			if a, ok := res.(replyThen); ok {
				res, then = a.result, a.then
			}
			if res == nil {
				res = struct{}{}
			}
			c.send(response{JSONRPC: "2.0", ID: m.ID, Result: res})
			then()
		}()
	case m.Method != "":
		h.notification(ctx, m.Method, m.Params)
	case len(m.ID) > 0 && (m.Result != nil || m.Error != nil):
		c.mu.Lock()
		ch := c.pending[string(bytes.TrimSpace(m.ID))]
		delete(c.pending, string(bytes.TrimSpace(m.ID)))
		c.mu.Unlock()
		if ch == nil {
			c.log.Warn("acp: a response to no request of ours", "id", string(m.ID))
			return
		}
		ch <- &m
	default:
		c.replyError(validID(m.ID), codeInvalidRequest, "invalid request: neither a method nor a result")
	}
}

// replyThen is a request's result with what to send after the reply
// (a session's first updates, which name an id the client learns from
// the reply).
type replyThen struct {
	result any
	then   func()
}

// idOf digs the id out of a message that did not decode as a whole, so
// the error can name it; null when it has none usable.
func idOf(line []byte) json.RawMessage {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &probe) != nil {
		return nil
	}
	return validID(probe.ID)
}

// validID returns id when it is a JSON string, number or null, else nil.
func validID(id json.RawMessage) json.RawMessage {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(id, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64, nil:
		return id
	}
	return nil
}

func (c *conn) replyError(id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	c.log.Warn("acp: bad message", "code", code, "err", msg)
	c.send(response{JSONRPC: "2.0", ID: id, Error: &RPCError{Code: code, Message: msg}})
}

// outbox is an unbounded FIFO of encoded messages written by one
// goroutine, one line each.
type outbox struct {
	w    io.Writer
	log  *slog.Logger
	mu   sync.Mutex
	cond *sync.Cond
	q    [][]byte
	done bool
	exit chan struct{}
}

func newOutbox(w io.Writer, log *slog.Logger) *outbox {
	o := &outbox{w: w, log: log, exit: make(chan struct{})}
	o.cond = sync.NewCond(&o.mu)
	go o.loop()
	return o
}

func (o *outbox) push(b []byte) {
	o.mu.Lock()
	if !o.done {
		o.q = append(o.q, b)
		o.cond.Signal()
	}
	o.mu.Unlock()
}

// loop ends when close is called and the queue is empty, or when a
// write fails (the peer is gone).
func (o *outbox) loop() {
	defer close(o.exit)
	for {
		o.mu.Lock()
		for len(o.q) == 0 && !o.done {
			o.cond.Wait()
		}
		if len(o.q) == 0 {
			o.mu.Unlock()
			return
		}
		b := o.q[0]
		o.q = o.q[1:]
		o.mu.Unlock()
		if _, err := o.w.Write(append(b, '\n')); err != nil {
			o.log.Warn("acp: write", "err", err)
			o.mu.Lock()
			o.done, o.q = true, nil
			o.mu.Unlock()
			return
		}
	}
}

// close flushes what is queued and stops the writer.
func (o *outbox) close() {
	o.mu.Lock()
	o.done = true
	o.cond.Signal()
	o.mu.Unlock()
	<-o.exit
}
