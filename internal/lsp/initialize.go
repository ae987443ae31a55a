package lsp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"time"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/jsonrpc"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
)

// clientCaps is what the server remembers of the client's capabilities.
type clientCaps struct {
	applyEdit         bool
	documentChanges   bool
	annotations       bool
	resourceOps       []protocol.ResourceOperationKind
	workDoneProgress  bool
	showDocument      bool
	configuration     bool
	codeLensRefresh   bool
	codeActionData    bool
	codeActionResolve bool
	watchFiles        bool // dynamic registration of didChangeWatchedFiles
}

func (c clientCaps) canResource(k protocol.ResourceOperationKind) bool {
	return c.documentChanges && slices.Contains(c.resourceOps, k)
}

func captureCaps(cc protocol.ClientCapabilities) clientCaps {
	var c clientCaps
	if w := cc.Workspace; w != nil {
		c.applyEdit = w.ApplyEdit != nil && *w.ApplyEdit
		if we := w.WorkspaceEdit; we != nil {
			c.documentChanges = we.DocumentChanges != nil && *we.DocumentChanges
			c.annotations = we.ChangeAnnotationSupport != nil
			c.resourceOps = we.ResourceOperations
		}
		c.configuration = w.Configuration != nil && *w.Configuration
		c.watchFiles = w.DidChangeWatchedFiles != nil && w.DidChangeWatchedFiles.DynamicRegistration != nil && *w.DidChangeWatchedFiles.DynamicRegistration
		c.codeLensRefresh = w.CodeLens != nil && w.CodeLens.RefreshSupport != nil && *w.CodeLens.RefreshSupport
	}
	if w := cc.Window; w != nil {
		c.workDoneProgress = w.WorkDoneProgress != nil && *w.WorkDoneProgress
		c.showDocument = w.ShowDocument != nil && w.ShowDocument.Support
	}
	if td := cc.TextDocument; td != nil && td.CodeAction != nil {
		ca := td.CodeAction
		c.codeActionData = ca.DataSupport != nil && *ca.DataSupport
		// The listed action leaves out its command, so resolving is only
		// lazy for a client that can resolve the command.
		c.codeActionResolve = slices.Contains(ca.ResolveSupport.Properties, "command")
	}
	return c
}

// taskFileGlobs is isTaskFile's rule as globs on the path relative to a
// workspace folder, sent as experimental.ioh.taskFiles so a client's menus
// offer "Run task" on the same files as the server's lens and action.
var taskFileGlobs = []string{"**/*.ioh.yaml", "**/*.ioh.yml", ".ioh/tasks/**"}

// experimentalCaps is the initialize result's `experimental` object.
func experimentalCaps() protocol.LSPAny {
	b, _ := json.Marshal(map[string]any{"ioh": map[string]any{"taskFiles": map[string]any{"globs": taskFileGlobs}}})
	return protocol.LSPAny(b)
}

