package lsp

import (
	"context"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/jsonrpc"
)

// client is the editor as the server sees it: protocol.Client over the
// connection. (go.lsp.dev/protocol's own dispatcher wants a
// go.lsp.dev/jsonrpc2 connection.) A call whose context ends sends
// $/cancelRequest (Options.CallCancelled in Serve).
type client struct{ conn *jsonrpc.Conn }

var _ protocol.Client = client{}

// call sends a request and decodes its result into result.
func (c client) call(ctx context.Context, method string, params, result any) error {
	return c.conn.Call(ctx, method, params, result)
}

func (c client) notify(method string, params any) error { return c.conn.Notify(method, params) }

// callFor is call with a typed result.
func callFor[R any](ctx context.Context, c client, method string, params any) (R, error) {
	var r R
	err := c.call(ctx, method, params, &r)
	return r, err
}

func (c client) Progress(_ context.Context, p *protocol.ProgressParams) error {
	return c.notify(protocol.MethodProgress, p)
}

func (c client) LogTrace(_ context.Context, p *protocol.LogTraceParams) error {
	return c.notify(protocol.MethodLogTrace, p)
}

func (c client) RegisterCapability(ctx context.Context, p *protocol.RegistrationParams) error {
	return c.call(ctx, protocol.MethodClientRegisterCapability, p, nil)
}

func (c client) UnregisterCapability(ctx context.Context, p *protocol.UnregistrationParams) error {
	return c.call(ctx, protocol.MethodClientUnregisterCapability, p, nil)
}

func (c client) ShowMessage(_ context.Context, p *protocol.ShowMessageParams) error {
	return c.notify(protocol.MethodWindowShowMessage, p)
}

func (c client) ShowMessageRequest(ctx context.Context, p *protocol.ShowMessageRequestParams) (*protocol.MessageActionItem, error) {
	return callFor[*protocol.MessageActionItem](ctx, c, protocol.MethodWindowShowMessageRequest, p)
}

func (c client) LogMessage(_ context.Context, p *protocol.LogMessageParams) error {
	return c.notify(protocol.MethodWindowLogMessage, p)
}

func (c client) ShowDocument(ctx context.Context, p *protocol.ShowDocumentParams) (*protocol.ShowDocumentResult, error) {
	return callFor[*protocol.ShowDocumentResult](ctx, c, protocol.MethodWindowShowDocument, p)
}

func (c client) WorkDoneProgressCreate(ctx context.Context, p *protocol.WorkDoneProgressCreateParams) error {
	return c.call(ctx, protocol.MethodWindowWorkDoneProgressCreate, p, nil)
}

func (c client) Telemetry(_ context.Context, p protocol.LSPAny) error {
	return c.notify(protocol.MethodTelemetryEvent, p)
}

func (c client) PublishDiagnostics(_ context.Context, p *protocol.PublishDiagnosticsParams) error {
	return c.notify(protocol.MethodTextDocumentPublishDiagnostics, p)
}

func (c client) Configuration(ctx context.Context, p *protocol.ConfigurationParams) ([]protocol.LSPAny, error) {
	return callFor[[]protocol.LSPAny](ctx, c, protocol.MethodWorkspaceConfiguration, p)
}

func (c client) WorkspaceFolders(ctx context.Context) ([]protocol.WorkspaceFolder, error) {
	return callFor[[]protocol.WorkspaceFolder](ctx, c, protocol.MethodWorkspaceWorkspaceFolders, nil)
}

func (c client) ApplyEdit(ctx context.Context, p *protocol.ApplyWorkspaceEditParams) (*protocol.ApplyWorkspaceEditResult, error) {
	return callFor[*protocol.ApplyWorkspaceEditResult](ctx, c, protocol.MethodWorkspaceApplyEdit, p)
}

func (c client) CodeLensRefresh(ctx context.Context) error {
	return c.call(ctx, protocol.MethodWorkspaceCodeLensRefresh, nil, nil)
}

func (c client) FoldingRangeRefresh(ctx context.Context) error {
	return c.call(ctx, protocol.MethodWorkspaceFoldingRangeRefresh, nil, nil)
}

func (c client) SemanticTokensRefresh(ctx context.Context) error {
	return c.call(ctx, protocol.MethodWorkspaceSemanticTokensRefresh, nil, nil)
}

func (c client) InlineValueRefresh(ctx context.Context) error {
	return c.call(ctx, protocol.MethodWorkspaceInlineValueRefresh, nil, nil)
}

func (c client) InlayHintRefresh(ctx context.Context) error {
	return c.call(ctx, protocol.MethodWorkspaceInlayHintRefresh, nil, nil)
}

func (c client) DiagnosticRefresh(ctx context.Context) error {
	return c.call(ctx, protocol.MethodWorkspaceDiagnosticRefresh, nil, nil)
}

func (c client) TextDocumentContentRefresh(ctx context.Context, p *protocol.TextDocumentContentRefreshParams) error {
	return c.call(ctx, protocol.MethodWorkspaceTextDocumentContentRefresh, p, nil)
}
