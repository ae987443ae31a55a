// Package lspclient is a scripted editor that drives a real ioh-lsp
// server over a stream (a child's stdio in `ioh-lsp demo`, in-memory
// pipes in tests through lsp/lsptest): it opens, edits and saves
// documents, asks for code actions and lenses, executes commands, answers
// the server's requests through hooks (applyEdit, showMessageRequest,
// showDocument, configuration) and records what the server sends
// (diagnostics, progress, messages) for Await-style expectations. It is
// part of the shipped binary, so it must not import testing.
package lspclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/ioh-lsp/ioh-lsp/internal/jsonrpc"
)

// Hooks answer the server's requests. A nil hook gets the default: apply
// edits (accepting every annotation), pick the first message action, open
// documents successfully, answer configuration with the settings.
type Hooks struct {
	ApplyEdit          func(ctx context.Context, p *protocol.ApplyWorkspaceEditParams) (*protocol.ApplyWorkspaceEditResult, error)
	ShowMessageRequest func(ctx context.Context, p *protocol.ShowMessageRequestParams) (*protocol.MessageActionItem, error)
	ShowDocument       func(ctx context.Context, p *protocol.ShowDocumentParams) (*protocol.ShowDocumentResult, error)
	// OnNotify sees every notification the server sends, in order (the
	// demo prints them as they happen).
	OnNotify func(method string, params any)
}

// Config sets up an editor.
type Config struct {
	// Root is the workspace folder (absolute).
	Root string
	// Capabilities default to FullCapabilities().
	Capabilities *protocol.ClientCapabilities
	// Settings is the `ioh` section, sent as initializationOptions.ioh and
	// as the answer to workspace/configuration.
	Settings any
	Hooks    Hooks
}

// Editor is the fake editor.
type Editor struct {
	cfg    Config
	conn   *jsonrpc.Conn
	server protocol.Server

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every state change
	docs    map[uri.URI]*buffer
	state   State
	initRes *protocol.InitializeResult
}

type buffer struct {
	version int32
	text    string
	dirty   bool // changed since opened or saved
}

// State is what the editor has received so far.
type State struct {
	Diagnostics map[uri.URI][]protocol.Diagnostic
	Progress    map[string][]Progress // by token
	Created     []string              // progress tokens created
	Messages    []protocol.ShowMessageParams
	Requests    []protocol.ShowMessageRequestParams
	Edits       []protocol.ApplyWorkspaceEditParams
	Shown       []uri.URI
	LensRefresh int
	Logs        []string
	Registered  []string // methods the server registered dynamically
}

// Progress is one $/progress value.
type Progress struct {
	Kind    string `json:"kind"`
	Title   string `json:"title,omitempty"`
	Message string `json:"message,omitempty"`
}

// FullCapabilities is a client advertising everything the server uses
// (like VS Code): annotations, resource operations, progress,
// showDocument, code action resolve, configuration, lens refresh.
func FullCapabilities() protocol.ClientCapabilities {
	yes := true
	return protocol.ClientCapabilities{
		Workspace: &protocol.WorkspaceClientCapabilities{
			ApplyEdit: &yes,
			WorkspaceEdit: &protocol.WorkspaceEditClientCapabilities{
				DocumentChanges:         &yes,
				ResourceOperations:      []protocol.ResourceOperationKind{protocol.ResourceOperationKindCreate, protocol.ResourceOperationKindRename, protocol.ResourceOperationKindDelete},
				ChangeAnnotationSupport: &protocol.ChangeAnnotationsSupportOptions{GroupsOnLabel: &yes},
			},
			Configuration:         &yes,
			WorkspaceFolders:      &yes,
			CodeLens:              &protocol.CodeLensWorkspaceClientCapabilities{RefreshSupport: &yes},
			DidChangeWatchedFiles: &protocol.DidChangeWatchedFilesClientCapabilities{DynamicRegistration: &yes},
		},
		Window: &protocol.WindowClientCapabilities{
			WorkDoneProgress: &yes,
			ShowDocument:     &protocol.ShowDocumentClientCapabilities{Support: true},
		},
		TextDocument: &protocol.TextDocumentClientCapabilities{
			CodeAction: &protocol.CodeActionClientCapabilities{
				DataSupport:    &yes,
				ResolveSupport: protocol.ClientCodeActionResolveOptions{Properties: []string{"edit", "command"}},
			},
		},
	}
}

// PlainCapabilities is a client without annotations, progress or
// showDocument (like Neovim 0.7-0.11 or Helix for annotations).
func PlainCapabilities() protocol.ClientCapabilities {
	yes := true
	return protocol.ClientCapabilities{
		Workspace: &protocol.WorkspaceClientCapabilities{
			ApplyEdit:     &yes,
			WorkspaceEdit: &protocol.WorkspaceEditClientCapabilities{DocumentChanges: &yes},
		},
	}
}

