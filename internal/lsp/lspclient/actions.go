package lspclient

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/protocol"
)

// CodeActions asks for the actions at rng of rel with diags in context.
// Commands returned bare are wrapped as actions.
func (e *Editor) CodeActions(ctx context.Context, rel string, rng protocol.Range, diags []protocol.Diagnostic) ([]*protocol.CodeAction, error) {
	if diags == nil {
		diags = []protocol.Diagnostic{}
	}
	res, err := e.server.CodeAction(ctx, &protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: e.URI(rel)},
		Range:        rng,
		Context:      protocol.CodeActionContext{Diagnostics: diags},
	})
	if err != nil {
		return nil, err
	}
	out := make([]*protocol.CodeAction, 0, len(res))
	for _, r := range res {
		switch x := r.(type) {
		case *protocol.CodeAction:
			out = append(out, x)
		case *protocol.Command:
			out = append(out, &protocol.CodeAction{Title: x.Title, Command: *x})
		}
	}
	return out, nil
}

// FindAction returns the first action whose title starts with prefix.
func FindAction(actions []*protocol.CodeAction, prefix string) (*protocol.CodeAction, bool) {
	for _, a := range actions {
		if len(a.Title) >= len(prefix) && a.Title[:len(prefix)] == prefix {
			return a, true
		}
	}
	return nil, false
}

// ApplyCodeAction resolves the action when it has no command yet, applies
// its edit if any, and executes its command, returning the result.
func (e *Editor) ApplyCodeAction(ctx context.Context, ca *protocol.CodeAction) (json.RawMessage, error) {
	if ca.Command.Command == "" && ca.Edit == nil {
		resolved, err := e.server.CodeActionResolve(ctx, ca)
		if err != nil {
			return nil, fmt.Errorf("resolve %q: %w", ca.Title, err)
		}
		ca = resolved
	}
	if ca.Edit != nil {
		if r := e.Apply(ctx, *ca.Edit); !r.Applied {
			return nil, fmt.Errorf("apply %q: not applied", ca.Title)
		}
	}
	if ca.Command.Command == "" {
		return nil, nil
	}
	var arg any
	if len(ca.Command.Arguments) > 0 {
		arg = json.RawMessage(ca.Command.Arguments[0])
	}
	return e.ExecuteCommand(ctx, ca.Command.Command, arg)
}

// ExecuteCommand runs a command with one object argument (nil for none).
func (e *Editor) ExecuteCommand(ctx context.Context, cmd string, arg any) (json.RawMessage, error) {
	p := &protocol.ExecuteCommandParams{Command: cmd}
	if arg != nil {
		raw, err := json.Marshal(arg)
		if err != nil {
			return nil, err
		}
		p.Arguments = []protocol.LSPAny{protocol.LSPAny(raw)}
	}
	res, err := e.server.ExecuteCommand(ctx, p)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(res), nil
}

// RunID executes a command that answers {runId} and returns the id.
func (e *Editor) RunID(ctx context.Context, cmd string, arg any) (string, error) {
	raw, err := e.ExecuteCommand(ctx, cmd, arg)
	if err != nil {
		return "", err
	}
	var r struct {
		RunID string `json:"runId"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.RunID == "" {
		return "", fmt.Errorf("%s: no runId in %s", cmd, raw)
	}
	return r.RunID, nil
}

// CodeLenses asks for the lenses of rel.
func (e *Editor) CodeLenses(ctx context.Context, rel string) ([]protocol.CodeLens, error) {
	return e.server.CodeLens(ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: e.URI(rel)}})
}

// Call sends a raw request (for malformed or unknown methods).
func (e *Editor) Call(ctx context.Context, method string, params json.RawMessage, result any) error {
	return editorError(e.conn.Call(ctx, method, params, result))
}

// Notify sends a raw notification.
func (e *Editor) Notify(ctx context.Context, method string, params json.RawMessage) error {
	return editorError(e.conn.Notify(method, params))
}

// CancelProgress sends window/workDoneProgress/cancel for token.
func (e *Editor) CancelProgress(ctx context.Context, token string) error {
	return e.server.WorkDoneProgressCancel(ctx, &protocol.WorkDoneProgressCancelParams{Token: protocol.String(token)})
}

// ProgressEnded reports whether token's progress has ended, and how.
func ProgressEnded(s State, token string) (string, bool) {
	for _, p := range s.Progress[token] {
		if p.Kind == "end" {
			return p.Message, true
		}
	}
	return "", false
}
