package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/mcptool"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// Engine is the harness of one session's workspace, with what it was
// built from; Close releases it (the trace store).
type Engine struct {
	Harness *agent.Harness
	Root    *workspace.Root
	Close   func()
	// Approve is the configuration's approval mode (ask, auto, never):
	// a new session's mode.
	Approve string
	// Models are the models the session may choose (ModelChoices of the
	// configuration, or the one the command line fixed); the first is
	// the one a session starts on.
	Models []ModelChoice
}

// EngineRequest is what a session needs its engine built with: the
// workspace, the approver and sink that route back to this session, and
// the MCP servers the client passed (the editor layer of the configuration,
// docs/policy.md#layers-and-the-decision), converted and validated, every
// tool exposed (mcpServers); the factory hands them to the MCP wiring
// (wire.Options.MCPServers).
type EngineRequest struct {
	Root       string
	Approver   agent.Approver
	Sink       event.Sink
	Logger     *slog.Logger
	MCPServers []mcptool.Server
	// Model is the session's model choice (a ModelChoice.ID): the
	// factory builds the engine with it as the model and the others as
	// fallbacks (WithModel); "" keeps the configuration's.
	Model string
}

// EngineFactory builds a session's engine; cmd/ioh-lsp builds it through
// the same wiring as `ioh-lsp serve` and `ioh-lsp run`.
type EngineFactory func(ctx context.Context, r EngineRequest) (*Engine, error)

// Options configure a Server.
type Options struct {
	Logger    *slog.Logger
	NewEngine EngineFactory
	Version   string
	// StateDir holds the session index (StateDir/acp/sessions); "" keeps
	// it in memory.
	StateDir string
	// Redact removes configured secrets from what the session index
	// writes (nil writes as is).
	Redact func(string) string
	// Getenv reads the environment ($HOME for the workspace check); nil
	// is os.Getenv.
	Getenv func(string) string
}

// Server is an ACP agent on one connection.
type Server struct {
	opts Options
	log  *slog.Logger
	conn *conn
	idx  *index

	mu       sync.Mutex
	sessions map[string]*session
}

// New returns a server; Serve runs it.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	dir := ""
	if o.StateDir != "" {
		dir = filepath.Join(o.StateDir, "acp", "sessions")
	}
	return &Server{opts: o, log: o.Logger, idx: newIndex(dir, o.Redact), sessions: map[string]*session{}}
}

// Serve speaks ACP over r and w until r ends (the client closed stdin)
// or ctx is done; runs in flight are cancelled and every engine closed
// before it returns.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	s.conn = newConn(w, s.log)
	// A read blocked on stdin does not see ctx: closing the reader ends
	// it (SIGTERM, or the caller giving up).
	stop := make(chan struct{})
	defer close(stop)
	if c, ok := r.(io.Closer); ok {
		go func() {
			select {
			case <-ctx.Done():
				c.Close()
			case <-stop:
			}
		}()
	}
	err := s.conn.serve(ctx, r, s)
	s.mu.Lock()
	open := s.sessions
	s.sessions = map[string]*session{}
	s.mu.Unlock()
	for _, ss := range open {
		ss.close()
	}
	return err
}

// request dispatches the client's requests.
func (s *Server) request(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case methodInitialize:
		return s.initialize(params)
	case methodAuthenticate:
		return struct{}{}, nil
	case methodSessionNew:
		return s.newSession(ctx, params)
	case methodSessionLoad:
		return s.loadSession(ctx, params, true)
	case methodSessionResume:
		return s.loadSession(ctx, params, false)
	case methodSessionList:
		return s.listSessions(ctx, params)
	case methodSessionPrompt:
		return s.prompt(ctx, params)
	case methodSetMode:
		return s.setMode(params)
	case methodSetConfigOption:
		return s.setConfigOption(ctx, params)
	}
	return nil, &RPCError{Code: codeMethodNotFound, Message: "method not found: " + method}
}

// notification handles the client's notifications, in order.
func (s *Server) notification(_ context.Context, method string, params json.RawMessage) {
	switch method {
	case methodSessionCancel:
		var p cancelParams
		if err := json.Unmarshal(params, &p); err != nil {
			s.log.Warn("acp: bad session/cancel", "err", err)
			return
		}
		if ss := s.session(p.SessionID); ss != nil {
			ss.cancelPrompt()
		}
	default:
		s.log.Debug("acp: notification ignored", "method", method)
	}
}

func (s *Server) initialize(params json.RawMessage) (any, error) {
	var p initializeParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, invalidParams("initialize: protocolVersion is required")
	}
	if p.ClientInfo != nil {
		s.log.Info("acp: client", "name", p.ClientInfo.Name, "version", p.ClientInfo.Version, "protocol", *p.ProtocolVersion)
	}
	// A client asking for another version gets the one spoken here; it
	// decides whether to go on (ACP's negotiation).
	return initializeResult{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: agentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  promptCapabilities{EmbeddedContext: true},
			MCPCapabilities:     mcpCapabilities{HTTP: true},
			SessionCapabilities: sessionCapabilities{List: &struct{}{}, Resume: &struct{}{}},
		},
		AgentInfo:   implementation{Name: "ioh-lsp", Title: "ioh-lsp", Version: s.opts.Version},
		AuthMethods: []struct{}{},
	}, nil
}