// Connect speaks LSP over rwc and initializes the session.
func Connect(ctx context.Context, rwc io.ReadWriteCloser, cfg Config) (*Editor, error) {
	e := &Editor{
		cfg:     cfg,
		changed: make(chan struct{}),
		docs:    map[uri.URI]*buffer{},
		state:   State{Diagnostics: map[uri.URI][]protocol.Diagnostic{}, Progress: map[string][]Progress{}},
	}
	e.conn = dial(rwc)
	e.server = protocol.ServerDispatcher(dispatcher{e.conn})
	go e.conn.Serve(ctx, (&client{e: e}).methods().Handle)
	if err := e.initialize(ctx); err != nil {
		e.conn.Close()
		return nil, err
	}
	return e, nil
}

func (e *Editor) initialize(ctx context.Context) error {
	caps := FullCapabilities()
	if e.cfg.Capabilities != nil {
		caps = *e.cfg.Capabilities
	}
	p := &protocol.InitializeParams{Capabilities: caps, ClientInfo: protocol.ClientInfo{Name: "lsptest"}}
	if e.cfg.Root != "" {
		u := uri.File(e.cfg.Root)
		p.WorkspaceFolders = protocol.NewNullable([]protocol.WorkspaceFolder{{URI: u, Name: filepath.Base(e.cfg.Root)}})
		//lint:ignore SA1019 sent as older clients do, to exercise the fallback
		p.RootURI = &u
	}
	if e.cfg.Settings != nil {
		raw, err := json.Marshal(map[string]any{"ioh": e.cfg.Settings})
		if err != nil {
			return fmt.Errorf("encode settings: %w", err)
		}
		p.InitializationOptions = protocol.LSPAny(raw)
	}
	res, err := e.server.Initialize(ctx, p)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	e.initRes = res
	return e.server.Initialized(ctx, &protocol.InitializedParams{})
}

// InitializeResult is the server's answer to initialize.
func (e *Editor) InitializeResult() *protocol.InitializeResult { return e.initRes }

// Server is the raw server dispatcher, for requests the helpers lack.
func (e *Editor) Server() protocol.Server { return e.server }

// Conn is the raw connection, for malformed or unknown messages.
func (e *Editor) Conn() *jsonrpc.Conn { return e.conn }

// Shutdown sends shutdown then exit and closes the connection.
func (e *Editor) Shutdown(ctx context.Context) error {
	err := e.server.Shutdown(ctx)
	if xerr := e.server.Exit(ctx); err == nil && xerr != nil && !errors.Is(xerr, jsonrpc2.ErrClientClosing) {
		err = xerr
	}
	return err
}

// Close closes the connection.
func (e *Editor) Close() error { return e.conn.Close() }

// Path maps a workspace-relative path to an absolute one.
func (e *Editor) Path(rel string) string { return filepath.Join(e.cfg.Root, filepath.FromSlash(rel)) }

// URI maps a workspace-relative path to a file URI.
func (e *Editor) URI(rel string) uri.URI { return uri.File(e.Path(rel)) }

// bump wakes Await callers; called with e.mu held.
func (e *Editor) bump() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// Snapshot returns a copy of the state.
func (e *Editor) Snapshot() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.snapshotLocked()
}

func (e *Editor) snapshotLocked() State {
	s := e.state
	s.Diagnostics = map[uri.URI][]protocol.Diagnostic{}
	for k, v := range e.state.Diagnostics {
		s.Diagnostics[k] = append([]protocol.Diagnostic(nil), v...)
	}
	s.Progress = map[string][]Progress{}
	for k, v := range e.state.Progress {
		s.Progress[k] = append([]Progress(nil), v...)
	}
	s.Created = append([]string(nil), e.state.Created...)
	s.Messages = append([]protocol.ShowMessageParams(nil), e.state.Messages...)
	s.Requests = append([]protocol.ShowMessageRequestParams(nil), e.state.Requests...)
	s.Edits = append([]protocol.ApplyWorkspaceEditParams(nil), e.state.Edits...)
	s.Shown = append([]uri.URI(nil), e.state.Shown...)
	s.Logs = append([]string(nil), e.state.Logs...)
	s.Registered = append([]string(nil), e.state.Registered...)
	return s
}

// Await waits until cond holds on the state, or ctx ends (the error then
// names what was awaited).
func (e *Editor) Await(ctx context.Context, what string, cond func(State) bool) (State, error) {
	for {
		e.mu.Lock()
		s := e.snapshotLocked()
		ch := e.changed
		e.mu.Unlock()
		if cond(s) {
			return s, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s, fmt.Errorf("await %s: %w", what, ctx.Err())
		}
	}
}

// Text returns an open buffer's text, else the file on disk.
func (e *Editor) Text(rel string) (string, error) {
	e.mu.Lock()
	b, ok := e.docs[e.URI(rel)]
	e.mu.Unlock()
	if ok {
		return b.text, nil
	}
	data, err := os.ReadFile(e.Path(rel))
	return string(data), err
}
