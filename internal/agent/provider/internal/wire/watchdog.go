package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// StallError is a provider that stopped sending: no response headers
// and first byte within FirstByte, or no byte of the stream for Idle. It
// is a net.Error whose Timeout is true, so it is classified and retried
// like a transport timeout (ClassOfErr).
type StallError struct {
	// Phase is "first byte" or "idle".
	Phase string
	After time.Duration
	// Key is the configuration key that sets the bound.
	Key string
}

func (e *StallError) Error() string {
	what := "sent nothing for"
	if e.Phase == "first byte" {
		what = "did not start its answer within"
	}
	return fmt.Sprintf("the provider %s %v (%s in the config raises it)", what, e.After, e.Key)
}

// Timeout and Temporary make a StallError a net.Error that timed out.
func (e *StallError) Timeout() bool   { return true }
func (e *StallError) Temporary() bool { return true }

// Watchdog bounds how long a request waits for its response to start
// (FirstByte: the status line and the first byte of the body) and each
// later wait for more of the body (Idle), so a provider that hangs is
// noticed, cancelled and retried instead of holding the run until its
// wall budget. Zero leaves that bound off.
type Watchdog struct {
	Base      http.RoundTripper
	FirstByte time.Duration
	Idle      time.Duration
}

// Config keys of the bounds, named in StallError.
const (
	FirstByteKey = "model.first_byte_timeout"
	IdleKey      = "model.idle_timeout"
)

// RoundTrip implements http.RoundTripper.
func (w *Watchdog) RoundTrip(req *http.Request) (*http.Response, error) {
	base := w.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if w.FirstByte <= 0 && w.Idle <= 0 {
		return base.RoundTrip(req)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	d := &dog{cancel: cancel, ctx: ctx}
	d.arm(w.FirstByte, &StallError{Phase: "first byte", After: w.FirstByte, Key: FirstByteKey})
	resp, err := base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		d.stop()
		err = d.cause(err)
		cancel(nil)
		return nil, err
	}
	resp.Body = &dogBody{body: resp.Body, d: d, idle: w.Idle, first: true}
	return resp, nil
}

// dog is one request's timer: when it fires, the request's context is
// cancelled with the StallError as cause.
type dog struct {
	mu     sync.Mutex
	t      *time.Timer
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// arm (re)starts the timer for after (off when after <= 0).
func (d *dog) arm(after time.Duration, stall *StallError) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.t != nil {
		d.t.Stop()
		d.t = nil
	}
	if after > 0 {
		d.t = time.AfterFunc(after, func() { d.cancel(stall) })
	}
}

func (d *dog) stop() { d.arm(0, nil) }

// cause replaces the error of a request the timer cancelled by the
// StallError that says why.
func (d *dog) cause(err error) error {
	var stall *StallError
	if errors.As(context.Cause(d.ctx), &stall) {
		return stall
	}
	return err
}

// dogBody re-arms the timer for Idle after every read that returned
// bytes; the first byte of the body is still under FirstByte.
type dogBody struct {
	body  io.ReadCloser
	d     *dog
	idle  time.Duration
	first bool
}

func (b *dogBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if n > 0 && (b.first || b.idle > 0) {
		b.first = false
		b.d.arm(b.idle, &StallError{Phase: "idle", After: b.idle, Key: IdleKey})
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = b.d.cause(err)
	}
	return n, err
}

func (b *dogBody) Close() error {
	b.d.stop()
	b.d.cancel(nil)
	return b.body.Close()
}