func (s *Server) newSession(ctx context.Context, params json.RawMessage) (any, error) {
	var p newSessionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if _, _, err := mcpServers(p.MCPServers); err != nil {
		return nil, err
	}
	root, err := s.workspaceRoot(p.CWD)
	if err != nil {
		return nil, err
	}
	rec := &record{SessionID: newID("s-"), CWD: root, MCPServers: p.MCPServers, Runs: []string{}}
	rec.Created = now()
	rec.Updated = rec.Created
	ss, err := s.open(ctx, rec, params)
	if err != nil {
		return nil, err
	}
	if err := s.idx.put(rec); err != nil {
		s.forget(ss)
		return nil, err
	}
	return replyThen{newSessionResult{SessionID: ss.id, sessionSetup: ss.setup()}, ss.opened}, nil
}

// loadSession serves session/load (replay, when replay) and
// session/resume: the session's workspace engine is opened again and
// its runs read from the trace store. A run id started elsewhere (the
// CLI, the language server) loads as a session of that one run.
func (s *Server) loadSession(ctx context.Context, params json.RawMessage, replay bool) (any, error) {
	var p loadSessionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if _, _, err := mcpServers(p.MCPServers); err != nil {
		return nil, err
	}
	root, err := s.workspaceRoot(p.CWD)
	if err != nil {
		return nil, err
	}
	if ss := s.session(p.SessionID); ss != nil {
		if ss.busy() {
			return nil, invalidParams("session %s has a prompt in flight", p.SessionID)
		}
		s.forget(ss)
	}
	rec, err := s.idx.get(p.SessionID)
	// Only an id of the run form opens a workspace to look it up: any
	// other string is refused before an engine (and its trace store) is
	// made for it.
	fromRun := err != nil && sessionIDPattern().MatchString(p.SessionID) && strings.HasPrefix(p.SessionID, "r-")
	if err != nil && !fromRun {
		return nil, invalidParams("%v", err)
	}
	if fromRun {
		rec = &record{SessionID: p.SessionID, CWD: root, Runs: []string{p.SessionID}, Created: now(), Updated: now()}
	}
	if filepath.Clean(rec.CWD) != root {
		return nil, invalidParams("session %s belongs to %s, not %s", p.SessionID, rec.CWD, root)
	}
	if p.MCPServers != nil {
		rec.MCPServers = p.MCPServers
	}
	ss, err := s.open(ctx, rec, params)
	if err != nil {
		return nil, err
	}
	if fromRun {
		row, err := ss.eng.Harness.History().Run(ctx, p.SessionID)
		if err != nil || row.Parent != "" {
			s.forget(ss)
			return nil, invalidParams("session %s: no such session or root run in %s", p.SessionID, root)
		}
		ss.rec.Title = title(row.Goal)
	}
	if replay {
		if err := ss.replay(ctx); err != nil {
			s.forget(ss)
			return nil, err
		}
	}
	return replyThen{ss.setup(), ss.opened}, nil
}

