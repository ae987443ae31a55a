package lspclient

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/protocol"
)

// client answers the server's requests and records its notifications.
type client struct {
	protocol.UnimplementedClient
	e *Editor
}

func (c *client) notify(method string, params any) {
	if h := c.e.cfg.Hooks.OnNotify; h != nil {
		h(method, params)
	}
}

func (c *client) PublishDiagnostics(ctx context.Context, p *protocol.PublishDiagnosticsParams) error {
	c.e.mu.Lock()
	c.e.state.Diagnostics[p.URI] = append([]protocol.Diagnostic(nil), p.Diagnostics...)
	c.e.bump()
	c.e.mu.Unlock()
	c.notify(protocol.MethodTextDocumentPublishDiagnostics, p)
	return nil
}

func (c *client) Progress(ctx context.Context, p *protocol.ProgressParams) error {
	var v Progress
	if err := json.Unmarshal(p.Value, &v); err != nil {
		return fmt.Errorf("progress value: %w", err)
	}
	token := fmt.Sprint(p.Token)
	if s, ok := p.Token.(protocol.String); ok {
		token = string(s)
	}
	c.e.mu.Lock()
	c.e.state.Progress[token] = append(c.e.state.Progress[token], v)
	c.e.bump()
	c.e.mu.Unlock()
	c.notify(protocol.MethodProgress, &v)
	return nil
}

func (c *client) WorkDoneProgressCreate(ctx context.Context, p *protocol.WorkDoneProgressCreateParams) error {
	token := fmt.Sprint(p.Token)
	if s, ok := p.Token.(protocol.String); ok {
		token = string(s)
	}
	c.e.mu.Lock()
	c.e.state.Created = append(c.e.state.Created, token)
	c.e.bump()
	c.e.mu.Unlock()
	return nil
}

func (c *client) ShowMessage(ctx context.Context, p *protocol.ShowMessageParams) error {
	c.e.mu.Lock()
	c.e.state.Messages = append(c.e.state.Messages, *p)
	c.e.bump()
	c.e.mu.Unlock()
	c.notify(protocol.MethodWindowShowMessage, p)
	return nil
}

func (c *client) LogMessage(ctx context.Context, p *protocol.LogMessageParams) error {
	c.e.mu.Lock()
	c.e.state.Logs = append(c.e.state.Logs, p.Message)
	c.e.bump()
	c.e.mu.Unlock()
	return nil
}

func (c *client) ShowMessageRequest(ctx context.Context, p *protocol.ShowMessageRequestParams) (*protocol.MessageActionItem, error) {
	c.e.mu.Lock()
	c.e.state.Requests = append(c.e.state.Requests, *p)
	c.e.bump()
	c.e.mu.Unlock()
	c.notify(protocol.MethodWindowShowMessageRequest, p)
	if h := c.e.cfg.Hooks.ShowMessageRequest; h != nil {
		return h(ctx, p)
	}
	if len(p.Actions) == 0 {
		return nil, nil
	}
	return &p.Actions[0], nil
}

func (c *client) ShowDocument(ctx context.Context, p *protocol.ShowDocumentParams) (*protocol.ShowDocumentResult, error) {
	c.e.mu.Lock()
	c.e.state.Shown = append(c.e.state.Shown, p.URI)
	c.e.bump()
	c.e.mu.Unlock()
	c.notify(protocol.MethodWindowShowDocument, p)
	if h := c.e.cfg.Hooks.ShowDocument; h != nil {
		return h(ctx, p)
	}
	return &protocol.ShowDocumentResult{Success: true}, nil
}

func (c *client) ApplyEdit(ctx context.Context, p *protocol.ApplyWorkspaceEditParams) (*protocol.ApplyWorkspaceEditResult, error) {
	c.e.mu.Lock()
	c.e.state.Edits = append(c.e.state.Edits, *p)
	c.e.bump()
	c.e.mu.Unlock()
	c.notify(protocol.MethodWorkspaceApplyEdit, p)
	if h := c.e.cfg.Hooks.ApplyEdit; h != nil {
		return h(ctx, p)
	}
	return c.e.Apply(ctx, p.Edit), nil
}

func (c *client) Configuration(ctx context.Context, p *protocol.ConfigurationParams) ([]protocol.LSPAny, error) {
	out := make([]protocol.LSPAny, len(p.Items))
	for i, it := range p.Items {
		out[i] = protocol.LSPAny("null")
		if it.Section != nil && *it.Section == "ioh" && c.e.cfg.Settings != nil {
			raw, err := json.Marshal(c.e.cfg.Settings)
			if err != nil {
				return nil, err
			}
			out[i] = protocol.LSPAny(raw)
		}
	}
	return out, nil
}

func (c *client) WorkspaceFolders(ctx context.Context) ([]protocol.WorkspaceFolder, error) {
	return []protocol.WorkspaceFolder{{URI: c.e.URI(""), Name: "root"}}, nil
}

func (c *client) CodeLensRefresh(ctx context.Context) error {
	c.e.mu.Lock()
	c.e.state.LensRefresh++
	c.e.bump()
	c.e.mu.Unlock()
	return nil
}

func (c *client) RegisterCapability(ctx context.Context, p *protocol.RegistrationParams) error {
	c.e.mu.Lock()
	for _, r := range p.Registrations {
		c.e.state.Registered = append(c.e.state.Registered, r.Method)
	}
	c.e.bump()
	c.e.mu.Unlock()
	return nil
}