// Initialize captures the client's capabilities, folders and settings.
func (s *Server) Initialize(ctx context.Context, p *protocol.InitializeParams) (*protocol.InitializeResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.initialized {
		return nil, jsonrpc.Errorf(jsonrpc.InvalidRequest, "initialize sent twice")
	}
	s.caps = captureCaps(p.Capabilities)
	if folders, ok := p.WorkspaceFolders.Get(); ok {
		for _, f := range folders {
			if d, err := pathOf(f.URI); err == nil {
				s.folders = append(s.folders, d)
			}
		}
	}
	// Clients without workspace folders still send only rootUri, which LSP
	// 3.18 deprecates but allows.
	//lint:ignore SA1019 the fallback for clients that send only rootUri
	root := p.RootURI
	if len(s.folders) == 0 && root != nil {
		if d, err := pathOf(*root); err == nil {
			s.folders = append(s.folders, d)
		}
	}
	if len(p.InitializationOptions) > 0 {
		var opts struct {
			Ioh json.RawMessage `json:"ioh"`
		}
		if err := json.Unmarshal(p.InitializationOptions, &opts); err != nil {
			return nil, invalidParams("initializationOptions: %v", err)
		}
		if len(opts.Ioh) > 0 && string(opts.Ioh) != "null" {
			s.settings = opts.Ioh
		}
	}
	s.initialized = true
	s.log.Info("initialize", "client", p.ClientInfo.Name, "folders", s.folders,
		"annotations", s.caps.annotations, "progress", s.caps.workDoneProgress)

	yes := true
	incremental := protocol.TextDocumentSyncKindIncremental
	return &protocol.InitializeResult{
		ServerInfo: protocol.ServerInfo{Name: "ioh-lsp", Version: protocol.NewOptional(s.opts.Version)},
		Capabilities: protocol.ServerCapabilities{
			TextDocumentSync: &protocol.TextDocumentSyncOptions{
				OpenClose: &yes,
				Change:    &incremental,
				Save:      &protocol.SaveOptions{IncludeText: &yes},
			},
			CodeActionProvider: &protocol.CodeActionOptions{
				CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix, kindAgent},
				ResolveProvider: &yes,
			},
			CodeLensProvider:       &protocol.CodeLensOptions{},
			ExecuteCommandProvider: protocol.ExecuteCommandOptions{Commands: api.Names()},
			Workspace: &protocol.WorkspaceOptions{
				WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{
					Supported:           &yes,
					ChangeNotifications: protocol.Boolean(true),
				},
			},
			Experimental: experimentalCaps(),
		},
	}, nil
}

// Initialized pulls the `ioh` configuration section when the client
// offers workspace/configuration and registers file watching.
func (s *Server) Initialized(ctx context.Context, _ *protocol.InitializedParams) error {
	s.mu.Lock()
	pull, watch := s.caps.configuration, s.caps.watchFiles
	s.mu.Unlock()
	s.startOutbox()
	s.live.Store(true)
	// Calls back to the client must not run on the read loop.
	if pull {
		go s.pullConfiguration(ctx)
	}
	if watch {
		go s.watchTaskFiles(ctx)
	}
	return nil
}

// watchTaskFiles asks the client to report changes to task files, whose
// lenses depend on them.
func (s *Server) watchTaskFiles(ctx context.Context) {
	opts, err := protocol.Marshal(&protocol.DidChangeWatchedFilesRegistrationOptions{Watchers: []protocol.FileSystemWatcher{
		{GlobPattern: protocol.Pattern("**/*.ioh.yaml")},
		{GlobPattern: protocol.Pattern("**/*.ioh.yml")},
		{GlobPattern: protocol.Pattern("**/.ioh/tasks/**")},
	}})
	if err != nil {
		s.log.Error("marshal watchers", "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, clientCallTimeout)
	defer cancel()
	err = s.client.RegisterCapability(ctx, &protocol.RegistrationParams{Registrations: []protocol.Registration{{
		ID: "ioh-task-files", Method: protocol.MethodWorkspaceDidChangeWatchedFiles, RegisterOptions: opts,
	}}})
	if err != nil {
		s.log.Warn("register file watching", "err", err)
	}
}

// Shutdown ends every run; exit follows.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutdown = true
	s.mu.Unlock()
	s.runs.cancelAll()
	// What is queued for the client (a warning, log messages) goes out
	// before the answer: a client stops reading after it. Bounded, so a
	// client that does not answer the server's own requests cannot hold
	// the shutdown.
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	s.drainOutbox(dctx)
	return nil
}

// Exit stops the server.
func (s *Server) Exit(ctx context.Context) error {
	s.exitOnce.Do(func() { close(s.exited) })
	return nil
}

func ptr[T any](v T) *T { return &v }

// folderPaths returns the open folders.
func (s *Server) folderPaths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.folders...)
}

// addFolder adds an absolute folder path once.
func (s *Server) addFolder(d string) {
	d = filepath.Clean(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.folders, d) {
		s.folders = append(s.folders, d)
	}
}
