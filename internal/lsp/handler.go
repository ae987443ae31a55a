package lsp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Codec is the JSON-RPC payload codec over the protocol package's
// union-aware Marshal/Unmarshal. Raw messages pass through verbatim.
type Codec struct{}

// Marshal encodes v.
func (Codec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case jsonrpc2.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	case *jsonrpc2.RawMessage:
		if m == nil || *m == nil {
			return []byte("null"), nil
		}
		return *m, nil
	}
	return protocol.Marshal(v)
}

// Unmarshal decodes data into v.
func (Codec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	}
	// Decoded values may alias their input, and the input is borrowed from
	// the transport frame: decode from an owned copy.
	return protocol.Unmarshal(bytes.Clone(data), v)
}

// newHandler assembles the connection's handler (STYLE 12):
//
//   - "$/cancelRequest" is handled on the read loop, ahead of anything
//     queued after it, and cancels the named call's context;
//   - calls (requests) are released with jsonrpc2.Async and run
//     concurrently; notifications run inline on the read loop, so they
//     are handled strictly in the order they arrived;
//   - a call whose context was cancelled answers -32800;
//   - a panic in any handler becomes an error reply (or a log line for a
//     notification), never a dead connection;
//   - a notification's error is logged, never returned (jsonrpc2 would
//     tear the connection down).
func newHandler(log *slog.Logger, next jsonrpc2.Handler) jsonrpc2.Handler {
	inner := func(ctx context.Context, req *jsonrpc2.Request) (result any, err error) {
		call := req.IsCall()
		method := strings.Clone(req.Method())
		if call {
			jsonrpc2.Async(ctx)
		}
		defer func() {
			if p := recover(); p != nil {
				log.Error("handler panic", "method", method, "panic", p, "stack", string(debug.Stack()))
				result, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in %s: %v", method, p)
			}
			if !call {
				if err != nil {
					log.Warn("notification failed", "method", method, "err", err)
				}
				result, err = nil, nil
				return
			}
			if ctx.Err() != nil && (err != nil || result == nil) {
				result, err = nil, protocol.ErrRequestCancelled
			}
		}()
		result, err = next(ctx, req)
		if call && errors.Is(err, jsonrpc2.ErrParse) {
			// The envelope parsed; its params did not match the method.
			err = jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", method, err)
		}
		if call && err != nil && !isWireError(err) {
			// Domain errors are reported as request failures with their
			// message; wire errors keep their code.
			err = jsonrpc2.Errorf(jsonrpc2.InternalError, "%s: %v", method, err)
		}
		return result, err
	}
	h, canceller := jsonrpc2.CancelHandler(inner)
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if req.Method() != protocol.MethodCancelRequest {
			return h(ctx, req)
		}
		var p protocol.CancelParams
		if err := protocol.Unmarshal(req.Params(), &p); err != nil {
			log.Warn("malformed $/cancelRequest", "err", err)
			return nil, nil
		}
		switch id := p.ID.(type) {
		case protocol.Integer:
			canceller(jsonrpc2.NewNumberID(int64(id)))
		case protocol.String:
			canceller(jsonrpc2.NewStringID(string(id)))
		default:
			log.Warn("malformed $/cancelRequest id", "id", fmt.Sprint(p.ID))
		}
		return nil, nil
	}
}

// isWireError reports whether err carries a JSON-RPC error code.
func isWireError(err error) bool {
	var we *jsonrpc2.Error
	return errors.As(err, &we)
}

// invalidParams builds a -32602 error.
func invalidParams(format string, args ...any) error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, format, args...)
}
