package lsp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/jsonrpc"
)

// serverNotInitialized is LSP's -32002: a request before initialize.
const serverNotInitialized = -32002

// marshal and unmarshal are the connection's codec: the protocol
// package's union-aware encoding. Decoded values may alias their input,
// so they decode from an owned copy.
func marshal(v any) ([]byte, error) { return protocol.Marshal(v) }

func unmarshal(data []byte, v any) error { return protocol.Unmarshal(bytes.Clone(data), v) }

// methods is the server's side of LSP, one typed row a method: the
// params are decoded with the protocol codec (InvalidParams when they do
// not fit), an unknown request is answered MethodNotFound, an unknown
// notification dropped.
func (s *Server) methods() jsonrpc.Methods {
	return jsonrpc.Methods{
		protocol.MethodInitialize:                         jsonrpc.CallFunc(s.Initialize),
		protocol.MethodInitialized:                        jsonrpc.NotifyFunc(s.Initialized),
		protocol.MethodShutdown:                           func(ctx context.Context, _ *jsonrpc.Request) (any, error) { return nil, s.Shutdown(ctx) },
		protocol.MethodExit:                               func(ctx context.Context, _ *jsonrpc.Request) (any, error) { return nil, s.Exit(ctx) },
		protocol.MethodTextDocumentDidOpen:                jsonrpc.NotifyFunc(s.DidOpen),
		protocol.MethodTextDocumentDidChange:              jsonrpc.NotifyFunc(s.DidChange),
		protocol.MethodTextDocumentDidSave:                jsonrpc.NotifyFunc(s.DidSave),
		protocol.MethodTextDocumentDidClose:               jsonrpc.NotifyFunc(s.DidClose),
		protocol.MethodTextDocumentCodeAction:             jsonrpc.CallFunc(s.CodeAction),
		protocol.MethodCodeActionResolve:                  jsonrpc.CallFunc(s.CodeActionResolve),
		protocol.MethodTextDocumentCodeLens:               jsonrpc.CallFunc(s.CodeLens),
		protocol.MethodWorkspaceExecuteCommand:            jsonrpc.CallFunc(s.ExecuteCommand),
		protocol.MethodWorkspaceDidChangeConfiguration:    jsonrpc.NotifyFunc(s.DidChangeConfiguration),
		protocol.MethodWorkspaceDidChangeWorkspaceFolders: jsonrpc.NotifyFunc(s.DidChangeWorkspaceFolders),
		protocol.MethodWorkspaceDidChangeWatchedFiles:     jsonrpc.NotifyFunc(s.DidChangeWatchedFiles),
		protocol.MethodWindowWorkDoneProgressCancel:       jsonrpc.NotifyFunc(s.WorkDoneProgressCancel),
	}
}

// newHandler wraps the server's methods for the connection (STYLE 12;
// internal/jsonrpc runs requests concurrently and notifications in order
// on the read loop, and answers a panic as InternalError):
//
//   - "$/cancelRequest" is handled on the read loop, ahead of anything
//     queued after it, and cancels the named request's context;
//   - a request the client cancelled, or that failed with the
//     connection's end (context.Canceled), answers -32800
//     (protocol.ErrRequestCancelled); a result a handler returned stands
//     even when the connection ended meanwhile (a shutdown's null while
//     exit arrives): internal/jsonrpc answers -32800 for a peer's
//     $/cancelRequest itself, by the context's cause;
//   - an error with a JSON-RPC code keeps it; any other error of a
//     request is InternalError with the method and its message.
func newHandler(log *slog.Logger, conn *jsonrpc.Conn, next jsonrpc.Handler) jsonrpc.Handler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == protocol.MethodCancelRequest {
			cancelRequest(log, conn, req)
			return nil, nil
		}
		result, err := next(ctx, req)
		if !req.IsCall() {
			return nil, err
		}
		if errors.Is(err, protocol.ErrRequestCancelled) || ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return nil, errRequestCancelled
		}
		if err != nil {
			return nil, wireError(req.Method, err)
		}
		return result, nil
	}
}

// errRequestCancelled is protocol.ErrRequestCancelled on this connection.
var errRequestCancelled = &jsonrpc.Error{Code: jsonrpc.RequestCancelled, Message: "cancelled JSON-RPC"}

// cancelRequest cancels the request a $/cancelRequest names.
func cancelRequest(log *slog.Logger, conn *jsonrpc.Conn, req *jsonrpc.Request) {
	var p protocol.CancelParams
	if err := req.Decode(&p); err != nil {
		log.Warn("malformed $/cancelRequest", "err", err)
		return
	}
	switch id := p.ID.(type) {
	case protocol.Integer:
		conn.Cancel(jsonrpc.NumberID(int64(id)))
	case protocol.String:
		conn.Cancel(jsonrpc.StringID(string(id)))
	default:
		log.Warn("malformed $/cancelRequest id", "id", fmt.Sprint(p.ID))
	}
}

// wireError is the error object a request's error is answered with.
func wireError(method string, err error) error {
	switch {
	case isWireError(err):
		return err
	case errors.Is(err, protocol.ErrContentModified):
		return &jsonrpc.Error{Code: int(protocol.CodeContentModified), Message: "content modified"}
	}
	return jsonrpc.Errorf(jsonrpc.InternalError, "%s: %v", method, err)
}

// invalidParams builds a -32602 error.
func invalidParams(format string, args ...any) error {
	return jsonrpc.Errorf(jsonrpc.InvalidParams, format, args...)
}

// isWireError reports whether err carries a JSON-RPC error code.
func isWireError(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we)
}

// Codec is the connection's payload codec over the protocol package's
// union-aware Marshal/Unmarshal (lspclient's too).
type Codec struct{}

// Marshal encodes v.
func (Codec) Marshal(v any) ([]byte, error) { return marshal(v) }

// Unmarshal decodes data into v.
func (Codec) Unmarshal(data []byte, v any) error { return unmarshal(data, v) }
