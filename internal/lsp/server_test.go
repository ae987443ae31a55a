package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// rawClient speaks framed JSON-RPC with explicit ids, for the tests that
// need to control ids or leave the server's requests unanswered.
type rawClient struct {
	t      *testing.T
	stream jsonrpc2.Stream
}

func startRaw(t *testing.T, srv *lsp.Server) (*rawClient, <-chan error) {
	t.Helper()
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, a) }()
	t.Cleanup(func() { cancel(); b.Close() })
	// Reads and writes fail at the deadline instead of hanging the test.
	if err := b.SetDeadline(time.Now().Add(testDeadline)); err != nil {
		t.Fatal(err)
	}
	return &rawClient{t: t, stream: jsonrpc2.NewHeaderStream(b)}, served
}

func (c *rawClient) send(msg jsonrpc2.Message) {
	c.t.Helper()
	if _, err := c.stream.Write(context.Background(), msg); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *rawClient) call(id int64, method string, params any) {
	c.t.Helper()
	raw, err := json.Marshal(params)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(jsonrpc2.NewCall(jsonrpc2.NewNumberID(id), method, raw))
}

func (c *rawClient) notify(method string, params any) {
	c.t.Helper()
	raw, err := json.Marshal(params)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(jsonrpc2.NewNotification(method, raw))
}

// response reads until the response to id arrives, answering nothing and
// returning the server's own requests seen on the way.
func (c *rawClient) response(id int64) (*jsonrpc2.Response, []string) {
	c.t.Helper()
	var seen []string
	for {
		msg, _, err := c.stream.Read(context.Background())
		if err != nil {
			c.t.Fatalf("read: %v", err)
		}
		switch m := msg.(type) {
		case *jsonrpc2.Response:
			if n, ok := m.ID().Number(); ok && n == id {
				return m, seen
			}
		case *jsonrpc2.Call:
			seen = append(seen, m.Method())
		case *jsonrpc2.Notification:
			seen = append(seen, m.Method())
		}
	}
}

func errCode(t *testing.T, err error) jsonrpc2.Code {
	t.Helper()
	var we *jsonrpc2.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v carries no JSON-RPC code", err)
	}
	return we.Code
}

func newServer() *lsp.Server {
	return lsp.New(lsp.Options{Version: "test"})
}

