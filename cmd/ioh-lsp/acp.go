package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/ioh-lsp/ioh-lsp/internal/acp"
	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/redact"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// cmdAcp runs the Agent Client Protocol agent over stdio
// (docs/editors.md#agent-panels-agent-client-protocol):
// newline-delimited JSON-RPC on stdin/stdout, logs on stderr. Each session
// gets a harness for its cwd through the same wiring as serve and run (one
// configuration, one trace store per workspace, the OS sandbox).
func cmdAcp(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("acp", env.stderr)
	level := fs.String("log-level", "info", "log level `L`: debug, info, warn, error")
	var ov wire.Overrides
	fs.StringVar(&ov.Provider, "provider", "", "model provider `P` for every session: anthropic, openai, openrouter, openai-compatible, replay")
	fs.StringVar(&ov.Model, "model", "", "model name `M`")
	fs.StringVar(&ov.Cassette, "cassette", "", "replay cassette `F` (selects the replay provider)")
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
	if err == nil && ov.Cassette != "" {
		// Sessions run in other directories: the cassette is named once,
		// from where the agent was started.
		if ov.Cassette, err = filepath.Abs(ov.Cassette); err != nil {
			err = fmt.Errorf("bad --cassette: %w", err)
		}
	}
	if err != nil {
		return usageError(env, "acp", err)
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: lvl}))
	stateDir, _ := agent.StateDir(env.getenv)
	// One sandbox pool for every session's engine.
	pool := sandbox.NewPool()
	defer pool.Close()
	srv := acp.New(acp.Options{
		Logger:    log,
		Version:   version,
		StateDir:  stateDir,
		Redact:    redact.New(wire.Secrets(env.getenv, os.Environ)).String,
		Getenv:    env.getenv,
		NewEngine: acpEngineFactory(env, ov, pool),
	})
	if err := srv.Serve(ctx, newClosableReader(env.stdin), env.stdout); err != nil {
		log.Error("acp", "err", err)
		return exitFailed
	}
	return exitOK
}

// acpEngineFactory builds a session's harness like serve's engineFactory.
// The client's MCP servers (converted by the session) join the
// configuration's. Its runs go through the agent's pool.
func acpEngineFactory(env *cliEnv, ov wire.Overrides, pool *sandbox.Pool) acp.EngineFactory {
	return func(ctx context.Context, r acp.EngineRequest) (*acp.Engine, error) {
		cfg, err := wire.LoadConfig(r.Root, env.getenv, nil)
		if err != nil {
			return nil, err
		}
		var choices []acp.ModelChoice
		if fixed := wire.ApplyOverrides(cfg.Model, ov); ov != (wire.Overrides{}) {
			// The command line chose the model of every session.
			choices = acp.ModelChoices(contract.Model{Provider: fixed.Provider, Name: fixed.Name})[:1]
			choices[0].Description = "fixed by ioh-lsp acp's --provider, --model or --cassette"
		} else {
			choices = acp.ChooseModel(cfg, r.Model, r.Logger)
		}
		e, err := wire.NewHarness(ctx, wire.Options{
			Root:      r.Root,
			Getenv:    env.getenv,
			Overrides: ov,
			Approver:  r.Approver,
			Sink:      r.Sink,
			Logger:    r.Logger,
			Config:    cfg,
			// The ACP client's servers, the editor layer.
			MCPServers: r.MCPServers,
			Pool:       pool,
		})
		if err != nil {
			return nil, err
		}
		return &acp.Engine{Harness: e.Harness, Root: e.Root, Close: e.Close, Approve: cfg.Approve, Models: choices}, nil
	}
}