// listSessions is session/list: the sessions of the index and the runs
// of their workspaces (and of cwd) that no session holds.
func (s *Server) listSessions(ctx context.Context, params json.RawMessage) (any, error) {
	var p listSessionsParams
	if len(params) > 0 {
		if err := decode(params, &p); err != nil {
			return nil, err
		}
	}
	cwd := ""
	if p.CWD != nil {
		cwd = filepath.Clean(*p.CWD)
		if r, err := sessionRoot(cwd); err == nil {
			cwd = r
		}
	}
	recs, err := s.idx.list(cwd)
	if err != nil {
		return nil, err
	}
	out := listSessionsResult{Sessions: []sessionInfo{}}
	inSession := map[string]bool{}
	workspaces := map[string]bool{}
	if cwd != "" {
		workspaces[cwd] = true
	}
	for _, r := range recs {
		out.Sessions = append(out.Sessions, sessionInfo{SessionID: r.SessionID, CWD: r.CWD, Title: r.Title, UpdatedAt: stamp(r.Updated)})
		workspaces[r.CWD] = true
		for _, id := range r.Runs {
			inSession[id] = true
		}
	}
	for ws := range workspaces {
		out.Sessions = append(out.Sessions, s.otherRuns(ctx, ws, inSession)...)
	}
	sort.SliceStable(out.Sessions, func(i, j int) bool { return out.Sessions[i].UpdatedAt > out.Sessions[j].UpdatedAt })
	return out, nil
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// otherRuns are the root runs of workspace ws started elsewhere (the
// CLI, the language server) that no session lists: each loads as a
// session by its run id. A workspace without a trace store has none (its
// store is not created by listing).
func (s *Server) otherRuns(ctx context.Context, ws string, skip map[string]bool) []sessionInfo {
	if s.opts.StateDir == "" {
		return nil
	}
	if !agent.HasHistory(s.opts.StateDir, ws) {
		return nil
	}
	hs, err := agent.OpenHistory(ctx, s.opts.StateDir, ws)
	if err != nil {
		s.log.Warn("acp: list the workspace's runs", "workspace", ws, "err", err)
		return nil
	}
	defer hs.Close()
	rows, err := hs.Runs(ctx)
	if err != nil {
		s.log.Warn("acp: list the workspace's runs", "workspace", ws, "err", err)
		return nil
	}
	var out []sessionInfo
	for _, r := range rows {
		if r.Parent != "" || skip[r.RunID] || !sessionIDPattern().MatchString(r.RunID) {
			continue
		}
		out = append(out, sessionInfo{SessionID: r.RunID, CWD: ws, Title: title(r.Goal), UpdatedAt: stamp(r.Updated),
			Meta: map[string]any{"ioh": map[string]any{"run": r.RunID, "outcome": string(r.Shown)}}})
	}
	return out
}

// open builds a session's engine and registers it; params are the
// session/new or session/load request, whose `_meta` trace context the
// session's runs continue.
func (s *Server) open(ctx context.Context, rec *record, params json.RawMessage) (*session, error) {
	ss := &session{srv: s, id: rec.SessionID, rec: rec, rejected: map[string]bool{}}
	if tc, ok := traceMeta(params); ok {
		ss.trace = &tc
	}
	servers, warnings, err := mcpServers(rec.MCPServers)
	if err != nil {
		return nil, err
	}
	log := s.log.With("session", rec.SessionID)
	for _, w := range warnings {
		log.Warn("acp: " + w)
	}
	ss.log, ss.servers = log, servers
	eng, err := ss.newEngine(ctx)
	if err != nil {
		return nil, err
	}
	ss.eng = eng
	ss.tr = newTranslator(eng.Root, true)
	rec.Mode = initialMode(rec, eng)
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	return ss, nil
}

// newEngine builds the session's engine for its workspace, MCP servers
// and model choice.
func (ss *session) newEngine(ctx context.Context) (*Engine, error) {
	ss.mu.Lock()
	root, model := ss.rec.CWD, ss.rec.Model
	ss.mu.Unlock()
	eng, err := ss.srv.opts.NewEngine(ctx, EngineRequest{
		Root: root, Approver: approver{ss}, Sink: event.SinkFunc(ss.emit),
		Logger: ss.log, MCPServers: ss.servers, Model: model,
	})
	if err != nil {
		return nil, &RPCError{Code: codeInternal, Message: fmt.Sprintf("open workspace %s: %v", root, err)}
	}
	return eng, nil
}

// reopen replaces an idle session's engine with one built anew (a new
// model choice); the old one is closed.
func (ss *session) reopen(ctx context.Context) error {
	eng, err := ss.newEngine(ctx)
	if err != nil {
		return err
	}
	ss.mu.Lock()
	old := ss.eng
	ss.eng = eng
	ss.mu.Unlock()
	if old != nil && old.Close != nil {
		old.Close()
	}
	return nil
}

func (s *Server) forget(ss *session) {
	s.mu.Lock()
	if s.sessions[ss.id] == ss {
		delete(s.sessions, ss.id)
	}
	s.mu.Unlock()
	ss.close()
}

func (s *Server) session(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// decode reads params strictly enough to name the bad field.
func decode(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return invalidParams("params are required")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("invalid params: %v", err)
	}
	return nil
}

// sessionRoot is the workspace of a session: cwd, which must be an
// absolute path of a directory.
func sessionRoot(cwd string) (string, error) {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return "", invalidParams("cwd must be an absolute path, got %q", cwd)
	}
	root, err := workspace.NewRoot(cwd)
	if err != nil {
		return "", invalidParams("cwd %s: %v", cwd, err)
	}
	return filepath.Clean(root.Dir()), nil
}

// workspaceRoot is sessionRoot for a session that will run: a cwd that
// is the file-system root or the home directory is refused, as for
// `ioh-lsp run` (config.CheckWorkspace): the session's runs could
// otherwise read every file there and, once a change is allowed, write
// any of them (the shell's startup files, the user configuration that
// grants trust).
func (s *Server) workspaceRoot(cwd string) (string, error) {
	root, err := sessionRoot(cwd)
	if err != nil {
		return "", err
	}
	getenv := s.opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if err := config.CheckWorkspace(root, getenv); err != nil {
		return "", invalidParams("session cwd %s: %v (in ACP: open the project's own directory, whose path the client sends as cwd)", cwd, err)
	}
	return root, nil
}

func newID(prefix string) string {
	var b [8]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
