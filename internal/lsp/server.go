package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/jsonrpc"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// Session is what the server hands the harness factory: one workspace
// folder, the approver and event sink that route back to this editor, and
// the editor settings (section `ioh`) as raw JSON.
type Session struct {
	Root           string
	Approver       agent.Approver
	Sink           event.Sink
	EditorSettings json.RawMessage
	Logger         *slog.Logger
}

// Engine is a harness built for one Session, with the workspace root it
// reads and writes through (open documents are overlaid on it).
type Engine struct {
	Harness *agent.Harness
	Root    *workspace.Root
	// Close releases the harness (trace store, leases); may be nil.
	Close func()
}

// HarnessFactory builds an Engine. cmd/ioh-lsp wires it to the real
// harness; the server never constructs one itself.
type HarnessFactory func(ctx context.Context, s Session) (*Engine, error)

// Options are the server's dependencies.
type Options struct {
	Logger     *slog.Logger
	NewHarness HarnessFactory
	Version    string
	// StateDir is where rendered traces and diffs are written for
	// window/showDocument; a temporary directory when empty.
	StateDir string
}

// Server is one language server session over one connection.
type Server struct {
	protocol.UnimplementedServer

	opts   Options
	log    *slog.Logger
	client protocol.Client
	conn   *jsonrpc.Conn

	// ctx is the connection's lifetime context: runs started by commands
	// live under it so that they end when the connection does.
	ctx    context.Context
	cancel context.CancelFunc

	mu          sync.Mutex
	caps        clientCaps
	folders     []string // absolute workspace folder paths
	settings    json.RawMessage
	initialized bool
	shutdown    bool
	exited      chan struct{}
	exitOnce    sync.Once
	live        atomic.Bool // the outbox runs: logs may be mirrored

	out   *outbox
	docs  *documents
	runs  *registry
	diags *diagnostics
	eng   *engines
}

// closeGrace bounds the wait for the connection to drain at the end.
const closeGrace = 2 * time.Second

// MaxMessageSize caps the body of one incoming JSON-RPC message. A larger
// one is skipped without being buffered (the body is read and discarded)
// and answered with an error; the session goes on.
const MaxMessageSize = 64 << 20

// New returns a server; Serve runs it on a stream.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: o, exited: make(chan struct{})}
	s.log = slog.New(clientLog{o.Logger.Handler(), s})
	s.docs = newDocuments()
	s.runs = newRegistry()
	s.diags = newDiagnostics()
	s.eng = newEngines()
	return s
}

// Serve runs the server over rwc (stdio in production, a pipe in tests)
// until the client sends exit, the stream ends or ctx is cancelled. It
// returns nil after a clean shutdown+exit and an error otherwise.
//
// The connection is internal/jsonrpc's with the LSP base protocol's
// Content-Length framing (jsonrpc.HeaderFramer: a bad frame is answered
// and the session goes on), the protocol package's codec, and the
// server's methods behind the initialize gate and newHandler.
func (s *Server) Serve(ctx context.Context, rwc io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.ctx, s.cancel = ctx, cancel
	var conn *jsonrpc.Conn
	conn = jsonrpc.NewConn(jsonrpc.HeaderFramer(rwc, rwc, MaxMessageSize), jsonrpc.Options{
		Logger: s.log, Marshal: marshal, Unmarshal: unmarshal,
		CallCancelled: func(id jsonrpc.ID) { cancelCall(conn, id) },
	})
	s.conn = conn
	s.client = client{conn}
	served := make(chan error, 1)
	go func() { served <- conn.Serve(ctx, newHandler(s.log, conn, s.gate(s.methods().Handle))) }()

	var connErr error
	select {
	case connErr = <-served:
	case <-s.exited:
	case <-ctx.Done():
	}
	cancel() // ends every run started by this session
	s.runs.waitAll()
	s.eng.closeAll()
	// Close the stream so the read loop ends. cmd/ioh-lsp hands stdin in
	// through a reader whose Close ends a blocked read (closableReader),
	// so this returns at once after exit even while the editor holds
	// stdin open; for a stream that cannot be interrupted the wait is
	// still bounded: the process ends when Serve returns.
	_ = rwc.Close()
	grace := time.NewTimer(closeGrace)
	select {
	case <-conn.Done():
	case <-grace.C:
		s.log.Warn("connection did not close after exit; leaving it")
	}
	grace.Stop()
	s.mu.Lock()
	clean := s.shutdown
	s.mu.Unlock()
	select {
	case <-s.exited:
		if !clean {
			return errors.New("exit without shutdown")
		}
		return nil
	default:
	}
	if connErr != nil {
		return fmt.Errorf("connection: %w", connErr)
	}
	return nil
}

// cancelCall tells the client that the server no longer waits for the
// answer to its request id (protocol.Call did so for go.lsp.dev/jsonrpc2).
func cancelCall(conn *jsonrpc.Conn, id jsonrpc.ID) {
	n, ok := id.Number()
	if !ok {
		return
	}
	_ = conn.Notify(protocol.MethodCancelRequest, &protocol.CancelParams{ID: protocol.Integer(n)})
}

// gate answers requests that arrive before initialize with -32002 and
// after shutdown with -32600, as the protocol asks.
func (s *Server) gate(next jsonrpc.Handler) jsonrpc.Handler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		m := req.Method
		s.mu.Lock()
		ready, down := s.initialized, s.shutdown
		s.mu.Unlock()
		switch {
		case m == protocol.MethodInitialize || m == protocol.MethodExit:
		case !ready:
			if req.IsCall() {
				return nil, jsonrpc.Errorf(serverNotInitialized, "%s before initialize", m)
			}
			return nil, nil
		case down && req.IsCall():
			return nil, jsonrpc.Errorf(jsonrpc.InvalidRequest, "%s after shutdown", m)
		}
		return next(ctx, req)
	}
}
