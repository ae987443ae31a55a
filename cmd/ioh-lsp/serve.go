package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// cmdServe runs the language server over stdio. Logs go to stderr (stdout
// is the JSON-RPC stream). Each workspace folder gets a harness, built on
// first use by engineFactory: the agent, its trace store, the sandbox and
// the approver/sink that route back to the editor.
func cmdServe(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("serve", env.stderr)
	level := fs.String("log-level", "info", "log level `L`: debug, info, warn, error")
	_ = fs.Bool("stdio", true, "serve over stdio (the only transport; accepted for editors that pass it)")
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = wantArgs(pos, 0, 0)
	}
	var lvl slog.Level
	if err == nil {
		if uerr := lvl.UnmarshalText([]byte(*level)); uerr != nil {
			err = fmt.Errorf("bad --log-level %q", *level)
		}
	}
	if err != nil {
		return usageError(env, "serve", err)
	}
	// Level first on every line; the editor also gets each record as
	// window/logMessage with its type.
	log := slog.New(lsp.NewStderrHandler(env.stderr, lvl))
	// One sandbox pool for every folder's engine, for the session.
	pool := sandbox.NewPool()
	defer pool.Close()
	srv := lsp.New(lsp.Options{
		Logger:     log,
		NewHarness: engineFactory(env, pool),
		Version:    version,
		StateDir:   serveStateDir(env.getenv),
	})
	// Closing stdin must end the read loop at once (exit, SIGTERM), not
	// when the editor closes its end: closableReader.
	if err := srv.Serve(ctx, stdio{newClosableReader(env.stdin), env.stdout}); err != nil {
		log.Error("serve", "err", err)
		return exitFailed
	}
	if ctx.Err() != nil {
		return exitCancelled // Ctrl-C or SIGTERM, not the editor's exit
	}
	return exitOK
}

// serveStateDir is where rendered traces and diffs go: under the state
// directory (docs/trace.md, trace.StateDir), outside any workspace.
func serveStateDir(getenv func(string) string) string {
	d, err := agent.StateDir(getenv)
	if err != nil {
		return ""
	}
	return filepath.Join(d, "lsp")
}

// stdio joins the process's stdin and stdout into one stream.
type stdio struct {
	r io.Reader
	w io.Writer
}

func (s stdio) Read(p []byte) (int, error)  { return s.r.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return s.w.Write(p) }

// Close closes stdin, which ends a read blocked on it.
func (s stdio) Close() error {
	if c, ok := s.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// engineFactory builds the harness of one workspace folder through the
// same wiring as `ioh-lsp run`, its runs through the session's pool.
func engineFactory(env *cliEnv, pool *sandbox.Pool) lsp.HarnessFactory {
	return func(ctx context.Context, s lsp.Session) (*lsp.Engine, error) {
		// A folder that is / or $HOME is refused as for run and acp: the
		// agent could read and write everything there.
		if err := config.CheckWorkspace(s.Root, env.getenv); err != nil {
			return nil, err
		}
		e, err := wire.NewHarness(ctx, wire.Options{
			Root:           s.Root,
			Getenv:         env.getenv,
			Approver:       s.Approver,
			Sink:           s.Sink,
			EditorSettings: s.EditorSettings,
			Logger:         s.Logger,
			Index:          true,
			Pool:           pool,
		})
		if err != nil {
			return nil, err
		}
		return &lsp.Engine{Harness: e.Harness, Root: e.Root, Close: e.Close}, nil
	}
}
