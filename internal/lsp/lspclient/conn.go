package lspclient

import (
	"context"
	"errors"
	"io"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/jsonrpc"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp"
)

// dial is the editor's connection: internal/jsonrpc with LSP's
// Content-Length framing and the protocol codec, as the server's. A call
// whose context ends sends $/cancelRequest, as an editor does.
func dial(rwc io.ReadWriteCloser) *jsonrpc.Conn {
	var conn *jsonrpc.Conn
	conn = jsonrpc.NewConn(jsonrpc.HeaderFramer(rwc, rwc, lsp.MaxMessageSize), jsonrpc.Options{
		Marshal: lsp.Codec{}.Marshal, Unmarshal: lsp.Codec{}.Unmarshal,
		CallCancelled: func(id jsonrpc.ID) {
			if n, ok := id.Number(); ok {
				_ = conn.Notify(protocol.MethodCancelRequest, &protocol.CancelParams{ID: protocol.Integer(n)})
			}
		},
	})
	return conn
}

// dispatcher presents the connection as the go.lsp.dev/jsonrpc2 Conn
// that protocol.ServerDispatcher (the typed protocol.Server of Editor.
// Server) is written against. Only Call and Notify are used by it; the
// connection is served by jsonrpc.Conn.Serve (Connect), so Go does
// nothing. Error answers come back as *jsonrpc2.Error, as an editor's
// LSP library would give them.
type dispatcher struct{ conn *jsonrpc.Conn }

var _ jsonrpc2.Conn = dispatcher{}

func (d dispatcher) Call(ctx context.Context, method string, params, result any) (jsonrpc2.ID, error) {
	return jsonrpc2.ID{}, editorError(d.conn.Call(ctx, method, params, result))
}

// Notify sends a notification. protocol.Call follows a call whose
// context ended with $/cancelRequest for the id Call returned, which is
// none here: the connection sent the real one (dial), so that one is
// dropped.
func (d dispatcher) Notify(_ context.Context, method string, params any) error {
	if p, ok := params.(*protocol.CancelParams); ok && method == protocol.MethodCancelRequest && p.ID == protocol.String("") {
		return nil
	}
	return editorError(d.conn.Notify(method, params))
}

func (d dispatcher) Go(context.Context, jsonrpc2.Handler) {}
func (d dispatcher) Close() error                         { return d.conn.Close() }
func (d dispatcher) Done() <-chan struct{}                { return d.conn.Done() }
func (d dispatcher) Err() error                           { return nil }

// editorError is err as go.lsp.dev/jsonrpc2 reports it.
func editorError(err error) error {
	var e *jsonrpc.Error
	switch {
	case errors.As(err, &e):
		return jsonrpc2.NewError(jsonrpc2.Code(e.Code), e.Message)
	case errors.Is(err, jsonrpc.ErrClosed):
		return jsonrpc2.ErrClientClosing
	}
	return err
}

// methods is the editor's side: the server's requests and notifications
// routed to client.
func (c *client) methods() jsonrpc.Methods {
	noResult := func(f func(context.Context) error) jsonrpc.Handler {
		return func(ctx context.Context, _ *jsonrpc.Request) (any, error) { return nil, f(ctx) }
	}
	return jsonrpc.Methods{
		protocol.MethodTextDocumentPublishDiagnostics: jsonrpc.NotifyFunc(c.PublishDiagnostics),
		protocol.MethodProgress:                       jsonrpc.NotifyFunc(c.Progress),
		protocol.MethodWindowWorkDoneProgressCreate:   jsonrpc.NotifyFunc(c.WorkDoneProgressCreate),
		protocol.MethodWindowShowMessage:              jsonrpc.NotifyFunc(c.ShowMessage),
		protocol.MethodWindowLogMessage:               jsonrpc.NotifyFunc(c.LogMessage),
		protocol.MethodWindowShowMessageRequest:       jsonrpc.CallFunc(c.ShowMessageRequest),
		protocol.MethodWindowShowDocument:             jsonrpc.CallFunc(c.ShowDocument),
		protocol.MethodWorkspaceApplyEdit:             jsonrpc.CallFunc(c.ApplyEdit),
		protocol.MethodWorkspaceConfiguration:         jsonrpc.CallFunc(c.Configuration),
		protocol.MethodWorkspaceWorkspaceFolders: func(ctx context.Context, _ *jsonrpc.Request) (any, error) {
			return c.WorkspaceFolders(ctx)
		},
		protocol.MethodWorkspaceCodeLensRefresh: noResult(c.CodeLensRefresh),
		protocol.MethodClientRegisterCapability: jsonrpc.NotifyFunc(c.RegisterCapability),
	}
}