func TestInitializeAdvertisesSpecCapabilities(t *testing.T) {
	e := lsptest.Start(t, newServer(), lsptest.Config{Root: t.TempDir()})
	res := e.InitializeResult()
	if got := res.ServerInfo.Name; got != "ioh-lsp" {
		t.Errorf("server name = %q, want ioh-lsp", got)
	}
	caps := res.Capabilities
	want := []string{"ioh.run", "ioh.ask", "ioh.approve", "ioh.reject", "ioh.cancel", "ioh.resume", "ioh.trace", "ioh.runs", "ioh.clearTrace"}
	for _, c := range want {
		if !slices.Contains(caps.ExecuteCommandProvider.Commands, c) {
			t.Errorf("command %s not advertised", c)
		}
	}
	ca, ok := caps.CodeActionProvider.(*protocol.CodeActionOptions)
	if !ok || ca.ResolveProvider == nil || !*ca.ResolveProvider {
		t.Errorf("codeActionProvider = %#v, want options with resolve", caps.CodeActionProvider)
	}
	if caps.CodeLensProvider == nil {
		t.Error("no codeLensProvider")
	}
	sync, ok := caps.TextDocumentSync.(*protocol.TextDocumentSyncOptions)
	if !ok || sync.Change == nil || *sync.Change != protocol.TextDocumentSyncKindIncremental {
		t.Errorf("textDocumentSync = %#v, want incremental", caps.TextDocumentSync)
	}
	if caps.Workspace == nil || caps.Workspace.WorkspaceFolders == nil || !*caps.Workspace.WorkspaceFolders.Supported {
		t.Error("workspace folders not supported")
	}
	// File watching: task files are watched; a change refreshes lenses.
	ctx := context.Background()
	if _, err := e.Await(ctx, "file watching registration", func(s lsptest.State) bool {
		return slices.Contains(s.Registered, "workspace/didChangeWatchedFiles")
	}); err != nil {
		t.Fatal(err)
	}
	err := e.Server().DidChangeWatchedFiles(ctx, &protocol.DidChangeWatchedFilesParams{Changes: []protocol.FileEvent{{URI: e.URI("x.ioh.yaml"), Type: protocol.FileChangeTypeCreated}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Await(ctx, "lens refresh", func(s lsptest.State) bool { return s.LensRefresh > 0 }); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownMethodsAnswerMethodNotFound(t *testing.T) {
	e := lsptest.Start(t, newServer(), lsptest.Config{Root: t.TempDir()})
	ctx := context.Background()
	for _, m := range []string{"ioh/nope", "textDocument/hover", "workspace/symbol"} {
		err := e.Call(ctx, m, json.RawMessage(`{}`), nil)
		if got := errCode(t, err); got != jsonrpc2.MethodNotFound {
			t.Errorf("%s: code %d, want %d", m, got, jsonrpc2.MethodNotFound)
		}
	}
	// An unknown notification is dropped and the server lives on.
	if err := e.Notify(ctx, "$/unknownNotification", json.RawMessage(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ExecuteCommand(ctx, "ioh.runs", nil); err != nil {
		t.Fatalf("server dead after unknown notification: %v", err)
	}
}

func TestMalformedParamsAreInvalidParams(t *testing.T) {
	dir := t.TempDir()
	e := lsptest.Start(t, newServer(), lsptest.Config{Root: dir})
	ctx := context.Background()
	tests := []struct {
		name   string
		method string
		params string
	}{
		{"command not a string", "workspace/executeCommand", `{"command": 5}`},
		{"unknown command", "workspace/executeCommand", `{"command": "ioh.nope"}`},
		{"run without contract", "workspace/executeCommand", `{"command": "ioh.run", "arguments": [{}]}`},
		{"run with both", "workspace/executeCommand", `{"command": "ioh.run", "arguments": [{"contract": "a.ioh.yaml", "inline": {"goal": "x"}}]}`},
		{"run with a missing file", "workspace/executeCommand", `{"command": "ioh.run", "arguments": [{"contract": "missing.ioh.yaml"}]}`},
		{"run with a bad inline contract", "workspace/executeCommand", `{"command": "ioh.run", "arguments": [{"inline": {"version": 1, "goal": "x", "bogus": 1}}]}`},
		{"ask goal not a string", "workspace/executeCommand", `{"command": "ioh.ask", "arguments": [{"goal": 3}]}`},
		{"ask without goal", "workspace/executeCommand", `{"command": "ioh.ask", "arguments": [{}]}`},
		{"approve without runId", "workspace/executeCommand", `{"command": "ioh.approve", "arguments": [{}]}`},
		{"two arguments", "workspace/executeCommand", `{"command": "ioh.runs", "arguments": [{}, {}]}`},
		{"cancel unknown run", "workspace/executeCommand", `{"command": "ioh.cancel", "arguments": [{"runId": "r-nope"}]}`},
		{"trace unknown run", "workspace/executeCommand", `{"command": "ioh.trace", "arguments": [{"runId": "r-nope"}]}`},
		{"codeAction params an array", "textDocument/codeAction", `[]`},
		{"codeAction on a non-file uri", "textDocument/codeAction", `{"textDocument": {"uri": "untitled:1"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}`},
		{"resolve without data", "codeAction/resolve", `{"title": "x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := e.Call(ctx, tt.method, json.RawMessage(tt.params), nil)
			if err == nil {
				t.Fatal("no error")
			}
			if got := errCode(t, err); got != jsonrpc2.InvalidParams {
				t.Errorf("code %d (%v), want %d", got, err, jsonrpc2.InvalidParams)
			}
		})
	}
	// Malformed notifications are logged and dropped; the server lives.
	if err := e.Notify(ctx, "textDocument/didChange", json.RawMessage(`{"textDocument": 3}`)); err != nil {
		t.Fatal(err)
	}
	if err := e.Notify(ctx, "textDocument/didChange", json.RawMessage(`{"textDocument": {"uri": "file:///not/open.go", "version": 2}, "contentChanges": []}`)); err != nil {
		t.Fatal(err)
	}
	raw, err := e.ExecuteCommand(ctx, "ioh.runs", nil)
	if err != nil {
		t.Fatalf("server dead after malformed notifications: %v", err)
	}
	// The failure is mirrored to the editor's log.
	if _, err := e.Await(ctx, "window/logMessage", func(s lsptest.State) bool {
		return slices.ContainsFunc(s.Logs, func(l string) bool { return strings.Contains(l, "textDocument/didChange") })
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(raw), "[]"); diff != "" {
		t.Errorf("ioh.runs (-got +want):\n%s", diff)
	}
}

func TestRequestBeforeInitializeIsRejected(t *testing.T) {
	c, _ := startRaw(t, newServer())
	c.call(1, "workspace/executeCommand", map[string]any{"command": "ioh.runs"})
	resp, _ := c.response(1)
	if got := errCode(t, resp.Err()); got != jsonrpc2.ServerNotInitialized {
		t.Errorf("code %d, want %d", got, jsonrpc2.ServerNotInitialized)
	}
}

func TestShutdownThenExitEndsServe(t *testing.T) {
	c, served := startRaw(t, newServer())
	c.call(1, "initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}})
	if resp, _ := c.response(1); resp.Err() != nil {
		t.Fatalf("initialize: %v", resp.Err())
	}
	c.notify("initialized", map[string]any{})
	c.call(2, "shutdown", nil)
	if resp, _ := c.response(2); resp.Err() != nil {
		t.Fatalf("shutdown: %v", resp.Err())
	}
	c.call(3, "workspace/executeCommand", map[string]any{"command": "ioh.runs"})
	resp, _ := c.response(3)
	if got := errCode(t, resp.Err()); got != jsonrpc2.InvalidRequest {
		t.Errorf("request after shutdown: code %d, want %d", got, jsonrpc2.InvalidRequest)
	}
	c.notify("exit", nil)
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil after shutdown+exit", err)
	}
}

func TestExitWithoutShutdownIsAnError(t *testing.T) {
	c, served := startRaw(t, newServer())
	c.call(1, "initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}})
	c.response(1)
	c.notify("exit", nil)
	if err := <-served; err == nil {
		t.Error("Serve = nil after exit without shutdown, want an error")
	}
}

// waitFor reads until the server sends method (a call or notification).
func (c *rawClient) waitFor(method string) {
	c.t.Helper()
	for {
		msg, _, err := c.stream.Read(context.Background())
		if err != nil {
			c.t.Fatalf("read: %v", err)
		}
		switch m := msg.(type) {
		case *jsonrpc2.Call:
			if m.Method() == method {
				return
			}
		case *jsonrpc2.Notification:
			if m.Method() == method {
				return
			}
		}
	}
}

func errorsAs(err error, target **jsonrpc2.Error) bool { return errors.As(err, target) }

func writeFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWorkspaceFoldersDecideTaskFiles(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	e := lsptest.Start(t, newServer(), lsptest.Config{Root: a})
	ctx := context.Background()
	task := protocol.TextDocumentIdentifier{URI: uri.File(filepath.Join(b, ".ioh", "tasks", "t.yaml"))}
	hasRunTask := func() bool {
		t.Helper()
		res, err := e.Server().CodeAction(ctx, &protocol.CodeActionParams{TextDocument: task, Context: protocol.CodeActionContext{Diagnostics: []protocol.Diagnostic{}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if ca, ok := r.(*protocol.CodeAction); ok && ca.Title == "Run task" {
				return true
			}
		}
		return false
	}
	if hasRunTask() {
		t.Error("a file outside every folder counts as a task file")
	}
	folder := protocol.WorkspaceFolder{URI: uri.File(b), Name: "b"}
	if err := e.Server().DidChangeWorkspaceFolders(ctx, &protocol.DidChangeWorkspaceFoldersParams{Event: protocol.WorkspaceFoldersChangeEvent{Added: []protocol.WorkspaceFolder{folder}}}); err != nil {
		t.Fatal(err)
	}
	if !hasRunTask() {
		t.Error("no Run task under .ioh/tasks of an added folder")
	}
	if err := e.Server().DidChangeWorkspaceFolders(ctx, &protocol.DidChangeWorkspaceFoldersParams{Event: protocol.WorkspaceFoldersChangeEvent{Removed: []protocol.WorkspaceFolder{folder}}}); err != nil {
		t.Fatal(err)
	}
	if hasRunTask() {
		t.Error("Run task still offered after the folder was removed")
	}
}
